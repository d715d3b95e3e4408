// The 64-bit index forms (blocks/index_width.hpp): which form a launch gets, the wide forms against their oracles on
// small cases (interpreter and OpenCL), and on a GPU the launches past 2^32 elements they exist for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ingot/harness/backends.hpp"
#include "ingot/harness/harness.hpp"
#include "ingot/harness/registry.hpp"
#include "ingot/library.hpp"
#include "ingot/runtime/backend.hpp"

using namespace ingot;
using namespace ingot::harness;

namespace {

// Whether k reads a 64-bit program id (the wide form was traced).
bool reads_i64_program_id(const ir::Kernel& k) {
  for (std::size_t e = 0; e < k.exprs.size(); ++e) {
    const ir::Node& n = k.exprs[static_cast<ir::ExprId>(e)];
    if (n.op == ir::Op::ProgramId && n.type == DType::i64) return true;
  }
  return false;
}

bool has_index_option(const KernelSpec& k) { return k.find_option("i64") != nullptr; }

constexpr std::int64_t kPast32 = (std::int64_t{1} << 32) + 300;

}  // namespace

// The kernels that come in both widths, and the default: 32-bit below 2^32 elements, 64-bit from there, per launch.
TEST(IndexWidth, TheDefaultIsChosenPerLaunchBySize) {
  const Registry reg = builtin_registry();
  std::vector<std::string> wide_kernels;
  for (const auto& k : reg.kernels()) {
    if (has_index_option(k)) wide_kernels.push_back(k.name);
  }
  std::sort(wide_kernels.begin(), wide_kernels.end());
  EXPECT_EQ(wide_kernels, (std::vector<std::string>{"causal_conv1d_prefill", "depthwise_conv1d", "silu"}));

  const KernelSpec& silu = *reg.find("silu");
  EXPECT_FALSE(reads_i64_program_id(silu.build(DType::f16, {{"n", 4099}})));
  EXPECT_FALSE(reads_i64_program_id(silu.build(DType::f16, {{"n", 0xffffffffll}})));
  EXPECT_TRUE(reads_i64_program_id(silu.build(DType::f16, {{"n", kPast32}})));
  EXPECT_THROW((void)silu.build(DType::f16, {{"n", kPast32}, {"i64", 0}}), std::invalid_argument);
  EXPECT_THROW((void)silu.build(DType::f16, {{"n", 5}, {"i64", 2}}), std::invalid_argument);

  // 32768 x 65536 = 2^31 input elements per batch: a batch of 2 takes the default to 2^32.
  const KernelSpec& dw = *reg.find("depthwise_conv1d");
  Params p = dw.default_test().params;
  p["C"] = 32768, p["L"] = 65536, p["B"] = 1;
  EXPECT_FALSE(reads_i64_program_id(dw.build(DType::bf16, p)));
  p["B"] = 2;
  EXPECT_TRUE(reads_i64_program_id(dw.build(DType::bf16, p)));
  p["i64"] = 0;
  EXPECT_THROW((void)dw.build(DType::bf16, p), std::invalid_argument);

  const KernelSpec& causal = *reg.find("causal_conv1d_prefill");
  Params q = causal.default_test().params;
  q["C"] = 70000, q["L"] = 70000, q["B"] = 1;
  EXPECT_TRUE(reads_i64_program_id(causal.build(DType::f32, q)));
  q["i64"] = 0;
  EXPECT_THROW((void)causal.build(DType::f32, q), std::invalid_argument);
}

// Sizes are multiplied in 64 bits: in the 64-bit form a row product past 2^32 (C x L = 2^33 elements of one batch)
// keeps its value in the buffers' extents, never wrapping to a small buffer.
TEST(IndexWidth, SizeProductsPast2To32KeepTheirValue) {
  const Registry reg = builtin_registry();
  const KernelSpec& dw = *reg.find("depthwise_conv1d");
  Params p = dw.default_test().params;
  p["B"] = 1, p["C"] = std::int64_t{1} << 20, p["L"] = std::int64_t{1} << 13, p["K"] = 3, p["pad"] = 1;
  p["stride"] = 1, p["dilation"] = 1;
  const ir::Kernel k = dw.build(DType::f32, p);
  ASSERT_TRUE(reads_i64_program_id(k));
  std::vector<runtime::Arg> args(k.params.size(), runtime::BufferPtr{});
  args[0] = runtime::ScalarArg{DType::i64, 1};  // batch
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    if (k.params[i].name == "x" || k.params[i].name == "y") {
      EXPECT_EQ(runtime::required_extent(k, i, args), std::uint64_t{1} << 33) << k.params[i].name;
    }
  }
  EXPECT_EQ(dw.geometry(DType::f32, p).total_threads(), std::uint64_t{1} << 30);  // C x O / V (V = 8, f32's default)
}

