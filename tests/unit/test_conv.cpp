// The generic direct convolution (kernels/conv/direct_conv.hpp): spec validation and 32-bit
// index limits, and the weight-loading hook that block-scaled weights reuse.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "conv/common.hpp"
#include "conv/direct_conv.hpp"
#include "conv/direct_conv_registry.hpp"
#include "ingot/harness/harness.hpp"
#include "ingot/harness/registry.hpp"
#include "ingot/library.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/interp.hpp"

using namespace ingot;
using namespace ingot::dsl;
using namespace ingot::kernels;

namespace {

ConvSpec small_spec() {
  ConvSpec s;
  s.name = "test_conv";
  s.in_channels = 4;
  s.out_channels = 6;
  s.groups = 2;
  s.in_size = {5, 7};
  s.ksize = {3, 2};
  s.stride = {1, 2};
  s.pad = {1, 1};
  s.dilation = {2, 1};
  s.bias = true;
  return s;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

}  // namespace

TEST(DirectConv, SpecArithmetic) {
  const ConvSpec s = small_spec();
  s.validate();
  EXPECT_EQ(s.out_len(0), 3u);  // (5 + 2 - 5) / 1 + 1
  EXPECT_EQ(s.out_len(1), 4u);  // (7 + 2 - 2) / 2 + 1
  EXPECT_EQ(s.taps(), 6u);
  EXPECT_EQ(s.weight_cols(), 12u);  // 2 input channels per group x 6 taps
  EXPECT_EQ(s.weight_count(), 72u);
  EXPECT_EQ(s.out_per_batch(), 72u);
  EXPECT_EQ(s.in_per_batch(), 140u);
}

TEST(DirectConv, ImpossibleSpecsAreRefused) {
  ConvSpec s = small_spec();
  s.groups = 3;
  EXPECT_NE(message_of([&] { s.validate(); }).find("groups (3) must divide"), std::string::npos);
  s = small_spec();
  s.ksize = {9, 2};
  EXPECT_NE(message_of([&] { s.validate(); }).find("wider than the padded input"), std::string::npos);
  s = small_spec();
  s.stride = {1};
  EXPECT_NE(message_of([&] { s.validate(); }).find("one entry per spatial axis"), std::string::npos);
}

TEST(DirectConv, SpecsBeyond32BitIndicesAreRefusedByBuild) {
  const auto reg = harness::builtin_registry();
  const auto* k = reg.find("conv3d");
  ASSERT_NE(k, nullptr);
  // 2048^3 input elements per channel: more than u32 can index.
  harness::Params p = k->tests.front().params;
  p["D"] = p["H"] = p["W"] = 2048;
  const auto msg = message_of([&] { (void)k->build(DType::f32, p); });
  EXPECT_NE(msg.find("does not fit 32-bit indices"), std::string::npos) << msg;
  // The bench shape fits, but not with a batch that takes the input past 2^32 elements.
  harness::Params big = k->bench.front().params;
  big["B"] = 2000;
  const auto bmsg = message_of([&] { (void)k->build(DType::f32, big); });
  EXPECT_NE(bmsg.find("batch 2000"), std::string::npos) << bmsg;
}

TEST(DirectConv, EveryBenchCaseBuilds) {
  const auto reg = harness::builtin_registry();
  for (const char* name :
       {"conv2d", "conv2d_grouped", "conv3d", "conv3d_grouped", "depthwise_conv2d", "depthwise_conv2d_nhwc"}) {
    const auto* k = reg.find(name);
    ASSERT_NE(k, nullptr) << name;
    for (const auto& c : k->bench) {
      EXPECT_NO_THROW((void)passes::optimize(k->build(DType::bf16, c.params))) << name << " " << c.name;
      EXPECT_GT(k->bytes(DType::bf16, c.params), 0.0);
      EXPECT_GT(k->flops(c.params), 0.0);
    }
  }
}

TEST(DirectConv, BenchArithmetic) {
  const auto reg = harness::builtin_registry();
  const auto* k = reg.find("conv2d");
  ASSERT_NE(k, nullptr);
  const auto& p = k->bench.front().params;  // N32 C=K=256 56x56 3x3 pad 1
  const double act = 32.0 * 256 * 56 * 56;
  EXPECT_DOUBLE_EQ(k->bytes(DType::bf16, p), 2.0 * (act + 256.0 * 256 * 9 + act));
  EXPECT_DOUBLE_EQ(k->flops(p), 2.0 * act * 256 * 9);
}

// A weight hook that dequantises u8 codes with one f32 scale per filter row (output channel),
// the shape block-scaled weights take: the kernel must equal the dense oracle run on the
// dequantised weights. Both hook signatures are exercised.
TEST(DirectConv, WeightHookReadsQuantisedWeights) {
  for (bool row_col : {true, false}) {
    const ConvSpec s = small_spec();
    const std::uint32_t rows = s.out_channels, cols = static_cast<std::uint32_t>(s.weight_cols());
    const ir::Kernel kern = passes::optimize(trace("conv_q", [&](KernelBuilder& k) {
      direct_conv<f16>(k, s, [&](KernelBuilder& b, const ConvSpec& sp) {
        auto q = b.in<u8>("wq", static_cast<std::uint32_t>(sp.weight_count()));
        auto scale = b.in<f32>("w_scale", sp.out_channels);
        auto deq = [=](Val<u32> flat, Val<u32> row) {
          return cast<f32>(cast<i32>(load(q, flat)) - 128) * load(scale, row);
        };
        if (row_col) {
          return std::function<Val<f32>(Val<u32>, Val<u32>, Val<u32>)>(
              [=](Val<u32> flat, Val<u32> row, Val<u32>) { return deq(flat, row); });
        }
        return std::function<Val<f32>(Val<u32>, Val<u32>, Val<u32>)>(
            [=](Val<u32> flat, Val<u32>, Val<u32>) { return deq(flat, flat / cols); });
      });
    }));
    ASSERT_EQ(kern.params.size(), 6u);  // batch, x, wq, w_scale, bias, y
    EXPECT_EQ(kern.params[2].name, "wq");
    EXPECT_EQ(kern.params[3].name, "w_scale");

    const std::uint32_t B = 3;
    const auto x = random_values(DType::f16, B * s.in_per_batch(), 7);
    const auto bias = random_values(DType::f16, s.out_channels, 8);
    std::vector<double> codes(s.weight_count()), scales(rows), w(s.weight_count());
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<double>((i * 37 + 11) % 256);
    for (std::uint32_t r = 0; r < rows; ++r) scales[r] = 1.0 / 128 * (1 + r % 3);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = (codes[i] - 128) * scales[i / cols];

    runtime::Interpreter be;
    auto y = be.allocate(DType::f16, B * s.out_per_batch());
    be.launch(kern, runtime::grid_1d(B * s.out_per_batch(), 64),
              {runtime::scalar_arg<u32>(B), runtime::make_buffer(be, DType::f16, x),
               runtime::make_buffer(be, DType::u8, codes), runtime::make_buffer(be, DType::f32, scales),
               runtime::make_buffer(be, DType::f16, bias), y});
    const auto want = conv_reference(s, B, x, w, &bias);
    std::string why;
    EXPECT_LT(harness::compare(want, runtime::read_buffer(be, *y), dot_tolerance(DType::f16, 13), &why), 0) << why;
  }
}

// The flat-index form of the hook: a scale of 2 on dense f32 weights doubles the output.
TEST(DirectConv, FlatIndexWeightHook) {
  ConvSpec s = small_spec();
  s.layout = ConvLayout::ChannelsLast;
  s.bias = false;
  const ir::Kernel kern = passes::optimize(trace("conv_x2", [&](KernelBuilder& k) {
    direct_conv<float>(k, s, [](KernelBuilder& b, const ConvSpec& sp) {
      auto w = b.in<f32>("w", static_cast<std::uint32_t>(sp.weight_count()));
      return [=](Val<u32> flat) { return load(w, flat) * 2.0f; };
    });
  }));
  const std::uint32_t B = 2;
  const auto x = random_values(DType::f32, B * s.in_per_batch(), 1);
  const auto w = random_values(DType::f32, s.weight_count(), 2);
  runtime::Interpreter be;
  auto y = be.allocate(DType::f32, B * s.out_per_batch());
  be.launch(kern, runtime::grid_1d(B * s.out_per_batch(), 32),
            {runtime::scalar_arg<u32>(B), runtime::make_buffer(be, DType::f32, x),
             runtime::make_buffer(be, DType::f32, w), y});
  auto want = conv_reference(s, B, x, w, nullptr);
  for (auto& v : want) v *= 2;
  std::string why;
  EXPECT_LT(harness::compare(want, runtime::read_buffer(be, *y), dot_tolerance(DType::f32, 13), &why), 0) << why;
}
