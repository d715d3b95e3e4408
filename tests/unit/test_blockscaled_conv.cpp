// The block-scaled convolutions (kernels/conv/blockscaled_conv.*): registration (names, formats,
// bench arithmetic), and agreement with the dense direct convolution: with the same template
// and the same f32 weight values, a block-scaled kernel must give the dense kernel's output bit
// for bit, in every format, grouped and channels-last layouts included.
#include <gtest/gtest.h>

#include <set>

#include "conv/blockscaled_conv.hpp"
#include "conv/common.hpp"
#include "conv/direct_conv_registry.hpp"
#include "ingot/harness/registry.hpp"
#include "ingot/library.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/interp.hpp"
#include "quant/quantise.hpp"

using namespace ingot;
using namespace ingot::dsl;
using namespace ingot::kernels;

namespace {
const char* const kKernels[] = {"conv2d_blockscaled", "conv3d_blockscaled", "depthwise_conv2d_blockscaled"};
}  // namespace

TEST(BlockScaledConv, EveryFormatHasACaseAndNamesShowTheFormat) {
  const auto reg = harness::builtin_registry();
  for (const char* name : kKernels) {
    const auto* k = reg.find(name);
    ASSERT_NE(k, nullptr) << name;
    std::set<std::int64_t> formats;
    for (const auto& c : k->tests) formats.insert(harness::param(c.params, "fmt"));
    EXPECT_EQ(formats.size(), static_cast<std::size_t>(quant::kNumBlockFormats)) << name;
    const auto& p = k->tests.front().params;
    const std::string fmt(quant::format_info(quant::block_format(harness::param(p, "fmt"))).name);
    EXPECT_EQ(k->variant_name(DType::f16, p).rfind(std::string(name) + "_f16_" + fmt + "_", 0), 0u)
        << k->variant_name(DType::f16, p);
    EXPECT_EQ(k->build(DType::f16, p).name, std::string(name) + "_" + fmt + "_f16");
  }
}

TEST(BlockScaledConv, EveryBenchCaseBuildsInEveryFormat) {
  const auto reg = harness::builtin_registry();
  for (const char* name : kKernels) {
    const auto* k = reg.find(name);
    ASSERT_NE(k, nullptr) << name;
    std::set<std::int64_t> formats;
    for (const auto& c : k->bench) {
      formats.insert(harness::param(c.params, "fmt"));
      EXPECT_NO_THROW((void)passes::optimize(k->build(DType::bf16, c.params))) << name << " " << c.name;
    }
    EXPECT_EQ(formats.size(), static_cast<std::size_t>(quant::kNumBlockFormats)) << name;
  }
}

TEST(BlockScaledConv, BenchArithmetic) {
  const auto reg = harness::builtin_registry();
  const auto* k = reg.find("conv2d_blockscaled");
  ASSERT_NE(k, nullptr);
  const double act = 32.0 * 256 * 56 * 56;  // N32 C=K=256 56x56 3x3 pad 1: input = output elements
  const double weights = 256.0 * 256 * 9;   // 2304 per row = 72 blocks of 32, 144 of 16: no padding
  for (const auto& c : k->bench) {
    const auto f = quant::block_format(harness::param(c.params, "fmt"));
    double wbytes = 0;
    switch (f) {
      case quant::BlockFormat::int8_g32_f32: wbytes = weights + weights / 32 * 4; break;
      case quant::BlockFormat::int8_g32_f16: wbytes = weights + weights / 32 * 2; break;
      case quant::BlockFormat::int4_g32_f32: wbytes = weights / 2 + weights / 32 * 4; break;
      case quant::BlockFormat::int4_g32_f16: wbytes = weights / 2 + weights / 32 * 2; break;
      case quant::BlockFormat::mxfp8: wbytes = weights + weights / 32; break;
      case quant::BlockFormat::mxfp4: wbytes = weights / 2 + weights / 32; break;
      case quant::BlockFormat::nvfp4: wbytes = weights / 2 + weights / 16 + 4; break;
    }
    EXPECT_DOUBLE_EQ(k->bytes(DType::bf16, c.params), 2.0 * (act + act) + wbytes) << c.name;
    EXPECT_DOUBLE_EQ(k->flops(c.params), 2.0 * act * 256 * 9) << c.name;
  }
  // Depthwise 3x3: rows of 9 weights pad to one block (32, or 16 for nvfp4).
  const auto* dw = reg.find("depthwise_conv2d_blockscaled");
  ASSERT_NE(dw, nullptr);
  for (const auto& c : dw->bench) {
    if (quant::block_format(harness::param(c.params, "fmt")) != quant::BlockFormat::nvfp4) continue;
    const double a = 32.0 * 384 * 56 * 56;
    EXPECT_DOUBLE_EQ(dw->bytes(DType::f16, c.params), 2.0 * (a + a) + 384.0 * 16 / 2 + 384 + 4);
  }
}