// Every test case of the default variants, traced in the 64-bit form, passes its oracle on the interpreter (every
// dtype); the first one per kernel compiles with NVRTC where it is present (bf16), and passes on OpenCL (f16) and
// Vulkan (bf16) where a device is (the 16-bit conversions with 64-bit offsets; PoCL builds these small programs
// unoptimized, as the OpenCL library test does).
TEST(IndexWidth, WideFormsPassTheDefaultCases) {
  const Registry reg = builtin_registry();
  const BackendSlot interp = open_backend("interp");
  OpenBackendOptions open;
  open.opencl.unoptimized_below = 100'000;
  const BackendSlot opencl = open_backend("opencl", open);
  const BackendSlot cuda = open_backend("cuda");  // without a GPU: NVRTC compiles (compile_only) where present
  const BackendSlot vulkan = open_backend("vulkan");
  std::size_t run = 0;
  for (const auto& k : reg.kernels()) {
    if (!has_index_option(k)) continue;
    bool first = true;
    for (const auto& c : k.tests) {
      if (!k.default_case(c.params)) continue;
      Params p = c.params;
      p["i64"] = 1;
      const TestCase wide{c.name + "_i64", p};
      for (const DType t : k.dtypes) {
        ASSERT_TRUE(reads_i64_program_id(k.build(t, p))) << k.name;
        const CaseResult r = run_case(k, t, wide, interp, 11);
        EXPECT_EQ(r.status, Status::Pass) << k.name << " " << c.name << " " << dtype_name(t) << ": " << r.message;
        ++run;
      }
      if (cuda.compile_only && first) {
        EXPECT_NO_THROW(cuda.compile_only(k.build(DType::bf16, p))) << k.name << " " << c.name;
      }
      if (opencl.backend && first) {
        const CaseResult r = run_case(k, DType::f16, wide, opencl, 11);
        EXPECT_EQ(r.status, Status::Pass) << k.name << " " << c.name << " opencl: " << r.message;
      }
      if (vulkan.backend && first) {
        const CaseResult r = run_case(k, DType::bf16, wide, vulkan, 11);
        EXPECT_EQ(r.status, Status::Pass) << k.name << " " << c.name << " vulkan: " << r.message;
      }
      first = false;
    }
  }
  EXPECT_GE(run, 30u);
}

namespace {

float silu_ref(float v) { return v / (1.0f + std::exp(-v)); }

// A deterministic f16 input in [-8, 8) for element i (no generator state: the checks recompute it at any i).
std::uint16_t input_at(std::uint64_t i) {
  const std::uint64_t h = (i * 0x9E3779B97F4A7C15ull) >> 40;  // 24 bits
  return f32_to_f16_bits(static_cast<float>(h) / static_cast<float>(1u << 24) * 16.0f - 8.0f);
}

}  // namespace

// On a GPU: silu over 2^32 + 300 f16 elements (8 GiB each way) with the default (64-bit) form; the elements around
// 2^31 and 2^32 and the last ones, and a sample of the rest, against the host. Skipped (with the reason) without a
// CUDA device.
TEST(IndexWidth, CudaSiluPast2To32Elements) {
  const BackendSlot cuda = open_backend("cuda");
  if (!cuda.backend) GTEST_SKIP() << "no CUDA device: " << cuda.why_absent;
  const Registry reg = builtin_registry();
  const KernelSpec& silu = *reg.find("silu");
  const Params p{{"n", kPast32}};
  const ir::Kernel k = silu.build(DType::f16, p);
  ASSERT_TRUE(reads_i64_program_id(k));
  const auto n = static_cast<std::size_t>(kPast32);
  std::vector<std::uint16_t> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = input_at(i);
  runtime::Backend& be = *cuda.backend;
  auto x = be.allocate(DType::f16, n);
  auto y = be.allocate(DType::f16, n);
  be.upload(*x, host.data(), n * 2);
  be.launch(k, silu.geometry(DType::f16, p), {runtime::ScalarArg{DType::i64, static_cast<std::uint64_t>(n)}, x, y});
  be.download(*y, host.data(), n * 2);
  std::size_t checked = 0;
  const auto check = [&](std::size_t i) {
    const float want = silu_ref(f16_bits_to_f32(input_at(i)));
    const float got = f16_bits_to_f32(host[i]);
    ASSERT_LE(std::fabs(got - want), 1e-3f * std::fabs(want) + 1e-6f) << "element " << i;
    ++checked;
  };
  for (std::size_t i = 0; i < n; i += 4099) check(i);
  for (const std::size_t at : {std::size_t{1} << 31, std::size_t{1} << 32, n - 4096}) {
    for (std::size_t i = at - 4096; i < std::min(n, at + 4096); ++i) check(i);
  }
  EXPECT_GT(checked, 1000000u);
}

