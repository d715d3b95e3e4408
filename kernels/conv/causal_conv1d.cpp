// Registration of causal_conv1d_prefill (channel-first), causal_conv1d_prefill_nlc
// (channel-last) and causal_conv1d_update (decode step): cases, oracles, tolerances, bench.
#include "causal_conv1d.hpp"

#include "causal_conv1d_ncl.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "causal_conv1d_nlc.hpp"
#include "common.hpp"
#include "register.hpp"

namespace ingot::kernels {

void check_causal_conv1d(std::uint32_t channels, std::uint32_t length, std::uint32_t ksize) {
  if (ksize < 2 || ksize > 8) {
    throw std::invalid_argument("causal_conv1d: K must be in [2, 8], got " + std::to_string(ksize));
  }
  if (channels < 1 || length < 1) throw std::invalid_argument("causal_conv1d: C and L must be >= 1");
  if (length > (1u << 30)) {
    throw std::invalid_argument("causal_conv1d: L = " + std::to_string(length) +
                                " must be <= 2^30 (positions are 32-bit)");
  }
  // (Element counts are each kernel's build's to check, with the batch: the channel-first prefill has a 64-bit form.)
}

namespace {

using harness::param;
using harness::Params;

// A size parameter: an integer in [0, 2^31) (the checks above give the precise limits).
std::uint32_t u32_param(const Params& p, const std::string& key) {
  return bounded_param(p, key, 0, 0x7fffffff, 0, "causal_conv1d");
}

// V of a channel-first case (outputs per thread); absent: 8.
// The tuning options of the channel-first and channel-last prefill kernels, declared once (ingot list --options).
const std::vector<harness::OptionSpec>& causal_ncl_options() {
  static const std::vector<harness::OptionSpec> options{
      {"V", 1, 64, "outputs per thread (causal_conv1d_ncl.hpp); default 8"}, index_width_option()};
  return options;
}
const std::vector<harness::OptionSpec>& causal_nlc_options() {
  static const std::vector<harness::OptionSpec> options{
      {"T", 1, 64, "time steps per thread; default 16"},
      {"VC", 1, 64, "channels per thread (a vector where C allows it); default 4"}};
  return options;
}

std::uint32_t ncl_v_of(const Params& p) {
  return harness::option_value(causal_ncl_options(), p, "V", 8, "causal_conv1d_prefill");
}

CausalConv1dSpec prefill_spec_of(const Params& p, SeqLayout layout) {
  return CausalConv1dSpec{u32_param(p, "C"),     u32_param(p, "L"),     u32_param(p, "K"),      param(p, "bias") != 0,
                          param(p, "silu") != 0, param(p, "init") != 0, param(p, "final") != 0, layout};
}

CausalConv1dUpdateSpec update_spec_of(const Params& p) {
  return CausalConv1dUpdateSpec{u32_param(p, "C"), u32_param(p, "K"), param(p, "bias") != 0, param(p, "silu") != 0};
}

struct Opts {
  bool bias = false, silu = false, init = false, final = false;
};

Params prefill_shape(std::int64_t B, std::int64_t C, std::int64_t L, std::int64_t K, Opts o) {
  return {{"B", B},         {"C", C},         {"L", L},         {"K", K},
          {"bias", o.bias}, {"silu", o.silu}, {"init", o.init}, {"final", o.final}};
}

// T and VC of a channel-last case; absent keys take the defaults.
CausalNlcTiling nlc_tiling_of(const Params& p) {
  CausalNlcTiling t;
  auto get = [&](const char* key, std::uint32_t def) {
    return harness::option_value(causal_nlc_options(), p, key, def, "causal_conv1d_prefill_nlc");
  };
  t.T = get("T", t.T);
  t.VC = get("VC", t.VC);
  check_causal_nlc_tiling(t);
  return t;
}

Params with_i64(Params p) {
  p["i64"] = 1;
  return p;
}

Params with_tiling(Params p, std::int64_t T, std::int64_t VC = 0) {
  p["T"] = T;
  if (VC) p["VC"] = VC;
  return p;
}

Params update_shape(std::int64_t B, std::int64_t C, std::int64_t K, bool bias, bool silu) {
  return {{"B", B}, {"C", C}, {"K", K}, {"bias", bias}, {"silu", silu}};
}

double silu_f64(double z) { return z / (1.0 + std::exp(-z)); }

// A dot of K+1 terms in f32, rounded once to the dtype; SiLU (exp and a division, a few ulp in
// f32, with a derivative below 1.1) adds only f32-level relative error.
harness::Tolerance causal_tolerance(DType t, std::int64_t K) { return dot_tolerance(t, K + 1); }

// ------------------------------------------------------------------ prefill

void register_prefill(harness::Registry& r, SeqLayout layout) {
  const bool last = layout == SeqLayout::ChannelLast;
  harness::KernelSpec s;
  s.name = last ? "causal_conv1d_prefill_nlc" : "causal_conv1d_prefill";
  s.family = "conv";
  s.description = last ? "causal depthwise conv1d, channel-last: x[B,L,C] * w[C,K] -> y[B,L,C]; bias, SiLU, "
                         "initial/final state [B,C,K-1]"
                       : "causal depthwise conv1d, channel-first: x[B,C,L] * w[C,K] -> y[B,C,L]; bias, SiLU, "
                         "initial/final state [B,C,K-1]";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.spec_params = {"C", "L", "K", "bias", "silu", "init", "final"};
  if (!last) {
    for (const auto& o : causal_ncl_options()) s.add_option(o);
  }
  s.runtime_params = {"B"};
  const Opts none{}, all{true, true, true, true};
  s.tests = {
      {"k4_all_2x5x13", prefill_shape(2, 5, 13, 4, all)},   // 130 outputs
      {"k2_plain_3x17", prefill_shape(1, 3, 17, 2, none)},  // 51 outputs
      {"k3_bias_final_b3", prefill_shape(3, 4, 9, 3, {true, false, false, true})},
      {"k8_silu_init_b2", prefill_shape(2, 6, 37, 8, {false, true, true, false})},
      {"k8_all_L2_short", prefill_shape(2, 3, 2, 8, all)},                                // L < K-1: state from init
      {"k4_final_L1_noinit", prefill_shape(2, 3, 1, 4, {false, false, false, true})},     // zeros + x
      {"k4_bias_silu_2x40x50", prefill_shape(2, 40, 50, 4, {true, true, false, false})},  // 4000: 16 groups
      {"k8_all_3x7x41", prefill_shape(3, 7, 41, 8, all)},                                 // 861 outputs
  };
  s.bench = {
      {"B8_C4096_L4096_K4", prefill_shape(8, 4096, 4096, 4, none)},
      {"B8_C4096_L4096_K4_bias_silu_final", prefill_shape(8, 4096, 4096, 4, {true, true, false, true})},
  };
  if (!last) {
    // Channel-first: V outputs per thread, 8 (ncl_v_of) unless a case says otherwise.
    const auto v = [](Params p, std::int64_t V) {
      p["V"] = V;
      return p;
    };
    s.tests.push_back({"k4_bias_silu_v8_2x3x64", v(prefill_shape(2, 3, 64, 4, {true, true, false, false}), 8)});
    s.tests.push_back({"k4_all_v8_2x3x40", v(prefill_shape(2, 3, 40, 4, all), 8)});  // vector path + init
    s.tests.push_back({"k3_final_v8_L36", v(prefill_shape(2, 3, 36, 3, {false, false, false, true}), 8)});
    s.tests.push_back({"k4_all_v16_L40", v(prefill_shape(1, 3, 40, 4, all), 16)});  // L % V != 0
    s.tests.push_back({"k4_final_v8_L4", v(prefill_shape(2, 2, 4, 4, {false, false, false, true}), 8)});
    s.tests.push_back({"k8_all_v4_L24", v(prefill_shape(2, 3, 24, 8, all), 4)});
    s.tests.push_back({"k4_all_v1_2x5x13", v(prefill_shape(2, 5, 13, 4, all), 1)});
    s.bench.push_back({"B8_C4096_L4096_K4_v4", v(prefill_shape(8, 4096, 4096, 4, none), 4)});
    // 64-bit indexes (i64 = 1, the default where B * C * (L + 2V) reaches 2^32: rows of L outputs take at most
    // L + 2V threads' outputs).
    s.value_names["i64"] = {"u32index", "i64index"};
    s.tests.push_back({"k4_all_v8_2x3x40_i64", with_i64(v(prefill_shape(2, 3, 40, 4, all), 8))});
    s.tests.push_back({"k8_all_3x7x41_i64", with_i64(prefill_shape(3, 7, 41, 8, all))});
    s.build = [layout, name = s.name](DType t, const Params& p) {
      const auto sp = prefill_spec_of(p, layout);
      const auto batch = static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "B"), 0));
      const std::uint64_t per_batch = std::uint64_t{sp.channels} * (std::uint64_t{sp.length} + 2 * ncl_v_of(p));
      const bool wide = wide_index_param(p, batch * per_batch, name);
      if (wide) {
        check_i64_elements(name, batch, per_batch);
      } else {
        check_u32_elements(name, batch, std::uint64_t{sp.channels} * sp.length);
      }
      return trace_typed(t, wide ? name + "_i64" : name, p, [&](auto tag, KernelBuilder& k) {
        using T = typename decltype(tag)::type;
        if (wide) {
          causal_conv1d_prefill_ncl<T, i64>(k, sp, ncl_v_of(p));
        } else {
          causal_conv1d_prefill_ncl<T>(k, sp, ncl_v_of(p));
        }
      });
    };
    s.geometry = [layout](DType, const Params& p) {
      return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "B")) * param(p, "C") *
                                  causal_ncl_geom(prefill_spec_of(p, layout), ncl_v_of(p)).groups(),
                              256);
    };
  } else {
    // The channel-last kernel (causal_conv1d_nlc.hpp): T time steps x VC channels per thread.
    for (const auto& o : causal_nlc_options()) s.add_option(o);
    // L not a multiple of T, C not a multiple of VC (narrower vectors, scalars), T < K-1 (halo
    // from more than one group), one time group, state options.
    s.tests.push_back({"k4_all_2x16x13_t4", with_tiling(prefill_shape(2, 16, 13, 4, all), 4)});
    s.tests.push_back({"k4_plain_1x24x21_t8_vc8", with_tiling(prefill_shape(1, 24, 21, 4, none), 8, 8)});
    s.tests.push_back({"k8_all_2x12x11_t2", with_tiling(prefill_shape(2, 12, 11, 8, all), 2)});
    s.tests.push_back(
        {"k3_bias_final_3x6x10_t3", with_tiling(prefill_shape(3, 6, 10, 3, {true, false, false, true}), 3)});
    s.tests.push_back({"k8_all_L2_2x8x2_t4", with_tiling(prefill_shape(2, 8, 2, 8, all), 4)});
    s.tests.push_back(
        {"k4_silu_init_2x32x9_t16_vc4", with_tiling(prefill_shape(2, 32, 9, 4, {false, true, true, false}), 16, 4)});
    s.tests.push_back(
        {"k2_final_1x16x7_t1_vc1", with_tiling(prefill_shape(1, 16, 7, 2, {false, false, false, true}), 1, 1)});
    // Tiling variants of the bench shapes (the first two are the defaults: T16 VC4).
    for (const auto& [T, VC] : std::vector<std::pair<std::int64_t, std::int64_t>>{{8, 4}, {16, 2}}) {
      s.bench.push_back({"B8_C4096_L4096_K4_t" + std::to_string(T) + "_vc" + std::to_string(VC),
                         with_tiling(prefill_shape(8, 4096, 4096, 4, none), T, VC)});
    }
    s.build = [layout, name = s.name](DType t, const Params& p) {
      const auto sp = prefill_spec_of(p, layout);
      check_u32_elements(name, static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "B"), 0)),
                         std::uint64_t{sp.channels} * sp.length);
      const auto tiling = nlc_tiling_of(p);
      return trace_typed(t, name, p, [&](auto tag, KernelBuilder& k) {
        causal_conv1d_prefill_nlc<typename decltype(tag)::type>(k, sp, tiling);
      });
    };
    s.geometry = [layout](DType, const Params& p) {
      return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "B")) *
                                  causal_nlc_threads_per_batch(prefill_spec_of(p, layout), nlc_tiling_of(p)),
                              256);
    };
  }
  s.scalar_params = {{"batch", "B"}};
  s.inputs = [](DType t, const Params& p, std::uint64_t seed) {
    harness::HostData d;
    const auto B = param(p, "B"), C = param(p, "C"), L = param(p, "L"), K = param(p, "K");
    d.scalars["batch"] = static_cast<double>(B);
    d.buffers["x"] = random_values(t, static_cast<std::size_t>(B * C * L), seed);
    d.buffers["w"] = random_values(t, static_cast<std::size_t>(C * K), seed + 1);
    if (param(p, "bias")) d.buffers["bias"] = random_values(t, static_cast<std::size_t>(C), seed + 2);
    if (param(p, "init"))
      d.buffers["init_state"] = random_values(t, static_cast<std::size_t>(B * C * (K - 1)), seed + 3);
    return d;
  };
  s.oracle = [layout](DType, const Params& p, const harness::HostData& d) {
    const auto sp = prefill_spec_of(p, layout);
    const std::int64_t B = param(p, "B"), C = sp.channels, L = sp.length, K = sp.ksize, S = K - 1;
    const auto& x = d.buffers.at("x");
    const auto& w = d.buffers.at("w");
    const auto x_at = [&](std::int64_t b, std::int64_t c, std::int64_t t) {
      return layout == SeqLayout::ChannelLast ? x[(b * L + t) * C + c] : x[(b * C + c) * L + t];
    };
    // xx: the sequence extended to the left by the initial state (or zeros).
    const auto xx = [&](std::int64_t b, std::int64_t c, std::int64_t pos) {
      if (pos >= 0) return x_at(b, c, pos);
      return sp.init_state ? d.buffers.at("init_state")[(b * C + c) * S + (S + pos)] : 0.0;
    };
    std::vector<double> y(static_cast<std::size_t>(B * C * L));
    std::vector<double> fs(static_cast<std::size_t>(B * C * S));
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t c = 0; c < C; ++c) {
        for (std::int64_t t = 0; t < L; ++t) {
          double z = sp.bias ? d.buffers.at("bias")[c] : 0.0;
          for (std::int64_t k = 0; k < K; ++k) z += w[c * K + k] * xx(b, c, t - S + k);
          const std::int64_t at = layout == SeqLayout::ChannelLast ? (b * L + t) * C + c : (b * C + c) * L + t;
          y[at] = sp.silu ? silu_f64(z) : z;
        }
        for (std::int64_t j = 0; j < S; ++j) fs[(b * C + c) * S + j] = xx(b, c, L - S + j);
      }
    }
    std::map<std::string, std::vector<double>> out{{"y", std::move(y)}};
    if (sp.final_state) out["final_state"] = std::move(fs);
    return out;
  };
  s.tolerance = [](DType t, const Params& p) { return causal_tolerance(t, param(p, "K")); };
  s.bytes = [](DType t, const Params& p) {
    const double B = static_cast<double>(param(p, "B")), C = static_cast<double>(param(p, "C"));
    const double L = static_cast<double>(param(p, "L")), K = static_cast<double>(param(p, "K"));
    const double state = B * C * (K - 1);
    return static_cast<double>(dtype_size(t)) * (2.0 * B * C * L + C * K + (param(p, "bias") ? C : 0.0) +
                                                 (param(p, "init") ? state : 0.0) + (param(p, "final") ? state : 0.0));
  };
  // 2K per output (K multiplies, K-1 adds, one bias add or none); SiLU's exp and division are
  // not counted.
  s.flops = [](const Params& p) {
    return 2.0 * static_cast<double>(param(p, "B")) * param(p, "C") * param(p, "L") * param(p, "K");
  };
  r.add(std::move(s));
}