// The same direct_conv with dense f32 weights w = dequantise(q) and with block-scaled q: equal
// outputs, bit for bit (the weights are equal f32 values and the accumulation order is the
// template's), for every format on a grouped, channels-last spec with padding in the blocks.
TEST(BlockScaledConv, EqualsTheDenseTemplateOnDequantisedWeights) {
  ConvSpec s;
  s.name = "bs_vs_dense";
  s.layout = ConvLayout::ChannelsLast;
  s.in_channels = 6;
  s.out_channels = 4;
  s.groups = 2;  // rows of 3 * 3 * 2 = 18 weights: a padded block
  s.in_size = {6, 5};
  s.ksize = {3, 2};
  s.stride = {1, 2};
  s.pad = {1, 1};
  s.dilation = {1, 1};
  s.bias = true;
  const std::uint32_t B = 2;
  const auto x = random_values(DType::f32, B * s.in_per_batch(), 3);
  const auto bias = random_values(DType::f32, s.out_channels, 4);
  const auto dense = passes::optimize(trace("dense", [&](KernelBuilder& k) { direct_conv<float>(k, s); }));
  runtime::Interpreter be;
  for (int fi = 0; fi < quant::kNumBlockFormats; ++fi) {
    const auto f = quant::block_format(fi);
    SCOPED_TRACE(std::string(quant::format_info(f).name));
    const auto q = quant::quantise(f, s.out_channels, s.weight_cols(),
                                   random_values(DType::f32, s.weight_count(), static_cast<std::uint64_t>(10 + fi)));
    const auto wf = quant::dequantise(q);
    const auto bs = passes::optimize(trace("bs", [&](KernelBuilder& k) { blockscaled_conv<float>(k, s, f); }));
    const std::uint64_t n = B * s.out_per_batch();
    auto y_dense = be.allocate(DType::f32, n);
    be.launch(dense, runtime::grid_1d(n, 64),
              {runtime::scalar_arg<u32>(B), runtime::make_buffer(be, DType::f32, x),
               runtime::make_buffer(be, DType::f32, std::vector<double>(wf.begin(), wf.end())),
               runtime::make_buffer(be, DType::f32, bias), y_dense});
    std::vector<runtime::Arg> args{runtime::scalar_arg<u32>(B), runtime::make_buffer(be, DType::f32, x),
                                   runtime::make_buffer(be, q.layout.info().codes_type, q.codes),
                                   runtime::make_buffer(be, q.layout.info().scales_type, q.scales)};
    if (q.layout.info().global_scale) args.emplace_back(runtime::make_buffer(be, DType::f32, {q.global_scale}));
    auto y_bs = be.allocate(DType::f32, n);
    args.emplace_back(runtime::make_buffer(be, DType::f32, bias));
    args.emplace_back(y_bs);
    be.launch(bs, runtime::grid_1d(n, 64), args);
    EXPECT_EQ(runtime::read_buffer(be, *y_bs), runtime::read_buffer(be, *y_dense));
  }
}
