// Registration of the block-scaled convolutions (conv2d_blockscaled, conv3d_blockscaled,
// depthwise_conv2d_blockscaled): one kernel per operation, the weight format as the
// specialisation parameter "fmt" (kernels/quant/format.hpp numbers; variant and traced kernel
// names carry the format's name), cases in every format, an f64 oracle over the host-dequantised
// weights, bench cases at the dense twins' production shapes in every format.
#include "blockscaled_conv.hpp"

#include <array>
#include <string>
#include <vector>

#include "common.hpp"
#include "quant/quantise.hpp"
#include "register.hpp"

namespace ingot::kernels {

namespace {

using harness::param;
using harness::Params;
using quant::BlockFormat;

struct OpDesc {
  std::string name;
  std::string description;
  std::size_t rank;  // spatial axes
  bool depthwise;    // groups = C = O, weight [C, K...]
};

// Case-parameter keys of spatial axis a of r: "D", "H", "W" and suffixes "d", "h", "w".
std::string axis_suffix(std::size_t a, std::size_t r) { return std::string(1, "dhw"[3 - r + a]); }
std::string axis_size_key(std::size_t a, std::size_t r) { return std::string(1, "DHW"[3 - r + a]); }

ConvSpec conv_spec(const OpDesc& op, const Params& p) {
  ConvSpec s;
  s.name = op.name;
  s.in_channels = static_cast<std::uint32_t>(param(p, "C"));
  s.out_channels = op.depthwise ? s.in_channels : static_cast<std::uint32_t>(param(p, "O"));
  s.groups = op.depthwise ? s.in_channels : 1;
  for (std::size_t a = 0; a < op.rank; ++a) {
    const std::string x = axis_suffix(a, op.rank);
    s.in_size.push_back(static_cast<std::uint32_t>(param(p, axis_size_key(a, op.rank))));
    s.ksize.push_back(static_cast<std::uint32_t>(param(p, "k" + x)));
    s.stride.push_back(static_cast<std::uint32_t>(param(p, "stride_" + x)));
    s.pad.push_back(static_cast<std::uint32_t>(param(p, "pad_" + x)));
    s.dilation.push_back(static_cast<std::uint32_t>(param(p, "dil_" + x)));
  }
  s.bias = param(p, "bias") != 0;
  s.validate();
  return s;
}

quant::BlockLayout layout_of(const ConvSpec& s, const Params& p) {
  return quant::BlockLayout{quant::block_format(param(p, "fmt")), s.out_channels, s.weight_cols()};
}

// One geometry: per-axis sizes, kernel, stride, pad, dilation (outermost axis first).
struct Geometry {
  std::int64_t B, C, O;  // O ignored for depthwise
  std::vector<std::int64_t> size, k, stride, pad, dil;
  bool bias;
};

Params case_params(const OpDesc& op, BlockFormat f, const Geometry& g) {
  Params p{{"fmt", static_cast<std::int64_t>(f)}, {"B", g.B}, {"C", g.C}, {"bias", g.bias ? 1 : 0}};
  if (!op.depthwise) p["O"] = g.O;
  for (std::size_t a = 0; a < op.rank; ++a) {
    const std::string x = axis_suffix(a, op.rank);
    p[axis_size_key(a, op.rank)] = g.size[a];
    p["k" + x] = g.k[a];
    p["stride_" + x] = g.stride[a];
    p["pad_" + x] = g.pad[a];
    p["dil_" + x] = g.dil[a];
  }
  return p;
}

std::vector<std::string> spec_param_names(const OpDesc& op) {
  std::vector<std::string> v{"fmt", "C"};
  if (!op.depthwise) v.emplace_back("O");
  for (std::size_t a = 0; a < op.rank; ++a) v.push_back(axis_size_key(a, op.rank));
  for (const char* key : {"k", "stride_", "pad_", "dil_"}) {
    for (std::size_t a = 0; a < op.rank; ++a) v.push_back(key + axis_suffix(a, op.rank));
  }
  v.emplace_back("bias");
  return v;
}

// y = conv(x, w) (+ bias) in f64, channels-first, any rank and groups; w is [O, weight_cols].
std::vector<double> reference_conv(const ConvSpec& s, std::uint64_t B, const std::vector<double>& x,
                                   const std::vector<float>& w, const std::vector<double>* bias) {
  const std::size_t R = s.rank();
  const auto P = s.out_size();
  const std::uint64_t out_sp = s.out_spatial(), in_sp = s.in_spatial(), taps = s.taps();
  const std::uint64_t Cg = s.in_per_group(), Og = s.out_per_group(), wcols = s.weight_cols();
  std::vector<double> y(B * s.out_per_batch());
  std::vector<std::uint64_t> op(R), t(R);
  for (std::uint64_t b = 0; b < B; ++b) {
    for (std::uint64_t o = 0; o < s.out_channels; ++o) {
      const std::uint64_t c0 = (o / Og) * Cg;
      for (std::uint64_t q = 0; q < out_sp; ++q) {
        for (std::size_t a = R, rem = q; a-- > 0;) {
          op[a] = rem % P[a];
          rem /= P[a];
        }
        double acc = bias ? (*bias)[o] : 0.0;
        for (std::uint64_t ci = 0; ci < Cg; ++ci) {
          for (std::uint64_t tap = 0; tap < taps; ++tap) {
            std::uint64_t in_off = 0;
            bool inside = true;
            for (std::size_t a = R, rem = tap; a-- > 0;) {
              t[a] = rem % s.ksize[a];
              rem /= s.ksize[a];
            }
            for (std::size_t a = 0; a < R; ++a) {
              const std::int64_t pos = static_cast<std::int64_t>(op[a] * s.stride[a] + t[a] * s.dilation[a]) -
                                       static_cast<std::int64_t>(s.pad[a]);
              inside = inside && pos >= 0 && pos < static_cast<std::int64_t>(s.in_size[a]);
              in_off = in_off * s.in_size[a] + static_cast<std::uint64_t>(std::max<std::int64_t>(pos, 0));
            }
            if (!inside) continue;
            acc +=
                x[(b * s.in_channels + c0 + ci) * in_sp + in_off] * static_cast<double>(w[o * wcols + ci * taps + tap]);
          }
        }
        y[(b * s.out_channels + o) * out_sp + q] = acc;
      }
    }
  }
  return y;
}

std::vector<std::string> format_names() {
  std::vector<std::string> v;
  v.reserve(quant::kNumBlockFormats);
  for (int i = 0; i < quant::kNumBlockFormats; ++i) v.emplace_back(quant::format_info(quant::block_format(i)).name);
  return v;
}

void register_op(harness::Registry& r, const OpDesc& op, const std::vector<std::pair<std::string, Geometry>>& test_geos,
                 const std::vector<std::pair<std::string, Geometry>>& bench_geos) {
  harness::KernelSpec s;
  s.name = op.name;
  s.family = "conv";
  s.description = op.description;
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.spec_params = spec_param_names(op);
  s.runtime_params = {"B"};
  s.value_names["fmt"] = format_names();
  // Every format once, cycling over the test geometries (nvfp4 first: the first variant, which
  // `ingot build --first-variant` compiles, then decodes E2M1 nibbles, an E4M3 scale and the
  // global scale).
  const std::array<BlockFormat, quant::kNumBlockFormats> order{
      BlockFormat::nvfp4,        BlockFormat::int8_g32_f32, BlockFormat::int8_g32_f16, BlockFormat::int4_g32_f32,
      BlockFormat::int4_g32_f16, BlockFormat::mxfp8,        BlockFormat::mxfp4};
  const std::size_t n_cases = std::max(order.size(), test_geos.size() + 2);
  for (std::size_t i = 0; i < n_cases; ++i) {
    const BlockFormat f = order[i % order.size()];
    const auto& [gname, g] = test_geos[i % test_geos.size()];
    s.tests.push_back({std::string(quant::format_info(f).name) + "_" + gname, case_params(op, f, g)});
  }
  for (const auto& [gname, g] : bench_geos) {
    for (BlockFormat f : order)
      s.bench.push_back({std::string(quant::format_info(f).name) + "_" + gname, case_params(op, f, g)});
  }
  s.build = [op](DType t, const Params& p) {
    const ConvSpec cs = conv_spec(op, p);
    cs.check_batch(static_cast<std::uint64_t>(param(p, "B")));
    const BlockFormat f = quant::block_format(param(p, "fmt"));
    return trace_typed(t, op.name + "_" + std::string(quant::format_info(f).name), p,
                       [&](auto tag, KernelBuilder& k) { blockscaled_conv<typename decltype(tag)::type>(k, cs, f); });
  };
  s.geometry = [op](const Params& p) {
    return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "B")) * conv_spec(op, p).out_per_batch(), 256);
  };
  s.inputs = [op](DType t, const Params& p, std::uint64_t seed) {
    const ConvSpec cs = conv_spec(op, p);
    const auto B = static_cast<std::uint64_t>(param(p, "B"));
    const quant::BlockLayout l = layout_of(cs, p);
    harness::HostData d;
    d.scalars["batch"] = static_cast<double>(B);
    d.buffers["x"] = random_values(t, B * cs.in_per_batch(), seed);
    // Dense weights in [-1, 1], each filter row at its own magnitude (1, 1/2 or 1/4) so that
    // block scales differ between rows as well as between blocks.
    std::vector<double> w = random_values(DType::f32, l.rows * l.cols, seed + 1);
    for (std::uint64_t i = 0; i < w.size(); ++i) w[i] = std::ldexp(w[i], -static_cast<int>(i / l.cols % 3));
    auto q = quant::quantise(l.format, l.rows, l.cols, w);
    d.buffers["wq"] = std::move(q.codes);
    d.buffers["wscale"] = std::move(q.scales);
    if (l.info().global_scale) d.buffers["wgscale"] = {q.global_scale};
    if (cs.bias) d.buffers["bias"] = random_values(t, cs.out_channels, seed + 2);
    return d;
  };
  s.oracle = [op](DType, const Params& p, const harness::HostData& d) {
    const ConvSpec cs = conv_spec(op, p);
    quant::QuantisedMatrix q;
    q.layout = layout_of(cs, p);
    q.codes = d.buffers.at("wq");
    q.scales = d.buffers.at("wscale");
    if (q.layout.info().global_scale) q.global_scale = static_cast<float>(d.buffers.at("wgscale").at(0));
    const auto w = quant::dequantise(q);
    return std::map<std::string, std::vector<double>>{
        {"y", reference_conv(cs, static_cast<std::uint64_t>(param(p, "B")), d.buffers.at("x"), w,
                             cs.bias ? &d.buffers.at("bias") : nullptr)}};
  };
  s.tolerance = [op](DType t, const Params& p) {
    return dot_tolerance(t, static_cast<std::int64_t>(conv_spec(op, p).weight_cols()) + 1);
  };
  s.bytes = [op](DType t, const Params& p) {
    const ConvSpec cs = conv_spec(op, p);
    const auto B = static_cast<double>(param(p, "B"));
    return static_cast<double>(dtype_size(t)) *
               (B * static_cast<double>(cs.in_per_batch() + cs.out_per_batch()) + (cs.bias ? cs.out_channels : 0)) +
           static_cast<double>(layout_of(cs, p).bytes());
  };
  s.flops = [op](const Params& p) {
    const ConvSpec cs = conv_spec(op, p);
    return 2.0 * static_cast<double>(param(p, "B")) * static_cast<double>(cs.out_per_batch()) *
           static_cast<double>(cs.weight_cols());
  };
  r.add(std::move(s));
}

}  // namespace

