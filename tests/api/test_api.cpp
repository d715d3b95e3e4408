// The library API over caller memory (ingot/api/): results against references on the interpreter and OpenCL, the
// per-context trace cache, and every refusal — its code, the argument it names, and the caller's output untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "ingot/api/activation.hpp"
#include "ingot/api/call.hpp"
#include "ingot/api/conv.hpp"
#include "ingot/api/gemm.hpp"
#include "ingot/scalar_eval.hpp"

#if INGOT_HAVE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#endif

namespace ingot {
namespace {

using api::ErrorCode;
using api::TensorView;

constexpr float kSentinel = 12345.0f;

// depthwise conv1d in f64 on the host: y[b,c,o] = sum_k x[b,c,o*s - pad + k*dil] * w[c,k] (+ bias[c]).
std::vector<float> dw_reference(const std::vector<float>& x, const std::vector<float>& w, const float* bias, int B,
                                int C, int L, int K, int s, int pad, int dil) {
  const int O = (L + 2 * pad - dil * (K - 1) - 1) / s + 1;
  std::vector<float> y(static_cast<std::size_t>(B * C * O));
  for (int b = 0; b < B; ++b)
    for (int c = 0; c < C; ++c)
      for (int o = 0; o < O; ++o) {
        double acc = bias ? bias[c] : 0.0;
        for (int k = 0; k < K; ++k) {
          const int i = o * s - pad + k * dil;
          if (i >= 0 && i < L) acc += double(x[(b * C + c) * L + i]) * w[c * K + k];
        }
        y[(b * C + c) * O + o] = static_cast<float>(acc);
      }
  return y;
}

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7919) % 17) / 17.0f - 0.5f * scale;
  return v;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::abs(want[i])) << i;
}

// A depthwise conv1d call with an odd tail: B=2, C=5, L=37, K=4, stride 2, pad 3, dilation 2 -> O = 19.
struct Dw {
  int B = 2, C = 5, L = 37, K = 4, s = 2, pad = 3, dil = 2;
  int O = (L + 2 * pad - dil * (K - 1) - 1) / s + 1;
  std::vector<float> x = ramp(std::size_t(B * C * L), 2.0f), w = ramp(std::size_t(C * K), 1.0f),
                     bias = ramp(std::size_t(C), 0.5f);
  std::vector<float> y = std::vector<float>(std::size_t(B * C * O), kSentinel);
  TensorView xv() { return api::host_tensor(x.data(), DType::f32, {B, C, L}); }
  TensorView wv() { return api::host_tensor(w.data(), DType::f32, {C, K}); }
  TensorView bv() { return api::host_tensor(bias.data(), DType::f32, {C}); }
  TensorView yv() { return api::host_tensor(y.data(), DType::f32, {B, C, O}); }
  conv::Conv1dOptions opts() const { return {s, pad, dil}; }
  std::vector<float> want() const { return dw_reference(x, w, bias.data(), B, C, L, K, s, pad, dil); }
  bool untouched() const {
    for (float v : y) {
      if (v != kSentinel) return false;
    }
    return true;
  }
};

TEST(Api, DepthwiseConv1dOnTheInterpreterMatchesTheReference) {
  auto ctx = api::Context::interpreter();
  Dw d;
  const TensorView b = d.bv();
  conv::depthwise_conv1d(ctx, d.xv(), d.wv(), d.yv(), d.opts(), &b);
  expect_near(d.y, d.want());
}

TEST(Api, ASecondCallOfOneShapeTracesNothing) {
  auto ctx = api::Context::interpreter();
  Dw d;
  conv::depthwise_conv1d(ctx, d.xv(), d.wv(), d.yv(), d.opts());
  EXPECT_EQ(ctx.traces(), 1u);
  conv::depthwise_conv1d(ctx, d.xv(), d.wv(), d.yv(), d.opts());
  EXPECT_EQ(ctx.traces(), 1u);
  expect_near(d.y, dw_reference(d.x, d.w, nullptr, d.B, d.C, d.L, d.K, d.s, d.pad, d.dil));
}

