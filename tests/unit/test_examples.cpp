// The example kernels on the interpreter: the guarded depthwise conv1d matches its oracle in
// f32, f16 and bf16 on tail shapes; the unguarded one is caught with the precise report.
#include <gtest/gtest.h>

#include "depthwise_conv1d.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/interp.hpp"
#include "reference.hpp"
#include "vector_add.hpp"

using namespace ingot;
using namespace ingot::runtime;
using examples::Conv1dShape;
using examples::TailPolicy;

namespace {

struct ConvCase {
  Conv1dShape shape;
  std::uint32_t batch;
};

template <class T>
void check_conv(const ConvCase& c) {
  Interpreter be;
  const DType t = dtype_of<T>;
  auto k = passes::optimize(
      trace("dwconv1d", [&](KernelBuilder& b) { examples::depthwise_conv1d<T>(b, c.shape, TailPolicy::Guarded); }));
  const auto& s = c.shape;
  const std::size_t n = std::size_t{c.batch} * s.channels * s.out_len();
  const auto x = examples::random_values(t, std::size_t{c.batch} * s.channels * s.length, 100 + s.channels);
  const auto w = examples::random_values(t, std::size_t{s.channels} * s.ksize, 200 + s.ksize);
  auto bx = make_buffer(be, t, x);
  auto bw = make_buffer(be, t, w);
  auto by = be.allocate(t, n);
  be.launch(k, grid_1d(n, 256), {scalar_arg<u32>(c.batch), bx, bw, by});
  const auto got = read_buffer(be, *by);
  const auto want_exact = examples::depthwise_conv1d_reference(s, c.batch, x, w);
  const auto tol = examples::conv_tolerance(t, s.ksize);
  ASSERT_EQ(got.size(), want_exact.size());
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_FALSE(std::isnan(got[i])) << "element " << i << " left unwritten or NaN";
    ASSERT_NEAR(got[i], want_exact[i], tol.abs + tol.rel * std::fabs(want_exact[i])) << "element " << i;
  }
}

const ConvCase kCases[] = {
    {{8, 17, 3, 1, 0, 1}, 1},                            // 8 x 15 = 120 outputs, 136 tail threads
    {{3, 19, 3, 1, 0, 1}, 1},                            // 3 x 17 = 51 outputs
    {{8, 17, 3, 1, 0, 1}, 3}, {{5, 40, 4, 2, 3, 2}, 2},  // stride, pad and dilation together
    {{4, 9, 1, 1, 0, 1}, 2},                             // K = 1
};

}  // namespace

TEST(Examples, GuardedDepthwiseConv1dF32) {
  for (const auto& c : kCases) check_conv<f32>(c);
}
TEST(Examples, GuardedDepthwiseConv1dF16) {
  for (const auto& c : kCases) check_conv<f16>(c);
}
TEST(Examples, GuardedDepthwiseConv1dBf16) {
  for (const auto& c : kCases) check_conv<bf16>(c);
}

TEST(Examples, OutLenMatchesFormula) {
  EXPECT_EQ((Conv1dShape{8, 17, 3, 1, 0, 1}.out_len()), 15u);
  EXPECT_EQ((Conv1dShape{3, 19, 3, 1, 0, 1}.out_len()), 17u);
  EXPECT_EQ((Conv1dShape{5, 40, 4, 2, 3, 2}.out_len()), 20u);  // (40+6-7)/2+1
  EXPECT_THROW((void)(Conv1dShape{1, 2, 5, 1, 0, 1}.out_len()), std::invalid_argument);
}

TEST(Examples, UnguardedDepthwiseConv1dIsCaught) {
  for (const auto& shape : {Conv1dShape{8, 17, 3, 1, 0, 1}, Conv1dShape{3, 19, 3, 1, 0, 1}}) {
    for (DType t : {DType::f32, DType::f16, DType::bf16}) {
      Interpreter be;
      ir::Kernel k;
      const std::string name = "dwconv1d_unguarded_" + std::string(dtype_name(t));
      if (t == DType::f32) {
        k = trace(name, [&](KernelBuilder& b) { examples::depthwise_conv1d<f32>(b, shape, TailPolicy::Unguarded); });
      } else if (t == DType::f16) {
        k = trace(name, [&](KernelBuilder& b) { examples::depthwise_conv1d<f16>(b, shape, TailPolicy::Unguarded); });
      } else {
        k = trace(name, [&](KernelBuilder& b) { examples::depthwise_conv1d<bf16>(b, shape, TailPolicy::Unguarded); });
      }
      const std::size_t n = std::size_t{shape.channels} * shape.out_len();
      auto bx = make_buffer(be, t, examples::random_values(t, std::size_t{shape.channels} * shape.length, 1));
      auto by = be.allocate(t, n);
      auto bw = make_buffer(be, t, examples::random_values(t, std::size_t{shape.channels} * shape.ksize, 2));
      try {
        be.launch(k, grid_1d(n, 256), {scalar_arg<u32>(1), bx, bw, by});
        FAIL() << "unguarded kernel was not caught";
      } catch (const LaunchError& e) {
        // The first tail thread (global id n) decodes batch 1 and reads x past its end.
        EXPECT_EQ(e.kernel, name);
        EXPECT_EQ(e.problem, "out-of-range load");
        EXPECT_EQ(e.buffer, "x");
        EXPECT_EQ(e.extent, std::size_t{shape.channels} * shape.length);
        EXPECT_GE(e.index, static_cast<std::int64_t>(e.extent));
        EXPECT_EQ(e.local[0], n);  // first tail thread of group 0
        EXPECT_EQ(e.group, (std::array<u32, 3>{0, 0, 0}));
        const std::string msg = e.what();
        EXPECT_NE(msg.find("kernel '" + name + "': out-of-range load on buffer 'x': index "), std::string::npos) << msg;
        EXPECT_NE(msg.find("global (" + std::to_string(n) + ",0,0) of grid 1x1x1 groups of 256x1x1"), std::string::npos)
            << msg;
        EXPECT_NE(msg.find("= load x["), std::string::npos) << msg;
      }
      // and the output was not touched past... every in-range store is a valid element; the
      // out-of-range one was refused before it happened
    }
  }
}

TEST(Examples, VectorAddAllSixteenBitRoundTrips) {
  Interpreter be;
  auto k = passes::optimize(trace("vadd_f16", examples::vector_add<f16>));
  const std::vector<double> x{1.0, 2.5, -3.0, 65504.0, 0.1};
  const std::vector<double> y{0.5, 0.25, 3.0, 65504.0, 0.2};
  auto bx = make_buffer(be, DType::f16, x);
  auto by = make_buffer(be, DType::f16, y);
  auto bz = be.allocate(DType::f16, 5);
  be.launch(k, grid_1d(5, 256), {scalar_arg<u32>(5), bx, by, bz});
  const auto z = read_buffer(be, *bz);
  EXPECT_EQ(z[0], 1.5);
  EXPECT_EQ(z[1], 2.75);
  EXPECT_EQ(z[2], 0.0);
  EXPECT_TRUE(std::isinf(z[3]));  // overflow rounds to infinity
  EXPECT_EQ(z[4], static_cast<double>(f16_bits_to_f32(f32_to_f16_bits(
                      static_cast<float>(static_cast<double>(f16_bits_to_f32(f32_to_f16_bits(0.1f))) +
                                         static_cast<double>(f16_bits_to_f32(f32_to_f16_bits(0.2f))))))));
}
