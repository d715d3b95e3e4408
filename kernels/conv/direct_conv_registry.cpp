// The shared registration of the direct (dense) convolutions: parameters, oracle, inputs,
// tolerances and bench arithmetic for every kernel built on direct_conv.hpp.
#include "direct_conv_registry.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "common.hpp"
#include "register.hpp"

namespace ingot::kernels {

namespace {

using harness::param;
using harness::Params;

// Axis names, outermost first.
std::vector<std::string> axes(std::size_t rank) {
  switch (rank) {
    case 1: return {"l"};
    case 2: return {"h", "w"};
    case 3: return {"d", "h", "w"};
    default: break;
  }
  std::vector<std::string> v;
  for (std::size_t a = 0; a < rank; ++a) v.push_back("a" + std::to_string(a));
  return v;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return s;
}
// Kernel-size key of an axis: "kh"; for rank 1 just "k".
std::string k_key(std::size_t rank, const std::string& ax) { return rank == 1 ? "k" : "k" + ax; }

std::uint32_t u32_param(const Params& p, const std::string& key, const std::string& kernel) {
  const std::int64_t v = param(p, key);
  if (v < 0 || v > static_cast<std::int64_t>(UINT32_MAX)) {
    throw std::invalid_argument(kernel + ": parameter " + key + " = " + std::to_string(v) + " is out of range");
  }
  return static_cast<std::uint32_t>(v);
}

}  // namespace

std::vector<std::string> conv_spec_params(const ConvForm& f) {
  std::vector<std::string> v{"C"};
  if (f.channels != ConvChannels::Depthwise) v.emplace_back("O");
  if (f.channels == ConvChannels::Grouped) v.emplace_back("groups");
  const auto ax = axes(f.rank);
  for (const auto& a : ax) v.push_back(upper(a));
  for (const auto& a : ax) v.push_back(k_key(f.rank, a));
  for (const char* what : {"stride_", "pad_", "dil_"}) {
    for (const auto& a : ax) v.push_back(what + a);
  }
  v.emplace_back("bias");
  return v;
}

Params conv_params(const ConvForm& f, const ConvCase& c) {
  const std::size_t r = f.rank;
  auto need = [&](const std::vector<std::int64_t>& v, const char* what, bool may_be_empty) {
    if (v.size() != r && !(may_be_empty && v.empty())) {
      throw std::invalid_argument(f.name + ": case " + what + " needs " + std::to_string(r) + " entries");
    }
  };
  need(c.size, "size", false);
  need(c.k, "k", false);
  need(c.stride, "stride", true);
  need(c.pad, "pad", true);
  need(c.dil, "dil", true);
  Params p{{"B", c.B}, {"C", c.C}, {"bias", c.bias ? 1 : 0}};
  if (f.channels != ConvChannels::Depthwise) p["O"] = c.O == 0 ? c.C : c.O;
  if (f.channels == ConvChannels::Grouped) p["groups"] = c.groups;
  const auto ax = axes(r);
  for (std::size_t a = 0; a < r; ++a) {
    p[upper(ax[a])] = c.size[a];
    p[k_key(r, ax[a])] = c.k[a];
    p["stride_" + ax[a]] = c.stride.empty() ? 1 : c.stride[a];
    p["pad_" + ax[a]] = c.pad.empty() ? 0 : c.pad[a];
    p["dil_" + ax[a]] = c.dil.empty() ? 1 : c.dil[a];
  }
  return p;
}

Params conv_params(const ConvForm& f, const ConvCase& c,
                   const std::vector<std::pair<std::string, std::int64_t>>& extra) {
  Params p = conv_params(f, c);
  for (const auto& [key, v] : extra) p[key] = v;
  return p;
}

ConvSpec conv_spec(const ConvForm& f, const Params& p) {
  ConvSpec s;
  s.name = f.name;
  s.layout = f.layout;
  s.in_channels = u32_param(p, "C", f.name);
  switch (f.channels) {
    case ConvChannels::Dense:
      s.out_channels = u32_param(p, "O", f.name);
      s.groups = 1;
      break;
    case ConvChannels::Grouped:
      s.out_channels = u32_param(p, "O", f.name);
      s.groups = u32_param(p, "groups", f.name);
      break;
    case ConvChannels::Depthwise:
      s.out_channels = s.in_channels;
      s.groups = s.in_channels;
      break;
  }
  for (const auto& a : axes(f.rank)) {
    s.in_size.push_back(u32_param(p, upper(a), f.name));
    s.ksize.push_back(u32_param(p, k_key(f.rank, a), f.name));
    s.stride.push_back(u32_param(p, "stride_" + a, f.name));
    s.pad.push_back(u32_param(p, "pad_" + a, f.name));
    s.dilation.push_back(u32_param(p, "dil_" + a, f.name));
  }
  s.bias = param(p, "bias") != 0;
  s.validate();
  return s;
}

std::vector<double> conv_reference(const ConvSpec& s, std::int64_t batch, const std::vector<double>& x,
                                   const std::vector<double>& w, const std::vector<double>* bias) {
  const std::size_t R = s.rank();
  const auto P = s.out_size();
  const std::int64_t C = s.in_channels, O = s.out_channels, Cg = s.in_per_group(), Og = s.out_per_group();
  const auto in_sp = static_cast<std::int64_t>(s.in_spatial()), out_sp = static_cast<std::int64_t>(s.out_spatial());
  const auto taps = static_cast<std::int64_t>(s.taps());
  const bool last = s.layout == ConvLayout::ChannelsLast;
  std::vector<double> y(static_cast<std::size_t>(batch * O * out_sp));
  std::vector<std::int64_t> op(R), tp(R);
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t oc = 0; oc < O; ++oc) {
      const std::int64_t g = oc / Og;
      for (std::int64_t os = 0; os < out_sp; ++os) {
        for (std::size_t a = R, rest = static_cast<std::size_t>(os); a-- > 0;) {
          op[a] = static_cast<std::int64_t>(rest % P[a]);
          rest /= P[a];
        }
        double acc = bias ? (*bias)[static_cast<std::size_t>(oc)] : 0.0;
        for (std::int64_t ci = 0; ci < Cg; ++ci) {
          const std::int64_t c = g * Cg + ci;
          for (std::int64_t t = 0; t < taps; ++t) {
            for (std::size_t a = R, rest = static_cast<std::size_t>(t); a-- > 0;) {
              tp[a] = static_cast<std::int64_t>(rest % s.ksize[a]);
              rest /= s.ksize[a];
            }
            std::int64_t isp = 0;
            bool inside = true;
            for (std::size_t a = 0; a < R; ++a) {
              const std::int64_t pos = op[a] * s.stride[a] + tp[a] * s.dilation[a] - s.pad[a];
              inside = inside && pos >= 0 && pos < s.in_size[a];
              isp = isp * s.in_size[a] + pos;
            }
            if (!inside) continue;
            const std::int64_t xi = last ? (b * in_sp + isp) * C + c : (b * C + c) * in_sp + isp;
            const std::int64_t wi = (oc * Cg + ci) * taps + t;
            acc += x[static_cast<std::size_t>(xi)] * w[static_cast<std::size_t>(wi)];
          }
        }
        const std::int64_t yi = last ? (b * out_sp + os) * O + oc : (b * O + oc) * out_sp + os;
        y[static_cast<std::size_t>(yi)] = acc;
      }
    }
  }
  return y;
}