TEST(Api, SiluTakesAnyShapeAndMatchesTheFormula) {
  auto ctx = api::Context::interpreter();
  std::vector<float> x = ramp(3 * 7 * 13, 16.0f), y(x.size(), kSentinel);
  activation::silu(ctx, api::host_tensor(x.data(), DType::f32, {3, 7, 13}),
                   api::host_tensor(y.data(), DType::f32, {3, 7, 13}));
  std::vector<float> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = static_cast<float>(x[i] / (1.0 + std::exp(-double(x[i]))));
  expect_near(y, want);
}

TEST(Api, DescribeGivesEveryBufferItsShape) {
  auto ctx = api::Context::interpreter();
  const auto info =
      api::describe(ctx, "depthwise_conv1d", DType::f16,
                    {{"B", 2}, {"C", 5}, {"L", 37}, {"K", 4}, {"stride", 2}, {"pad", 3}, {"dilation", 2}, {"bias", 0}});
  bool saw_y = false;
  for (const auto& b : info) {
    EXPECT_EQ(b.dtype, DType::f16);
    if (b.name == "y") {
      saw_y = true;
      EXPECT_TRUE(b.output);
      EXPECT_EQ(b.shape, (std::vector<std::int64_t>{2, 5, 19}));  // (37 + 6 - 2*3 - 1) / 2 + 1
    }
  }
  EXPECT_TRUE(saw_y);
}

// Runs f, which must throw api::Error with this code naming this argument.
template <class F>
void expect_refused(F&& f, ErrorCode code, const std::string& argument) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << api::error_code_name(code);
  } catch (const api::Error& e) {
    EXPECT_EQ(e.code, code) << e.what();
    EXPECT_EQ(e.argument, argument) << e.what();
    EXPECT_GT(std::strlen(e.what()), 0u);
  }
}

// c = relu(a^T b_w^T + c + bias) with a [batch, K, M] and b as a weight [batch, N, K]: odd sizes, f32 on the host.
TEST(Api, GemmTakesItsShapesFromTheTensors) {
  auto ctx = api::Context::interpreter();
  const int batch = 2, M = 7, N = 5, K = 9;
  std::vector<float> a = ramp(std::size_t(batch * K * M), 2.0f), b = ramp(std::size_t(batch * N * K), 1.0f),
                     bias = ramp(std::size_t(N), 1.0f), c = ramp(std::size_t(batch * M * N), 1.0f);
  std::vector<float> want(c.size());
  for (int i = 0; i < batch; ++i)
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double v = c[(i * M + m) * N + n] + bias[n];
        for (int k = 0; k < K; ++k) v += double(a[(i * K + k) * M + m]) * b[(i * N + n) * K + k];
        want[(i * M + m) * N + n] = static_cast<float>(std::max(v, 0.0));
      }
  linalg::GemmOptions o;
  o.a_transposed = true;
  o.b_weight = true;
  o.accumulate = true;
  o.activation = linalg::Activation::relu;
  const api::TensorView bv = api::host_tensor(bias.data(), DType::f32, {N});
  linalg::gemm(ctx, api::host_tensor(a.data(), DType::f32, {batch, K, M}),
               api::host_tensor(b.data(), DType::f32, {batch, N, K}),
               api::host_tensor(c.data(), DType::f32, {batch, M, N}), o, &bv);
  expect_near(c, want);
}

// bf16 inputs with an f32 output keep the f32 sums (the products of bf16 values are exact in f32).
TEST(Api, GemmOfBf16InputsIntoAnF32Output) {
  auto ctx = api::Context::interpreter();
  const int M = 9, N = 6, K = 20;
  const auto av = ramp(std::size_t(M * K), 2.0f), bv = ramp(std::size_t(K * N), 1.0f);
  std::vector<std::uint16_t> a(av.size()), b(bv.size());
  std::vector<double> ar(av.size()), br(bv.size());  // the values as rounded to bf16
  for (std::size_t i = 0; i < av.size(); ++i) {
    a[i] = static_cast<std::uint16_t>(ir::bits_of_double(DType::bf16, av[i]));
    ar[i] = ir::double_of_bits(DType::bf16, a[i]);
  }
  for (std::size_t i = 0; i < bv.size(); ++i) {
    b[i] = static_cast<std::uint16_t>(ir::bits_of_double(DType::bf16, bv[i]));
    br[i] = ir::double_of_bits(DType::bf16, b[i]);
  }
  std::vector<float> c(std::size_t(M * N), kSentinel), want(c.size());
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double v = 0;
      for (int k = 0; k < K; ++k) v += ar[m * K + k] * br[k * N + n];
      want[m * N + n] = static_cast<float>(v);
    }
  linalg::gemm(ctx, api::host_tensor(a.data(), DType::bf16, {M, K}), api::host_tensor(b.data(), DType::bf16, {K, N}),
               api::host_tensor(c.data(), DType::f32, {M, N}));
  expect_near(c, want);
}