// ------------------------------------------------------------------ decode step

void register_update(harness::Registry& r) {
  harness::KernelSpec s;
  s.name = "causal_conv1d_update";
  s.family = "conv";
  s.description =
      "causal depthwise conv1d decode step: x[B,C], w[C,K], state[B,C,K-1] (in place) -> y[B,C]; "
      "bias, SiLU";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.spec_params = {"C", "K", "bias", "silu"};
  s.runtime_params = {"B"};
  s.tests = {
      {"k4_bias_silu_2x300", update_shape(2, 300, 4, true, true)},  // 600 outputs: partial 3rd group
      {"k2_1x7", update_shape(1, 7, 2, false, false)},
      {"k3_bias_3x5", update_shape(3, 5, 3, true, false)},
      {"k8_silu_4x9", update_shape(4, 9, 8, false, true)},
      {"k8_bias_silu_5x51", update_shape(5, 51, 8, true, true)},
  };
  s.bench = {
      {"B8_C4096_K4_bias_silu", update_shape(8, 4096, 4, true, true)},
      {"B64_C4096_K4_bias_silu", update_shape(64, 4096, 4, true, true)},
  };
  s.build = [](DType t, const Params& p) {
    const auto sp = update_spec_of(p);
    check_u32_elements("causal_conv1d_update", static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "B"), 0)),
                       std::uint64_t{sp.channels} * (sp.ksize - 1));
    return trace_typed(t, "causal_conv1d_update", p,
                       [&](auto tag, KernelBuilder& k) { causal_conv1d_update<typename decltype(tag)::type>(k, sp); });
  };
  s.geometry = [](DType, const Params& p) {
    return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "B")) * param(p, "C"), 256);
  };
  s.scalar_params = {{"batch", "B"}};
  s.inputs = [](DType t, const Params& p, std::uint64_t seed) {
    harness::HostData d;
    const auto B = param(p, "B"), C = param(p, "C"), K = param(p, "K");
    d.scalars["batch"] = static_cast<double>(B);
    d.buffers["x"] = random_values(t, static_cast<std::size_t>(B * C), seed);
    d.buffers["w"] = random_values(t, static_cast<std::size_t>(C * K), seed + 1);
    if (param(p, "bias")) d.buffers["bias"] = random_values(t, static_cast<std::size_t>(C), seed + 2);
    d.buffers["state"] = random_values(t, static_cast<std::size_t>(B * C * (K - 1)), seed + 3);
    return d;
  };
  s.oracle = [](DType, const Params& p, const harness::HostData& d) {
    const auto sp = update_spec_of(p);
    const std::int64_t B = param(p, "B"), C = sp.channels, K = sp.ksize, S = K - 1;
    const auto& x = d.buffers.at("x");
    const auto& w = d.buffers.at("w");
    const auto& state = d.buffers.at("state");
    std::vector<double> y(static_cast<std::size_t>(B * C));
    std::vector<double> next(state.size());
    for (std::int64_t bc = 0; bc < B * C; ++bc) {
      const std::int64_t c = bc % C;
      double z = sp.bias ? d.buffers.at("bias")[c] : 0.0;
      for (std::int64_t k = 0; k < S; ++k) z += w[c * K + k] * state[bc * S + k];
      z += w[c * K + S] * x[bc];
      y[bc] = sp.silu ? silu_f64(z) : z;
      for (std::int64_t j = 0; j + 1 < S; ++j) next[bc * S + j] = state[bc * S + j + 1];
      next[bc * S + S - 1] = x[bc];
    }
    return std::map<std::string, std::vector<double>>{{"y", std::move(y)}, {"state", std::move(next)}};
  };
  s.tolerance = [](DType t, const Params& p) { return causal_tolerance(t, param(p, "K")); };
  s.bytes = [](DType t, const Params& p) {
    const double B = static_cast<double>(param(p, "B")), C = static_cast<double>(param(p, "C"));
    const double K = static_cast<double>(param(p, "K"));
    // x read, y written, the state read and written, weights (and bias) read once.
    return static_cast<double>(dtype_size(t)) *
           (2.0 * B * C + 2.0 * B * C * (K - 1) + C * K + (param(p, "bias") ? C : 0.0));
  };
  s.flops = [](const Params& p) { return 2.0 * static_cast<double>(param(p, "B")) * param(p, "C") * param(p, "K"); };
  r.add(std::move(s));
}

}  // namespace

void register_causal_conv1d(harness::Registry& r) {
  register_prefill(r, SeqLayout::ChannelFirst);
  register_prefill(r, SeqLayout::ChannelLast);
  register_update(r);
}

}  // namespace ingot::kernels