// On a GPU: depthwise_conv1d (bf16, K = 4, pad 3) over a batch of 5 x 2^30-element rows: outputs past 2^32 in the
// 64-bit form, against the host at the ends of every row and a sample.
TEST(IndexWidth, CudaDepthwiseConv1dPast2To32Elements) {
  const BackendSlot cuda = open_backend("cuda");
  if (!cuda.backend) GTEST_SKIP() << "no CUDA device: " << cuda.why_absent;
  const Registry reg = builtin_registry();
  const KernelSpec& dw = *reg.find("depthwise_conv1d");
  constexpr std::int64_t B = 5, C = 1, L = std::int64_t{1} << 30, K = 4, P = 3;
  const Params p{{"B", B}, {"C", C}, {"L", L}, {"K", K}, {"stride", 1}, {"pad", P}, {"dilation", 1}, {"bias", 0}};
  const ir::Kernel k = dw.build(DType::bf16, p);
  ASSERT_TRUE(reads_i64_program_id(k));
  const std::int64_t O = L + 2 * P - (K - 1);
  const auto nx = static_cast<std::size_t>(B * C * L), ny = static_cast<std::size_t>(B * C * O);
  std::vector<std::uint16_t> x(nx);
  for (std::size_t i = 0; i < nx; ++i) x[i] = f32_to_bf16_bits(f16_bits_to_f32(input_at(i)));
  const std::vector<std::uint16_t> w{f32_to_bf16_bits(0.5f), f32_to_bf16_bits(-1.25f), f32_to_bf16_bits(2.0f),
                                     f32_to_bf16_bits(0.75f)};
  runtime::Backend& be = *cuda.backend;
  auto xb = be.allocate(DType::bf16, nx), wb = be.allocate(DType::bf16, w.size()), yb = be.allocate(DType::bf16, ny);
  be.upload(*xb, x.data(), nx * 2);
  be.upload(*wb, w.data(), w.size() * 2);
  be.launch(k, dw.geometry(DType::bf16, p),
            {runtime::ScalarArg{DType::i64, static_cast<std::uint64_t>(B)}, xb, wb, yb});
  std::vector<std::uint16_t> y(ny);
  be.download(*yb, y.data(), ny * 2);
  x.clear();
  x.shrink_to_fit();
  const auto xv = [&](std::int64_t row, std::int64_t pos) -> double {
    if (pos < 0 || pos >= L) return 0.0;
    return bf16_bits_to_f32(f32_to_bf16_bits(f16_bits_to_f32(input_at(static_cast<std::uint64_t>(row * L + pos)))));
  };
  std::size_t checked = 0;
  const auto check = [&](std::int64_t row, std::int64_t o) {
    double want = 0;
    for (std::int64_t t = 0; t < K; ++t) want += xv(row, o + t - P) * bf16_bits_to_f32(w[static_cast<std::size_t>(t)]);
    const double got = bf16_bits_to_f32(y[static_cast<std::size_t>(row * O + o)]);
    ASSERT_LE(std::fabs(got - want), 1e-2 * (std::fabs(want) + 1.0)) << "row " << row << " output " << o;
    ++checked;
  };
  for (std::int64_t row = 0; row < B * C; ++row) {
    for (std::int64_t o = 0; o < 4096; ++o) check(row, o);
    for (std::int64_t o = O - 4096; o < O; ++o) check(row, o);
    for (std::int64_t o = 0; o < O; o += 65537) check(row, o);
  }
  EXPECT_GT(checked, 100000u);
}