// Rank-2 matrices, and shapes that disagree refused by the tensor's name before anything runs.
TEST(Api, GemmOfMatricesAndItsRefusals) {
  auto ctx = api::Context::interpreter();
  const int M = 3, N = 4, K = 5;
  std::vector<float> a = ramp(std::size_t(M * K), 2.0f), b = ramp(std::size_t(K * N), 1.0f), c(M * N, kSentinel);
  std::vector<float> want(c.size());
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double v = 0;
      for (int k = 0; k < K; ++k) v += double(a[m * K + k]) * b[k * N + n];
      want[m * N + n] = static_cast<float>(v);
    }
  const auto av = api::host_tensor(a.data(), DType::f32, {M, K});
  linalg::gemm(ctx, av, api::host_tensor(b.data(), DType::f32, {K, N}), api::host_tensor(c.data(), DType::f32, {M, N}));
  expect_near(c, want);
  std::vector<float> c2(c.size(), kSentinel);
  const auto cv = api::host_tensor(c2.data(), DType::f32, {M, N});
  // b with K + 1 rows: its shape disagrees with a's K.
  std::vector<float> b_long(std::size_t((K + 1) * N), 1.0f);
  expect_refused(
      [&] {
        linalg::gemm(ctx, av, api::host_tensor(b_long.data(), DType::f32, {K + 1, N}), cv);
      },
      ErrorCode::BadShape, "b");
  // a of rank 1.
  expect_refused([&] { linalg::gemm(ctx, api::host_tensor(a.data(), DType::f32, {M * K}), av, cv); },
                 ErrorCode::BadShape, "a");
  for (const float v : c2) EXPECT_EQ(v, kSentinel);
}

