// Registration of the block-scaled convolutions (conv2d_blockscaled, conv3d_blockscaled,
// depthwise_conv2d_blockscaled): one kernel per operation, the weight format as the
// specialisation parameter "fmt" (kernels/quant/format.hpp numbers; variant and traced kernel
// names carry the format's name), cases in every format, an f64 oracle over the host-dequantised
// weights, bench cases at the dense twins' production shapes in every format.
#include "blockscaled_conv.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common.hpp"
#include "direct_conv_registry.hpp"
#include "quant/quantise.hpp"
#include "register.hpp"

namespace ingot::kernels {

namespace {

using harness::param;
using harness::Params;
using quant::BlockFormat;

quant::BlockLayout layout_of(const ConvSpec& s, const Params& p) {
  return quant::BlockLayout{quant::block_format(param(p, "fmt")), s.out_channels, s.weight_cols()};
}

std::vector<std::string> format_names() {
  std::vector<std::string> v;
  v.reserve(quant::kNumBlockFormats);
  for (int i = 0; i < quant::kNumBlockFormats; ++i) v.emplace_back(quant::format_info(quant::block_format(i)).name);
  return v;
}

// The dense twin's registry entry (parameters, geometry, tolerance, flops: direct_conv_registry),
// with the weights, the cases, build, inputs, oracle and bytes of the block-scaled form.
harness::KernelSpec blockscaled_kernel(const ConvForm& f, std::string description,
                                       const std::vector<std::pair<std::string, ConvCase>>& test_geos,
                                       const std::vector<std::pair<std::string, ConvCase>>& bench_geos) {
  harness::KernelSpec s = direct_conv_kernel(f, std::move(description), {}, {});
  s.spec_params.insert(s.spec_params.begin(), "fmt");
  s.value_names["fmt"] = format_names();
  auto with_format = [&](BlockFormat fmt, const ConvCase& c) {
    Params p = conv_params(f, c);
    p["fmt"] = static_cast<std::int64_t>(fmt);
    return p;
  };
  // Every format once, cycling over the test geometries (nvfp4 first: the first variant, which
  // `ingot build --first-variant` compiles, then decodes E2M1 nibbles, an E4M3 scale and the
  // global scale).
  const std::array<BlockFormat, quant::kNumBlockFormats> order{
      BlockFormat::nvfp4,        BlockFormat::int8_g32_f32, BlockFormat::int8_g32_f16, BlockFormat::int4_g32_f32,
      BlockFormat::int4_g32_f16, BlockFormat::mxfp8,        BlockFormat::mxfp4};
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& [gname, g] = test_geos[i % test_geos.size()];
    s.tests.push_back({std::string(quant::format_info(order[i]).name) + "_" + gname, with_format(order[i], g)});
  }
  for (const auto& [gname, g] : bench_geos) {
    for (BlockFormat fmt : order) {
      s.bench.push_back({std::string(quant::format_info(fmt).name) + "_" + gname, with_format(fmt, g)});
    }
  }
  s.build = [f](DType t, const Params& p) {
    const ConvSpec cs = conv_spec(f, p);
    cs.check_batch(static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "B"), 0)));
    const BlockFormat fmt = quant::block_format(param(p, "fmt"));
    return trace_typed(t, f.name + "_" + std::string(quant::format_info(fmt).name), p,
                       [&](auto tag, KernelBuilder& k) { blockscaled_conv<typename decltype(tag)::type>(k, cs, fmt); });
  };
  // (the quantised weights are blocks of codes and scales, not the dense filter's shape)
  s.shapes = [f, dense = s.shapes](DType t, const Params& p) {
    auto m = dense(t, p);
    m.erase("w");
    return m;
  };
  s.inputs = [f](DType t, const Params& p, std::uint64_t seed) {
    const ConvSpec cs = conv_spec(f, p);
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
  // The dense f64 convolution over the host-dequantised weights.
  s.oracle = [f](DType, const Params& p, const harness::HostData& d) {
    const ConvSpec cs = conv_spec(f, p);
    quant::QuantisedMatrix q;
    q.layout = layout_of(cs, p);
    q.codes = d.buffers.at("wq");
    q.scales = d.buffers.at("wscale");
    if (q.layout.info().global_scale) q.global_scale = static_cast<float>(d.buffers.at("wgscale").at(0));
    const auto wf = quant::dequantise(q);
    const std::vector<double> w(wf.begin(), wf.end());
    const std::vector<double>* bias = cs.bias ? &d.buffers.at("bias") : nullptr;
    return std::map<std::string, std::vector<double>>{
        {"y", conv_reference(cs, param(p, "B"), d.buffers.at("x"), w, bias)}};
  };
  // Input read once, output written once (+ bias) in T; codes and scales as stored.
  s.bytes = [f](DType t, const Params& p) {
    const ConvSpec cs = conv_spec(f, p);
    const auto B = static_cast<double>(param(p, "B"));
    return static_cast<double>(dtype_size(t)) *
               (B * static_cast<double>(cs.in_per_batch() + cs.out_per_batch()) + (cs.bias ? cs.out_channels : 0)) +
           static_cast<double>(layout_of(cs, p).bytes());
  };
  return s;
}

}  // namespace