bool wide_window(const ConvSpec& s) {
  for (std::size_t a = 0; a < s.rank(); ++a) {
    if (std::uint64_t{s.dilation[a]} * (s.ksize[a] - 1) + 1 > kMaxTiledSpan) return true;
  }
  return false;
}

void route_wide_windows(harness::KernelSpec& s, const ConvForm& f) {
  const auto option_named = [options = s.option_names()](const Params& p) {
    for (const auto& key : options) {
      if (p.count(key)) return key;
    }
    return std::string();
  };
  s.build = [f, option_named, tiled = s.build](DType t, const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    if (!wide_window(sp)) return tiled(t, p);
    if (const std::string key = option_named(p); !key.empty()) {
      throw std::invalid_argument(f.name + ": " + key + " is an option of the tiled kernels, which take windows " +
                                  "spanning at most " + std::to_string(kMaxTiledSpan) +
                                  " rows and columns (dilation x (k - 1) + 1); this window is wider: drop " + key +
                                  " (the direct kernel runs it)");
    }
    sp.check_batch(static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "B"), 0)));
    return trace_typed(t, f.name, p,
                       [&](auto tag, KernelBuilder& k) { direct_conv<typename decltype(tag)::type>(k, sp); });
  };
  s.geometry = [f, tiled = s.geometry](DType t, const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    if (!wide_window(sp)) return tiled(t, p);
    return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "B")) * sp.out_per_batch(), 256);
  };
}