TEST(Api, BadInputIsRefusedByNameAndNothingIsWritten) {
  auto ctx = api::Context::interpreter();
  Dw d;
  const auto o = d.opts();
  auto run = [&](TensorView x, TensorView w, TensorView y, conv::Conv1dOptions opts) {
    return [&ctx, x, w, y, opts] { conv::depthwise_conv1d(ctx, x, w, y, opts); };
  };
  // Wrong dtype: w declared f16 while x and y are f32.
  TensorView w16 = d.wv();
  w16.dtype = DType::f16;
  expect_refused(run(d.xv(), w16, d.yv(), o), ErrorCode::BadDtype, "w");
  // A dtype the kernel has no variant of.
  TensorView xi = d.xv(), wi = d.wv(), yi = d.yv();
  xi.dtype = wi.dtype = yi.dtype = DType::i32;
  expect_refused(run(xi, wi, yi, o), ErrorCode::BadDtype, "w");
  // Not contiguous: x seen with its last two dimensions transposed.
  TensorView xt = api::host_tensor(d.x.data(), DType::f32, {d.B, d.C, d.L});
  xt.strides = {d.C * d.L, 1, d.C};
  expect_refused(run(xt, d.wv(), d.yv(), o), ErrorCode::NotContiguous, "x");
  // An output of the wrong shape.
  TensorView ys = api::host_tensor(d.y.data(), DType::f32, {d.B, d.O, d.C});
  expect_refused(run(d.xv(), d.wv(), ys, o), ErrorCode::BadShape, "y");
  // Misaligned: x two bytes into its storage.
  TensorView xm = d.xv();
  xm.data = reinterpret_cast<char*>(d.x.data()) + 2;
  expect_refused(run(xm, d.wv(), d.yv(), o), ErrorCode::Misaligned, "x");
  // A CUDA tensor on an interpreter context, and tensors on two devices.
  TensorView wc = api::cuda_tensor(0x10000, DType::f32, {d.C, d.K});
  expect_refused(run(d.xv(), wc, d.yv(), o), ErrorCode::WrongDevice, "w");
  TensorView xc = api::cuda_tensor(0x10000, DType::f32, {d.B, d.C, d.L});
  TensorView wc2 = api::cuda_tensor(0x20000, DType::f32, {d.C, d.K});
  TensorView yc = api::cuda_tensor(0x30000, DType::f32, {d.B, d.C, d.O});
  expect_refused(run(xc, wc2, yc, o), ErrorCode::WrongDevice, "w");
  // The output aliasing the input: y over x's memory.
  std::vector<float> big(std::size_t(d.B * d.C * d.L), kSentinel);
  const std::vector<float> before = big;
  TensorView xa = api::host_tensor(big.data(), DType::f32, {d.B, d.C, d.L});
  TensorView ya = api::host_tensor(big.data() + 1, DType::f32, {d.B, d.C, d.O});
  expect_refused(run(xa, d.wv(), ya, o), ErrorCode::Aliasing, "y");
  EXPECT_EQ(big, before);
  // A parameter outside the kernel's preconditions: stride 0.
  expect_refused(run(d.xv(), d.wv(), d.yv(), {0, 3, 2}), ErrorCode::BadParameter, "params");
  // A null tensor.
  TensorView xn = d.xv();
  xn.data = nullptr;
  expect_refused(run(xn, d.wv(), d.yv(), o), ErrorCode::InvalidTensor, "x");
  EXPECT_TRUE(d.untouched());
}

TEST(Api, TheGenericCallRefusesUnknownNamesAndMissingTensors) {
  auto ctx = api::Context::interpreter();
  Dw d;
  const harness::Params p{{"B", d.B},      {"C", d.C},     {"L", d.L},          {"K", d.K},
                          {"stride", d.s}, {"pad", d.pad}, {"dilation", d.dil}, {"bias", 0}};
  expect_refused([&] { api::call(ctx, "no_such_kernel", p, {{"x", d.xv()}}); }, ErrorCode::UnknownKernel, "kernel");
  harness::Params typo = p;
  typo["strde"] = 2;
  expect_refused(
      [&] {
        api::call(ctx, "depthwise_conv1d", typo, {{"x", d.xv()}, {"w", d.wv()}, {"y", d.yv()}});
      },
      ErrorCode::BadParameter, "strde");
  expect_refused(
      [&] {
        api::call(ctx, "depthwise_conv1d", p, {{"x", d.xv()}, {"y", d.yv()}});
      },
      ErrorCode::MissingTensor, "w");
  expect_refused(
      [&] {
        api::call(ctx, "depthwise_conv1d", p, {{"x", d.xv()}, {"w", d.wv()}, {"y", d.yv()}, {"z", d.bv()}});
      },
      ErrorCode::UnexpectedTensor, "z");
  EXPECT_TRUE(d.untouched());
}

std::optional<api::Context> opencl_or_skip() {
  try {
    return api::Context::opencl();
  } catch (const api::Error& e) {
    EXPECT_EQ(e.code, ErrorCode::Unavailable);
    return std::nullopt;
  }
}

TEST(ApiOpenCL, HostTensorsRunThroughCopies) {
  auto ctx = opencl_or_skip();
  if (!ctx) GTEST_SKIP() << "opencl not available";
  Dw d;
  const TensorView b = d.bv();
  conv::depthwise_conv1d(*ctx, d.xv(), d.wv(), d.yv(), d.opts(), &b);
  expect_near(d.y, d.want());
}