void register_blockscaled_conv(harness::Registry& r) {
  // Test geometries: every output count is not a multiple of the 256-thread group, and every
  // reduction length but the "exact" ones is not a multiple of the block (a padded last block).
  const OpDesc conv2d{"conv2d_blockscaled",
                      "conv2d, block-scaled weights (fmt: int8/int4 g32 f32|f16, mxfp8, mxfp4, nvfp4): x[B,C,H,W] * "
                      "W[O,C,kh,kw] (+bias[O]) -> y[B,O,P,Q]; stride, pad, dilation per axis",
                      2, false};
  register_op(
      r, conv2d,
      {
          {"c3_o5_7x7_k3_pad1", {1, 3, 5, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false}},       // 245 out, R 27
          {"b2_strided_dilated_bias", {2, 4, 3, {9, 8}, {3, 2}, {2, 1}, {1, 0}, {1, 2}, true}},  // 180 out, R 24
          {"c5_o4_6x6_k3_bias", {1, 5, 4, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, true}},        // 144 out, R 45
          {"exact_c32_k1", {1, 32, 3, {5, 5}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, false}},           // 75 out, R 32
      },
      {{"N32_C256_K256_56x56_k3", {32, 256, 256, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false}}});
  const OpDesc conv3d{"conv3d_blockscaled",
                      "conv3d, block-scaled weights (fmt: int8/int4 g32 f32|f16, mxfp8, mxfp4, nvfp4): x[B,C,D,H,W] * "
                      "W[O,C,kd,kh,kw] (+bias[O]) -> y[B,O,P,Q,R]; stride, pad, dilation per axis",
                      3, false};
  register_op(
      r, conv3d,
      {
          {"c2_o3_4x5x5_k3_pad1",
           {1, 2, 3, {4, 5, 5}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, false}},  // 300 out, R 54
          {"b2_strided_dilated_bias",
           {2, 3, 2, {5, 6, 4}, {3, 2, 2}, {2, 1, 2}, {1, 0, 1}, {1, 2, 1}, true}},  // 2*2*3*4*3 = 144 out, R 36
          {"c1_o4_k233_bias", {1, 1, 4, {3, 4, 6}, {2, 3, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, true}},  // 64 out, R 18
          {"exact_c4_k2", {1, 4, 3, {3, 3, 4}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, false}},     // 36 out, R 32
      },
      {{"N4_C64_K64_16x56x56_k3", {4, 64, 64, {16, 56, 56}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, false}}});
  const OpDesc dw2d{"depthwise_conv2d_blockscaled",
                    "depthwise conv2d, block-scaled weights (fmt: int8/int4 g32 f32|f16, mxfp8, mxfp4, nvfp4): "
                    "x[B,C,H,W] * W[C,kh,kw] (+bias[C]) -> y[B,C,P,Q]; stride, pad, dilation per axis",
                    2, true};
  register_op(
      r, dw2d,
      {
          {"c5_9x9_k3_pad1", {1, 5, 0, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false}},           // 405 out, R 9
          {"b2_strided_dilated_bias", {2, 3, 0, {10, 7}, {3, 2}, {2, 1}, {1, 1}, {1, 2}, true}},  // 2*3*5*6 = 180 out
          {"c4_9x9_k5_pad2_bias", {1, 4, 0, {9, 9}, {5, 5}, {1, 1}, {2, 2}, {1, 1}, true}},       // 324 out, R 25
          {"exact_k4x8", {1, 3, 0, {6, 12}, {4, 8}, {1, 1}, {0, 0}, {1, 1}, false}},              // 45 out, R 32
      },
      {{"N32_C384_56x56_k3", {32, 384, 0, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false}}});
}

}  // namespace ingot::kernels