harness::KernelSpec direct_conv_kernel(const ConvForm& f, std::string description,
                                       const std::vector<std::pair<std::string, ConvCase>>& tests,
                                       const std::vector<std::pair<std::string, ConvCase>>& bench) {
  harness::KernelSpec s;
  s.name = f.name;
  s.family = "conv";
  s.description = std::move(description);
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.spec_params = conv_spec_params(f);
  s.runtime_params = {"B"};
  for (const auto& [name, c] : tests) s.tests.push_back({name, conv_params(f, c)});
  for (const auto& [name, c] : bench) s.bench.push_back({name, conv_params(f, c)});

  s.build = [f](DType t, const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    sp.check_batch(static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "B"), 0)));
    return trace_typed(t, f.name, p,
                       [&](auto tag, KernelBuilder& k) { direct_conv<typename decltype(tag)::type>(k, sp); });
  };
  s.geometry = [f](DType, const Params& p) {
    return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "B")) * conv_spec(f, p).out_per_batch(), 256);
  };
  s.scalar_params = {{"batch", "B"}};
  s.shapes = [f](DType, const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    const auto B = static_cast<std::uint64_t>(param(p, "B"));
    std::vector<std::uint64_t> x{B}, y{B}, w{sp.out_channels, sp.in_per_group()};
    if (f.layout == ConvLayout::ChannelsFirst) x.push_back(sp.in_channels), y.push_back(sp.out_channels);
    for (std::size_t a = 0; a < sp.rank(); ++a) x.push_back(sp.in_size[a]), y.push_back(sp.out_len(a));
    if (f.layout != ConvLayout::ChannelsFirst) x.push_back(sp.in_channels), y.push_back(sp.out_channels);
    for (auto k : sp.ksize) w.push_back(k);
    std::map<std::string, std::vector<std::uint64_t>> m{{"x", x}, {"w", w}, {"y", y}};
    if (sp.bias) m["bias"] = {sp.out_channels};
    return m;
  };
  s.inputs = [f](DType t, const Params& p, std::uint64_t seed) {
    const ConvSpec sp = conv_spec(f, p);
    const auto B = static_cast<std::size_t>(param(p, "B"));
    harness::HostData d;
    d.scalars["batch"] = static_cast<double>(B);
    d.buffers["x"] = random_values(t, B * sp.in_per_batch(), seed);
    d.buffers["w"] = random_values(t, sp.weight_count(), seed + 1);
    if (sp.bias) d.buffers["bias"] = random_values(t, sp.out_channels, seed + 2);
    return d;
  };
  s.oracle = [f](DType, const Params& p, const harness::HostData& d) {
    const ConvSpec sp = conv_spec(f, p);
    const std::vector<double>* bias = sp.bias ? &d.buffers.at("bias") : nullptr;
    return std::map<std::string, std::vector<double>>{
        {"y", conv_reference(sp, param(p, "B"), d.buffers.at("x"), d.buffers.at("w"), bias)}};
  };
  s.tolerance = [f](DType t, const Params& p) {
    return dot_tolerance(t, static_cast<std::int64_t>(conv_spec(f, p).weight_cols()) + 1);
  };
  s.bytes = [f](DType t, const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    const auto B = static_cast<double>(param(p, "B"));
    return static_cast<double>(dtype_size(t)) *
           (B * static_cast<double>(sp.in_per_batch()) + static_cast<double>(sp.weight_count()) +
            (sp.bias ? sp.out_channels : 0) + B * static_cast<double>(sp.out_per_batch()));
  };
  s.flops = [f](const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    return 2.0 * static_cast<double>(param(p, "B")) * static_cast<double>(sp.out_per_batch()) *
           static_cast<double>(sp.weight_cols());
  };
  return s;
}

}  // namespace ingot::kernels