// CUDA device pointers (where a GPU exists): memory the caller allocated, here through the context's own backend.
TEST(ApiCuda, DevicePointersRunWithoutCopies) {
  std::optional<api::Context> ctx;
  try {
    ctx = api::Context::cuda();
  } catch (const api::Error& e) {
    EXPECT_EQ(e.code, ErrorCode::Unavailable);
    GTEST_SKIP() << e.what();
  }
  auto& cuda = static_cast<runtime::CudaBackend&>(ctx->backend());
  Dw d;
  auto upload = [&](const std::vector<float>& host) {
    auto b = cuda.allocate(DType::f32, host.size());
    cuda.upload(*b, host.data(), host.size() * sizeof(float));
    return b;
  };
  auto x = upload(d.x), w = upload(d.w), bias = upload(d.bias), y = upload(d.y);
  const TensorView bv = api::cuda_tensor(cuda.device_pointer(*bias), DType::f32, {d.C});
  conv::depthwise_conv1d(*ctx, api::cuda_tensor(cuda.device_pointer(*x), DType::f32, {d.B, d.C, d.L}),
                         api::cuda_tensor(cuda.device_pointer(*w), DType::f32, {d.C, d.K}),
                         api::cuda_tensor(cuda.device_pointer(*y), DType::f32, {d.B, d.C, d.O}), d.opts(), &bv);
  std::vector<float> got(d.y.size());
  cuda.download(*y, got.data(), got.size() * sizeof(float));
  expect_near(got, d.want());
  // Host memory on a CUDA context, and a tensor of another device.
  expect_refused([&] { conv::depthwise_conv1d(*ctx, d.xv(), d.wv(), d.yv(), d.opts()); }, ErrorCode::WrongDevice, "w");
  TensorView y1 = api::cuda_tensor(cuda.device_pointer(*y), DType::f32, {d.B, d.C, d.O}, 1);
  expect_refused(
      [&] {
        conv::depthwise_conv1d(*ctx, api::cuda_tensor(cuda.device_pointer(*x), DType::f32, {d.B, d.C, d.L}),
                               api::cuda_tensor(cuda.device_pointer(*w), DType::f32, {d.C, d.K}), y1, d.opts());
      },
      ErrorCode::WrongDevice, "y");
}

#if INGOT_HAVE_OPENCL
TEST(ApiOpenCL, CallersBuffersRunWithoutCopies) {
  auto ctx = opencl_or_skip();
  if (!ctx) GTEST_SKIP() << "opencl not available";
  auto* queue = static_cast<cl_command_queue>(ctx->opencl_queue());
  cl_context context = nullptr;
  ASSERT_EQ(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr), CL_SUCCESS);
  Dw d;
  auto make = [&](std::vector<float>& host) {
    cl_int e = CL_SUCCESS;
    cl_mem m =
        clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.size() * sizeof(float), host.data(), &e);
    EXPECT_EQ(e, CL_SUCCESS);
    return m;
  };
  cl_mem x = make(d.x), w = make(d.w), y = make(d.y);
  conv::depthwise_conv1d(*ctx, api::opencl_tensor(x, DType::f32, {d.B, d.C, d.L}),
                         api::opencl_tensor(w, DType::f32, {d.C, d.K}),
                         api::opencl_tensor(y, DType::f32, {d.B, d.C, d.O}), d.opts());
  std::vector<float> got(d.y.size());
  ASSERT_EQ(clEnqueueReadBuffer(queue, y, CL_TRUE, 0, got.size() * sizeof(float), got.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  expect_near(got, dw_reference(d.x, d.w, nullptr, d.B, d.C, d.L, d.K, d.s, d.pad, d.dil));
  // The output aliasing an input: the same cl_mem for x and y.
  expect_refused(
      [&] {
        api::call(*ctx, "silu", {{"n", 10}},
                  {{"x", api::opencl_tensor(x, DType::f32, {10})}, {"y", api::opencl_tensor(x, DType::f32, {10})}});
      },
      ErrorCode::Aliasing, "y");
  // Host and OpenCL tensors in one call.
  expect_refused(
      [&] {
        api::call(
            *ctx, "silu", {{"n", 10}},
            {{"x", api::opencl_tensor(x, DType::f32, {10})}, {"y", api::host_tensor(d.y.data(), DType::f32, {10})}});
      },
      ErrorCode::WrongDevice, "y");
  for (cl_mem m : {x, w, y}) clReleaseMemObject(m);
}
#endif

}  // namespace
}  // namespace ingot