void register_blockscaled_conv(harness::Registry& r) {
  // Test geometries: no output count is a multiple of the 256-thread group, and every reduction
  // length but the "exact" ones is not a multiple of the block (a padded last block).
  r.add(blockscaled_kernel(
      {"conv2d_blockscaled", 2, ConvLayout::ChannelsFirst, ConvChannels::Dense},
      "conv2d, block-scaled weights (fmt: int8/int4 g32 f32|f16, mxfp8, mxfp4, nvfp4): x[B,C,H,W] * W[O,C,kh,kw] "
      "(+bias[O]) -> y[B,O,P,Q]; stride, pad, dilation per axis",
      {
          // 245 outputs, reduction 27
          {"c3_o5_7x7_k3_pad1", {.B = 1, .C = 3, .O = 5, .size = {7, 7}, .k = {3, 3}, .pad = {1, 1}}},
          // 2 x 3 x 5 x 6 = 180 outputs, reduction 24
          {"b2_strided_dilated_bias",
           {.B = 2,
            .C = 4,
            .O = 3,
            .size = {9, 8},
            .k = {3, 2},
            .stride = {2, 1},
            .pad = {1, 0},
            .dil = {1, 2},
            .bias = true}},
          // 144 outputs, reduction 45
          {"c5_o4_6x6_k3_bias", {.B = 1, .C = 5, .O = 4, .size = {6, 6}, .k = {3, 3}, .pad = {1, 1}, .bias = true}},
          // 75 outputs, reduction 32: no padding
          {"exact_c32_k1", {.B = 1, .C = 32, .O = 3, .size = {5, 5}, .k = {1, 1}}},
      },
      {{"N32_C256_K256_56x56_3x3", {.B = 32, .C = 256, .O = 256, .size = {56, 56}, .k = {3, 3}, .pad = {1, 1}}}}));
  r.add(blockscaled_kernel(
      {"conv3d_blockscaled", 3, ConvLayout::ChannelsFirst, ConvChannels::Dense},
      "conv3d, block-scaled weights (fmt: int8/int4 g32 f32|f16, mxfp8, mxfp4, nvfp4): x[B,C,D,H,W] * "
      "W[O,C,kd,kh,kw] (+bias[O]) -> y[B,O,P,Q,R]; stride, pad, dilation per axis",
      {
          // 300 outputs, reduction 54
          {"c2_o3_4x5x5_k3_pad1", {.B = 1, .C = 2, .O = 3, .size = {4, 5, 5}, .k = {3, 3, 3}, .pad = {1, 1, 1}}},
          // 2 x 2 x 3 x 4 x 3 = 144 outputs, reduction 36
          {"b2_strided_dilated_bias",
           {.B = 2,
            .C = 3,
            .O = 2,
            .size = {5, 6, 4},
            .k = {3, 2, 2},
            .stride = {2, 1, 2},
            .pad = {1, 0, 1},
            .dil = {1, 2, 1},
            .bias = true}},
          // 64 outputs, reduction 18
          {"c1_o4_k233_bias", {.B = 1, .C = 1, .O = 4, .size = {3, 4, 6}, .k = {2, 3, 3}, .bias = true}},
          // 36 outputs, reduction 32: no padding
          {"exact_c4_k2", {.B = 1, .C = 4, .O = 3, .size = {3, 3, 4}, .k = {2, 2, 2}}},
      },
      {{"N4_C64_K64_16x56x56_3x3x3",
        {.B = 4, .C = 64, .O = 64, .size = {16, 56, 56}, .k = {3, 3, 3}, .pad = {1, 1, 1}}}}));
  r.add(blockscaled_kernel(
      {"depthwise_conv2d_blockscaled", 2, ConvLayout::ChannelsFirst, ConvChannels::Depthwise},
      "depthwise conv2d, block-scaled weights (fmt: int8/int4 g32 f32|f16, mxfp8, mxfp4, nvfp4): x[B,C,H,W] * "
      "W[C,kh,kw] (+bias[C]) -> y[B,C,P,Q]; stride, pad, dilation per axis",
      {
          // 405 outputs, reduction 9
          {"c5_9x9_k3_pad1", {.B = 1, .C = 5, .size = {9, 9}, .k = {3, 3}, .pad = {1, 1}}},
          // 2 x 3 x 5 x 6 = 180 outputs, reduction 6
          {"b2_strided_dilated_bias",
           {.B = 2,
            .C = 3,
            .size = {10, 7},
            .k = {3, 2},
            .stride = {2, 1},
            .pad = {1, 1},
            .dil = {1, 2},
            .bias = true}},
          // 324 outputs, reduction 25
          {"c4_9x9_k5_pad2_bias", {.B = 1, .C = 4, .size = {9, 9}, .k = {5, 5}, .pad = {2, 2}, .bias = true}},
          // 45 outputs, reduction 32: no padding
          {"exact_k4x8", {.B = 1, .C = 3, .size = {6, 12}, .k = {4, 8}}},
      },
      {{"N32_C384_56x56_3x3", {.B = 32, .C = 384, .size = {56, 56}, .k = {3, 3}, .pad = {1, 1}}}}));
}

}  // namespace ingot::kernels
