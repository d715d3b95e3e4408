// The CUDA backend.
//
//   CudaCompile.*  compile-only (NVRTC, no GPU): hand-written and emitted kernels give sm_90
//                  CUBINs; compile errors carry NVRTC's log. Skipped where NVRTC is absent.
//   CudaCreate.*   create() refuses cleanly without a driver ("cuda not available: ...").
//   CudaExec.*     need a GPU: results against the interpreter and the oracles, shared memory,
//                  atomics, 2-D grids, poison, argument errors, caller memory and streams, the
//                  disk cache. Skipped with the reason where create() fails.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <optional>
#include <regex>
#include <tuple>

#include "conversions.hpp"
#include "depthwise_conv1d.hpp"
#include "features.hpp"
#include "ingot/codegen/printer.hpp"
#include "ingot/dsl.hpp"
#include "ingot/harness/registry.hpp"
#include "ingot/library.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/cuda.hpp"
#include "ingot/runtime/interp.hpp"
#include "reference.hpp"
#include "shared_kernels.hpp"
#include "vector_add.hpp"

using namespace ingot;
using namespace ingot::dsl;
using namespace ingot::runtime;
using examples::Conv1dShape;
using examples::TailPolicy;

namespace {

// ------------------------------------------------------------------ kernels used below

constexpr const char* kHandVectorAdd = R"(
extern "C" __global__ void hand_vadd(unsigned int n, const float* x, const float* y, float* z) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}
)";

// No extern "C": the entry's symbol is mangled and must be found through NVRTC.
constexpr const char* kHandMangled = R"(
__global__ void hand_scale(unsigned int n, float a, float* y) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * y[i];
}
)";

constexpr const char* kHandBroken = R"(
extern "C" __global__ void broken(unsigned int n, float* y) {
  y[threadIdx.x] = undeclared_identifier_xyz + n;
}
)";

template <class T>
ir::Kernel vector_add_kernel() {
  return passes::optimize(trace("vadd_" + std::string(dtype_name(dtype_of<T>)), examples::vector_add<T>));
}

template <class T>
ir::Kernel conv_kernel(const Conv1dShape& s) {
  return passes::optimize(trace("dwconv1d_" + std::string(dtype_name(dtype_of<T>)),
                                [&](KernelBuilder& b) { examples::depthwise_conv1d<T>(b, s, TailPolicy::Guarded); }));
}

ir::Kernel reverse_kernel() { return passes::optimize(ingot::testing::reverse_kernel()); }

ir::Kernel histogram_kernel() {
  return passes::optimize(trace("histogram", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<u32>("x", n);
    auto h = b.inout<u32>("h", 4);
    auto m = b.inout<i32>("m", 2);
    auto s = b.inout<f32>("s", 1);
    auto i = b.program_id(0);
    auto j = select(i < n, i, 0u);
    auto v = load(x, j);
    if_(i < n, [&] {
      (void)atomic_add(h, v % 4u, 1u);
      (void)atomic_max(m, 0, cast<i32>(v));
      (void)atomic_min(m, 1, cast<i32>(v));
      (void)atomic_add(s, 0, 0.5f);  // exact in any order
    });
  }));
}

ir::Kernel grid2d_kernel() { return passes::optimize(ingot::testing::grid2d_kernel()); }

// Every scalar type by value, in an order that needs padding between them (bool, then i64).
ir::Kernel scalars_kernel() {
  return passes::optimize(trace("scalars", [](KernelBuilder& b) {
    auto flag = b.scalar<bool>("flag");
    auto big = b.scalar<i64>("big");
    auto f = b.scalar<f32>("f");
    auto neg = b.scalar<i32>("neg");
    auto u = b.scalar<u32>("u");
    auto y = b.out<i64>("y", 5);
    if_(b.program_id(0) == 0u, [&] {
      store(y, 0, select(flag, big, cast<i64>(neg)));
      store(y, 1, big);
      store(y, 2, cast<i64>(f * 4.0f));
      store(y, 3, cast<i64>(neg));
      store(y, 4, cast<i64>(u));
    });
  }));
}

ir::Kernel copy_kernel() {
  return passes::optimize(trace("copy_guarded", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<f32>("x", n);
    auto y = b.out<f32>("y", n);
    auto i = b.program_id(0);
    auto v = load(x, select(i < n, i, 0u));
    if_(i < n, [&] { store(y, i, v); });
  }));
}

struct ConvCase {
  Conv1dShape shape;
  std::uint32_t batch;
};
const ConvCase kConvCases[] = {
    {{8, 17, 3, 1, 0, 1}, 1},                            // 8 channels x 15 outputs: 120 outputs, 136 tail threads
    {{3, 19, 3, 1, 0, 1}, 1},                            // 3 x 17 = 51 outputs
    {{8, 17, 3, 1, 0, 1}, 3}, {{5, 40, 4, 2, 3, 2}, 2},  // stride, pad and dilation together
    {{4, 9, 1, 1, 0, 1}, 2},                             // K = 1
};

std::vector<double> iota_values(std::size_t n, double start = 1) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

std::vector<std::uint8_t> read_bytes(Backend& be, const DeviceBuffer& b) {
  std::vector<std::uint8_t> bytes(b.bytes());
  be.download(b, bytes.data(), bytes.size());
  return bytes;
}

bool has_prefix(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

std::filesystem::path fresh_temp_dir(const std::string& tag) {
  const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  auto dir = std::filesystem::temp_directory_path() / ("ingot-test-cuda-" + tag + "-" + std::to_string(stamp));
  std::filesystem::remove_all(dir);
  return dir;
}

// ------------------------------------------------------------------ compile-only fixture

class CudaCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      compiler_.emplace(CudaCompiler::load());
    } catch (const BackendUnavailable& e) {
      GTEST_SKIP() << e.what();
    }
  }
  void expect_cubin(const ir::Kernel& k) {
    SCOPED_TRACE("kernel " + k.name);
    const CudaCompileResult r = compiler_->compile(k);  // default arch: sm_90
    EXPECT_EQ(r.arch, "sm_90");
    EXPECT_TRUE(is_elf_image(r.cubin)) << r.cubin.size() << " bytes";
    EXPECT_FALSE(r.lowered_name.empty());
    EXPECT_NE(r.source.find(r.entry), std::string::npos);
  }
  std::optional<CudaCompiler> compiler_;
};

}  // namespace

TEST_F(CudaCompile, HandWrittenKernelGivesSm90Cubin) {
  const CudaCompileResult r = compiler_->compile_source(kHandVectorAdd, "hand_vadd");
  EXPECT_TRUE(is_elf_image(r.cubin));
  EXPECT_GT(r.cubin.size(), 64u);
  EXPECT_EQ(r.lowered_name, "hand_vadd");
  EXPECT_EQ(r.nvrtc_version, compiler_->version());
  const auto has = [&](const std::string& o) {
    return std::find(r.options.begin(), r.options.end(), o) != r.options.end();
  };
  EXPECT_TRUE(has("--gpu-architecture=sm_90"));
  EXPECT_TRUE(has("--fmad=true"));
  EXPECT_TRUE(has("--ftz=false"));
  EXPECT_TRUE(has("--prec-div=true"));
  EXPECT_TRUE(has("--prec-sqrt=true"));
  EXPECT_FALSE(has("--use_fast_math"));
}

TEST_F(CudaCompile, FmadCanBeTurnedOff) {
  CudaCompileOptions o;
  o.fmad = false;
  const CudaCompileResult r = compiler_->compile_source(kHandVectorAdd, "hand_vadd", o);
  EXPECT_TRUE(is_elf_image(r.cubin));
  EXPECT_NE(std::find(r.options.begin(), r.options.end(), "--fmad=false"), r.options.end());
}

TEST_F(CudaCompile, MangledEntryIsFound) {
  const CudaCompileResult r = compiler_->compile_source(kHandMangled, "hand_scale");
  EXPECT_TRUE(is_elf_image(r.cubin));
  EXPECT_TRUE(has_prefix(r.lowered_name, "_Z")) << r.lowered_name;
  EXPECT_NE(r.lowered_name.find("hand_scale"), std::string::npos) << r.lowered_name;
}

TEST_F(CudaCompile, ComputeArchGivesPtx) {
  CudaCompileOptions o;
  o.arch = "compute_90";
  const CudaCompileResult r = compiler_->compile_source(kHandVectorAdd, "hand_vadd", o);
  EXPECT_TRUE(r.cubin.empty());
  EXPECT_NE(r.ptx.find(".entry hand_vadd"), std::string::npos) << r.ptx;
}

TEST_F(CudaCompile, Sm90IsSupported) {
  const auto archs = compiler_->supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
}

TEST_F(CudaCompile, CompileErrorCarriesTheNvrtcLog) {
  try {
    (void)compiler_->compile_source(kHandBroken, "broken");
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    const std::string msg = e.what();
    EXPECT_NE(e.log.find("undeclared_identifier_xyz"), std::string::npos) << e.log;
    EXPECT_NE(e.log.find("error"), std::string::npos) << e.log;
    EXPECT_NE(msg.find(e.log), std::string::npos) << msg;
    EXPECT_NE(msg.find("kernel 'broken'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("sm_90"), std::string::npos) << msg;
  }
}

TEST_F(CudaCompile, MissingEntryIsACompileError) {
  try {
    (void)compiler_->compile_source(kHandVectorAdd, "no_such_kernel");
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos) << e.what();
  }
}

TEST_F(CudaCompile, BadArchitecturesAreRefused) {
  CudaCompileOptions o;
  o.arch = "sm90";
  EXPECT_THROW((void)compiler_->compile_source(kHandVectorAdd, "hand_vadd", o), std::invalid_argument);
  o.arch = "sm_20";  // long gone from NVRTC
  try {
    (void)compiler_->compile_source(kHandVectorAdd, "hand_vadd", o);
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("does not support sm_20"), std::string::npos) << e.what();
  }
}

TEST_F(CudaCompile, EmittedKernelsNeedSm80) {
  const auto archs = compiler_->supported_archs();
  const auto old = std::find_if(archs.begin(), archs.end(), [](int a) { return a < 80; });
  if (old == archs.end()) GTEST_SKIP() << "this NVRTC supports no architecture before sm_80";
  CudaCompileOptions o;
  o.arch = "sm_" + std::to_string(*old);
  try {
    (void)compiler_->compile(vector_add_kernel<bf16>(), o);
    FAIL() << "expected a CompileError for " << o.arch;
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("need sm_80 or newer"), std::string::npos) << e.what();
  }
}

TEST(CudaCompileUnavailable, MissingNvrtcIsBackendUnavailable) {
  try {
    (void)CudaCompiler::load("/nonexistent/libnvrtc.so.13");
    FAIL();
  } catch (const BackendUnavailable& e) {
    EXPECT_TRUE(has_prefix(e.what(), "cuda not available: NVRTC not found")) << e.what();
  }
}

TEST_F(CudaCompile, VectorAddInAllFloatTypes) {
  expect_cubin(vector_add_kernel<f32>());
  expect_cubin(vector_add_kernel<f16>());
  expect_cubin(vector_add_kernel<bf16>());
}

TEST_F(CudaCompile, GuardedDepthwiseConv1dInAllFloatTypes) {
  for (const auto& c : kConvCases) {
    expect_cubin(conv_kernel<f32>(c.shape));
    expect_cubin(conv_kernel<f16>(c.shape));
    expect_cubin(conv_kernel<bf16>(c.shape));
  }
}

TEST_F(CudaCompile, ExecutionTestKernels) {
  expect_cubin(reverse_kernel());
  expect_cubin(histogram_kernel());
  expect_cubin(grid2d_kernel());
  expect_cubin(scalars_kernel());
  expect_cubin(passes::optimize(ingot::testing::vector_reverse_kernel<bf16>(8)));
  expect_cubin(passes::optimize(ingot::testing::vector_reverse_kernel<i8>(4)));
  expect_cubin(passes::optimize(ingot::testing::shared_vector_kernel<bf16>(8)));
  expect_cubin(copy_kernel());
  expect_cubin(passes::optimize(trace("features", examples::features)));
  expect_cubin(passes::optimize(ingot::testing::shuffle_kernel(8)));
  // Tensor-core mma: operands rounded by the pack helper (f32 buffers) or packed as they are (bf16/f16 buffers).
  expect_cubin(passes::optimize(ingot::testing::mma_kernel<bf16, f32>()));
  expect_cubin(passes::optimize(ingot::testing::mma_kernel<f16, f16>()));
  const std::string mma_src =
      ingot::codegen::emit(passes::optimize(ingot::testing::mma_kernel<bf16, bf16>()), ingot::codegen::Target::CUDA)
          .source;
  EXPECT_NE(mma_src.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), std::string::npos);
  EXPECT_EQ(mma_src.find("ingot_pack_bf16x2("), std::string::npos) << mma_src;
  // Asynchronous copies: cp.async of 16, 8 and 4 bytes, commit and wait.
  for (const auto& k : {ingot::testing::async_copy_kernel<bf16>(8), ingot::testing::async_copy_kernel<f32>(2),
                        ingot::testing::async_copy_kernel<f16>(2)}) {
    expect_cubin(passes::optimize(k));
  }
  const std::string async_src =
      ingot::codegen::emit(passes::optimize(ingot::testing::async_copy_kernel<bf16>(8)), ingot::codegen::Target::CUDA)
          .source;
  EXPECT_NE(async_src.find("cp.async.cg.shared.global [%0], [%1], 16, %2;"), std::string::npos) << async_src;
  EXPECT_NE(async_src.find("cp.async.wait_group 1;"), std::string::npos) << async_src;
  // The library's tensor-core kernel (conv2d_grouped, 16-bit default where it applies).
  const harness::Registry reg = harness::builtin_registry();
  const harness::KernelSpec* g2 = reg.find("conv2d_grouped");
  ASSERT_NE(g2, nullptr);
  for (const auto& b : g2->bench) {
    if (b.name != "N32_C256_56x56_3x3_g32") continue;
    expect_cubin(passes::optimize(g2->build(DType::bf16, b.params)));
    expect_cubin(passes::optimize(g2->build(DType::f16, b.params)));
  }
  EXPECT_NE(
      ingot::codegen::emit(ingot::testing::shuffle_kernel(8), ingot::codegen::Target::CUDA).source.find("__shfl_sync("),
      std::string::npos);
}

// Shared memory through 32-bit addresses (the dialect's shared_base): NVRTC compiles an indexed __shared__ array with
// 64-bit address arithmetic (nvcc with 32-bit), which cost the NHWC 7x7 tensor-core kernel 124 registers against 74.
// Every shared access of the PTX (loads, stores, vector accesses, ldmatrix, cp.async) must take a 32-bit register.
TEST_F(CudaCompile, SharedMemoryIsAddressedIn32Bits) {
  const harness::Registry reg = harness::builtin_registry();
  const harness::KernelSpec* nhwc = reg.find("depthwise_conv2d_nhwc");
  ASSERT_NE(nhwc, nullptr);
  std::vector<ir::Kernel> kernels{passes::optimize(trace("features", examples::features)),
                                  passes::optimize(ingot::testing::shared_vector_kernel<bf16>(8)),
                                  passes::optimize(ingot::testing::async_copy_kernel<bf16>(8))};
  for (const auto& b : nhwc->bench) {  // the 16-bit 7x7 default: ldmatrix, cp.async, 2- and 16-byte accesses
    if (b.name == "N32_C384_56x56_7x7") kernels.push_back(passes::optimize(nhwc->build(DType::bf16, b.params)));
  }
  ASSERT_EQ(kernels.size(), 4u);
  // every element width (1, 2, 4, 8 bytes) through its helper
  kernels.push_back(passes::optimize(ingot::testing::reverse_kernel<i8>()));
  kernels.push_back(passes::optimize(ingot::testing::reverse_kernel<u8>()));
  kernels.push_back(passes::optimize(ingot::testing::reverse_kernel<u16>()));
  kernels.push_back(passes::optimize(ingot::testing::reverse_kernel<f32>()));
  kernels.push_back(passes::optimize(ingot::testing::reverse_kernel<i64>()));
  kernels.push_back(passes::optimize(ingot::testing::shared_vector_kernel<i8>(4)));  // one word of four bytes
  kernels.push_back(passes::optimize(ingot::testing::shared_vector_kernel<f32>(2)));
  static const std::regex shared_access(
      R"re((ld|st|ldmatrix|cp\.async)[.a-z0-9]*\.shared[.a-z0-9]*\s[^;\[]*\[%(r|rd)[0-9]+)re");
  for (const auto& k : kernels) {
    SCOPED_TRACE("kernel " + k.name);
    const CudaCompileResult r = compiler_->compile(k);
    if (r.ptx.empty()) GTEST_SKIP() << "this NVRTC gives no PTX for sm_90";
    std::size_t narrow = 0, wide = 0;
    for (auto it = std::sregex_iterator(r.ptx.begin(), r.ptx.end(), shared_access); it != std::sregex_iterator();
         ++it) {
      ((*it)[2] == "rd" ? wide : narrow) += 1;
    }
    EXPECT_GT(narrow, 0u);
    EXPECT_EQ(wide, 0u) << r.ptx;
  }
}

TEST_F(CudaCompile, FreeFunctionCompilesForSm90) {
  const CudaCompileResult r = compile_cuda(vector_add_kernel<f32>());
  EXPECT_TRUE(is_elf_image(r.cubin));
}

// ------------------------------------------------------------------ create()

TEST(CudaCreate, RefusesCleanlyWithoutADriver) {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver) {
    dlclose(driver);
    // A driver is installed: create() either works or names why not.
    try {
      auto be = CudaBackend::create();
      EXPECT_TRUE(has_prefix(be->device_info().arch, "sm_"));
    } catch (const BackendUnavailable& e) {
      EXPECT_TRUE(has_prefix(e.what(), "cuda not available: ")) << e.what();
    }
    return;
  }
  try {
    (void)CudaBackend::create();
    FAIL() << "create() succeeded without libcuda.so.1";
  } catch (const BackendUnavailable& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(has_prefix(msg, "cuda not available: libcuda.so.1 not found")) << msg;
  }
}

TEST(CudaCreate, NamedDriverLibraryThatDoesNotExist) {
  CudaOptions o;
  o.driver_library = "/nonexistent/libcuda.so.1";
  try {
    (void)CudaBackend::create(o);
    FAIL();
  } catch (const BackendUnavailable& e) {
    EXPECT_TRUE(has_prefix(e.what(), "cuda not available: libcuda.so.1 not found")) << e.what();
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libcuda.so.1"), std::string::npos) << e.what();
  }
}

// ------------------------------------------------------------------ execution (GPU)

namespace {

class CudaExec : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_dir_ = fresh_temp_dir("exec");
    CudaOptions o;
    o.cache_dir = cache_dir_;
    try {
      be_ = CudaBackend::create(o);
    } catch (const BackendUnavailable& e) {
      GTEST_SKIP() << e.what();
    }
  }
  void TearDown() override {
    be_.reset();
    std::error_code ec;
    std::filesystem::remove_all(cache_dir_, ec);
  }

  template <class T>
  void check_vector_add(std::uint32_t n) {
    SCOPED_TRACE("vector_add " + std::string(dtype_name(dtype_of<T>)) + " n=" + std::to_string(n));
    const DType t = dtype_of<T>;
    const auto k = vector_add_kernel<T>();
    const auto x = examples::random_values(t, n, 11, -100, 100);
    const auto y = examples::random_values(t, n, 12, -100, 100);
    Interpreter ref;
    auto rz = ref.allocate(t, n);
    ref.launch(k, grid_1d(n, 256), {scalar_arg<u32>(n), make_buffer(ref, t, x), make_buffer(ref, t, y), rz});
    auto gz = be_->allocate(t, n);
    be_->launch(k, grid_1d(n, 256), {scalar_arg<u32>(n), make_buffer(*be_, t, x), make_buffer(*be_, t, y), gz});
    EXPECT_EQ(read_bytes(*be_, *gz), read_bytes(ref, *rz));  // bit-exact
  }

  template <class T>
  void check_conv(const ConvCase& c) {
    const auto& s = c.shape;
    SCOPED_TRACE("conv " + std::string(dtype_name(dtype_of<T>)) + " C=" + std::to_string(s.channels) + " L=" +
                 std::to_string(s.length) + " K=" + std::to_string(s.ksize) + " batch=" + std::to_string(c.batch));
    const DType t = dtype_of<T>;
    const auto k = conv_kernel<T>(s);
    const std::size_t n = std::size_t{c.batch} * s.channels * s.out_len();
    const auto x = examples::random_values(t, std::size_t{c.batch} * s.channels * s.length, 100 + s.channels);
    const auto w = examples::random_values(t, std::size_t{s.channels} * s.ksize, 200 + s.ksize);
    const std::vector<Arg> shape_args = {scalar_arg<u32>(c.batch)};

    Interpreter ref;
    auto ry = ref.allocate(t, n);
    ref.launch(k, grid_1d(n, 256), {scalar_arg<u32>(c.batch), make_buffer(ref, t, x), make_buffer(ref, t, w), ry});
    auto gy = be_->allocate(t, n);
    be_->launch(k, grid_1d(n, 256), {scalar_arg<u32>(c.batch), make_buffer(*be_, t, x), make_buffer(*be_, t, w), gy});

    const auto got = read_buffer(*be_, *gy);
    const auto interp = read_buffer(ref, *ry);
    const auto want = examples::depthwise_conv1d_reference(s, c.batch, x, w);
    const auto tol = examples::conv_tolerance(t, s.ksize);
    EXPECT_EQ(examples::first_mismatch(want, got, tol), -1);
    EXPECT_EQ(examples::first_mismatch(interp, got, tol), -1);
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_FALSE(std::isnan(got[i])) << "element " << i << " unwritten";
  }

  std::filesystem::path cache_dir_;
  std::unique_ptr<CudaBackend> be_;
};

}  // namespace

TEST_F(CudaExec, DeviceInfo) {
  const auto& info = be_->device_info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_EQ(info.arch, "sm_" + std::to_string(info.compute_major * 10 + info.compute_minor));
  EXPECT_GT(info.sm_count, 0);
  EXPECT_GT(info.total_memory, 0u);
  EXPECT_GE(info.max_threads_per_block, 256);
  EXPECT_GT(info.driver_version, 0);
  EXPECT_FALSE(info.nvrtc_version.empty());
  EXPECT_NE(be_->stream(), nullptr);
  std::cout << info.describe() << "\n";
}

TEST_F(CudaExec, VectorAddBitExactWithTheInterpreter) {
  for (std::uint32_t n : {1u, 255u, 257u, 1000u}) {
    check_vector_add<f32>(n);
    check_vector_add<f16>(n);
    check_vector_add<bf16>(n);
  }
}

TEST_F(CudaExec, GuardedDepthwiseConv1dF32) {
  for (const auto& c : kConvCases) check_conv<f32>(c);
}
TEST_F(CudaExec, GuardedDepthwiseConv1dF16) {
  for (const auto& c : kConvCases) check_conv<f16>(c);
}
TEST_F(CudaExec, GuardedDepthwiseConv1dBf16) {
  for (const auto& c : kConvCases) check_conv<bf16>(c);
}

TEST_F(CudaExec, SharedMemoryReverseWithBarrier) {
  const auto k = reverse_kernel();
  auto x = make_buffer(*be_, DType::i32, iota_values(64, 0));
  auto y = be_->allocate(DType::i32, 64);
  be_->launch(k, grid_1d(64, 32), {scalar_arg<u32>(64), x, y});
  const auto out = read_buffer(*be_, *y);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], (i / 32) * 32 + 31 - i % 32) << i;
}

// Native __shfl_sync at every width, with tail threads (the interpreter's definition).
TEST_F(CudaExec, ShufflesMatchTheirDefinition) {
  for (const std::uint32_t lanes : {2u, 8u, 32u}) {
    ingot::testing::expect_shuffle(*be_, lanes, 128, 128, 64);
    ingot::testing::expect_shuffle(*be_, lanes, 100, 128, 32);
  }
}

// Tensor-core mma against the definition (the interpreter's), both element types, from f32
// operands (rounded on the way) and from 16-bit buffers (packed as they are), with a tail warp.
TEST_F(CudaExec, MmaMatchesItsDefinition) {
  ingot::testing::expect_mma<bf16, f32>(*be_, 3, 128, 64);
  ingot::testing::expect_mma<f16, f32>(*be_, 2, 64, 32);
  ingot::testing::expect_mma<bf16, bf16>(*be_, 3, 128, 64);
  ingot::testing::expect_mma<f16, f16>(*be_, 2, 64, 64);
}

// x: fractions, or integers for the integer types.
std::vector<double> vector_reverse_input(DType t) {
  std::vector<double> x(128);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = (t == DType::i8 || t == DType::i32) ? static_cast<double>(i) - 60.0 : static_cast<double>(i) * 0.25 - 9.0;
  }
  return x;
}

TEST_F(CudaExec, SharedArraysTakeVectorAccess) {
  std::vector<double> x(2 * 64 * 8);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 61) * 0.25 - 7.0;
  ingot::testing::expect_shared_vector<bf16>(*be_, DType::bf16, 8, x);
  ingot::testing::expect_shared_vector<f32>(*be_, DType::f32, 4, x);
  ingot::testing::expect_shared_vector<f16>(*be_, DType::f16, 2, x);
}

// Scalar shared accesses of every element width (the 1-, 2-, 4- and 8-byte helpers of the 32-bit addressing).
TEST_F(CudaExec, SharedArraysOfEveryWidth) {
  std::vector<double> x(2 * 64), xs(2 * 64);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<double>(i % 100) - 50.0;
    xs[i] = static_cast<double>(i * 7 % 128) * 0.25 - 9.0;
  }
  std::vector<double> xu(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) xu[i] = static_cast<double>((i * 37) % 251);
  ingot::testing::expect_reverse<i8>(*be_, DType::i8, x);
  ingot::testing::expect_reverse<u8>(*be_, DType::u8, xu);
  ingot::testing::expect_reverse<u16>(*be_, DType::u16, xu);
  ingot::testing::expect_reverse<i32>(*be_, DType::i32, x);
  ingot::testing::expect_reverse<i64>(*be_, DType::i64, x);
  ingot::testing::expect_reverse<f32>(*be_, DType::f32, xs);
  ingot::testing::expect_reverse<bf16>(*be_, DType::bf16, xs);
}

// Asynchronous copies (cp.async, zero fill where the condition is false) through two buffers.
TEST_F(CudaExec, AsyncCopiesLand) {
  std::vector<double> x(2 * 3 * 512 - 552);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 61) * 0.25 - 7.0;
  ingot::testing::expect_async_copy<bf16>(*be_, DType::bf16, 8, x, 2);
  ingot::testing::expect_async_copy<f32>(*be_, DType::f32, 4, x, 4);
  ingot::testing::expect_async_copy<f16>(*be_, DType::f16, 2, x, 7);
}

TEST_F(CudaExec, VectorAccessMovesWholeVectorsInLaneOrder) {
  ingot::testing::expect_vector_reverse<f32>(*be_, DType::f32, 4, vector_reverse_input(DType::f32), 8);
  ingot::testing::expect_vector_reverse<f32>(*be_, DType::f32, 2, vector_reverse_input(DType::f32), 8);
  ingot::testing::expect_vector_reverse<bf16>(*be_, DType::bf16, 8, vector_reverse_input(DType::bf16), 8);
  ingot::testing::expect_vector_reverse<f16>(*be_, DType::f16, 4, vector_reverse_input(DType::f16), 8);
  ingot::testing::expect_vector_reverse<f16>(*be_, DType::f16, 2, vector_reverse_input(DType::f16), 8);
  ingot::testing::expect_vector_reverse<i8>(*be_, DType::i8, 16, vector_reverse_input(DType::i8), 8);
  ingot::testing::expect_vector_reverse<i32>(*be_, DType::i32, 4, vector_reverse_input(DType::i32), 8);
}

TEST_F(CudaExec, Atomics) {
  const auto k = histogram_kernel();
  const std::uint32_t n = 1000;
  auto x = make_buffer(*be_, DType::u32, iota_values(n, 0));  // 0..999
  auto h = make_buffer(*be_, DType::u32, {0, 0, 0, 0});
  auto m = make_buffer(*be_, DType::i32, {-100, 100});
  auto s = make_buffer(*be_, DType::f32, {0});
  be_->launch(k, grid_1d(n, 128), {scalar_arg<u32>(n), x, h, m, s});
  EXPECT_EQ(read_buffer(*be_, *h), (std::vector<double>{250, 250, 250, 250}));
  EXPECT_EQ(read_buffer(*be_, *m), (std::vector<double>{999, 0}));
  EXPECT_EQ(read_buffer(*be_, *s), (std::vector<double>{500}));
}

TEST_F(CudaExec, TwoDimensionalGrid) {
  const auto k = grid2d_kernel();
  auto y = be_->allocate(DType::u32, 35);
  be_->launch(k, grid_2d(7, 5, 4, 2), {scalar_arg<u32>(7), scalar_arg<u32>(5), y});
  const auto out = read_buffer(*be_, *y);
  for (u32 r = 0; r < 5; ++r)
    for (u32 c = 0; c < 7; ++c) EXPECT_EQ(out[r * 7 + c], r * 100 + c) << r << "," << c;
}

// Every construct the printer handles (shared memory, barrier, loop, if/else, integer and f32
// atomics, math functions, 16-bit conversions) against the interpreter.
TEST_F(CudaExec, FeaturesKernelAgreesWithTheInterpreter) {
  const auto k = passes::optimize(trace("features", examples::features));
  const std::uint32_t n = 200;  // 4 groups of 64, 56 tail threads
  const auto x = examples::random_values(DType::f16, n, 5, -2, 2);
  const std::vector<double> counts0 = {0, 0, 0, -50, 0};
  auto run = [&](Backend& be) {
    auto bx = make_buffer(be, DType::f16, x);
    auto by = be.allocate(DType::bf16, n);
    auto bc = make_buffer(be, DType::i32, counts0);
    auto bt = make_buffer(be, DType::f32, {0});
    be.launch(k, grid_1d(n, 64), {scalar_arg<u32>(n), scalar_arg<f32>(0.25f), bx, by, bc, bt});
    return std::make_tuple(read_buffer(be, *by), read_buffer(be, *bc), read_buffer(be, *bt));
  };
  Interpreter ref;
  const auto [want_y, want_counts, want_total] = run(ref);
  const auto [got_y, got_counts, got_total] = run(*be_);
  // bf16 output: one rounding step of difference (2^-8 relative, 2^-6 absolute near 3).
  EXPECT_EQ(examples::first_mismatch(want_y, got_y, {2e-2, 1e-2}), -1);
  EXPECT_EQ(got_counts, want_counts);  // integer atomics: order-independent
  ASSERT_EQ(got_total.size(), 1u);
  EXPECT_NEAR(got_total[0], want_total[0], 1e-4 * (1 + std::fabs(want_total[0])));
}

TEST_F(CudaExec, ScalarsPassByValue) {
  const auto k = scalars_kernel();
  auto y = be_->allocate(DType::i64, 5);
  const std::int64_t big = -(std::int64_t{1} << 40) - 3;
  be_->launch(k, grid_1d(1, 32),
              {scalar_arg<bool>(true), scalar_arg<i64>(big), scalar_arg<f32>(2.5f), scalar_arg<i32>(-17),
               scalar_arg<u32>(4000000000u), y});
  std::vector<std::int64_t> out(5);
  be_->download(*y, out.data(), 40);
  EXPECT_EQ(out, (std::vector<std::int64_t>{big, big, 10, -17, 4000000000}));
  be_->launch(
      k, grid_1d(1, 32),
      {scalar_arg<bool>(false), scalar_arg<i64>(1), scalar_arg<f32>(-1.0f), scalar_arg<i32>(5), scalar_arg<u32>(0), y});
  be_->download(*y, out.data(), 40);
  EXPECT_EQ(out, (std::vector<std::int64_t>{5, 1, -4, 5, 0}));
}

TEST_F(CudaExec, FreshBuffersArePoisoned) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::i32, DType::u8, DType::i64}) {
    auto b = be_->allocate(t, 37);
    EXPECT_EQ(read_bytes(*be_, *b), poison_bytes(t, 37)) << dtype_name(t);
  }
  auto f = be_->allocate(DType::f32, 3);
  EXPECT_TRUE(std::isnan(read_buffer(*be_, *f)[0]));
  auto empty = be_->allocate(DType::f32, 0);
  EXPECT_EQ(empty->count(), 0u);
  EXPECT_EQ(be_->device_pointer(*empty), 0u);
}

TEST_F(CudaExec, ArgumentErrorsAreRefusedBeforeLaunch) {
  const auto k = copy_kernel();
  auto x = make_buffer(*be_, DType::f32, iota_values(100));
  auto small = be_->allocate(DType::f32, 50);
  auto halfs = be_->allocate(DType::f16, 100);
  auto y = be_->allocate(DType::f32, 100);
  Interpreter other;
  auto foreign = other.allocate(DType::f32, 100);
  auto expect_error = [&](const std::vector<Arg>& args, const std::string& needle, LaunchGeometry g) {
    try {
      be_->launch(k, g, args);
      ADD_FAILURE() << "expected ArgumentError containing: " << needle;
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const auto g = grid_1d(100, 64);
  expect_error({scalar_arg<u32>(100), x}, "takes 3 arguments, got 2", g);
  expect_error({scalar_arg<i32>(100), x, y}, "expected a scalar of u32, got i32", g);
  expect_error({scalar_arg<u32>(100), halfs, y}, "expected a buffer of f32, got a buffer of f16", g);
  expect_error({x, x, y}, "expected a scalar, got a buffer", g);
  expect_error({scalar_arg<u32>(100), x, small}, "buffer 'y' has 50 elements but its declared extent n needs 100", g);
  expect_error({scalar_arg<u32>(100), x, foreign}, "not 'cuda'", g);
  LaunchGeometry big;
  big.group_size = {2048, 1, 1};
  expect_error({scalar_arg<u32>(100), x, y}, "kernel 'copy_guarded'", big);
  LaunchGeometry zero;
  zero.group_size = {0, 1, 1};
  expect_error({scalar_arg<u32>(100), x, y}, "kernel 'copy_guarded'", zero);
  LaunchGeometry deep;
  deep.group_size = {1, 1, 128};  // z is limited to 64 threads
  expect_error({scalar_arg<u32>(100), x, y}, "axis 2", deep);
  EXPECT_EQ(be_->stats().launches, 0u);
  // nothing was written by the refused launches
  EXPECT_EQ(read_bytes(*be_, *y), poison_bytes(DType::f32, 100));

  std::vector<float> three(3);
  EXPECT_THROW(be_->upload(*y, three.data(), 12), ArgumentError);
  EXPECT_THROW(be_->download(*y, three.data(), 12), ArgumentError);
  EXPECT_THROW(be_->upload(*foreign, three.data(), 400), ArgumentError);
}

TEST_F(CudaExec, CallerOwnedDeviceMemory) {
  const auto k = copy_kernel();
  // Stands for memory the caller allocated (4096 bytes: no allocation-granularity ambiguity).
  auto owner = be_->allocate(DType::f32, 1024);
  const std::uint64_t ptr = be_->device_pointer(*owner);
  ASSERT_NE(ptr, 0u);
  {
    auto wrapped = be_->wrap_device_buffer(ptr, DType::f32, 1024);
    EXPECT_EQ(be_->device_pointer(*wrapped), ptr);
    auto x = make_buffer(*be_, DType::f32, iota_values(1024));
    be_->launch(k, grid_1d(1024, 256), {scalar_arg<u32>(1024), x, wrapped});
    EXPECT_EQ(read_buffer(*be_, *wrapped), iota_values(1024));
    // A view of part of it is fine too.
    auto part = be_->wrap_device_buffer(ptr + 40, DType::f32, 10);
    EXPECT_EQ(read_buffer(*be_, *part), iota_values(10, 11));
  }
  // The wrappers are gone; the memory was not freed and still holds the result.
  EXPECT_EQ(read_buffer(*be_, *owner), iota_values(1024));
  EXPECT_THROW((void)be_->wrap_device_buffer(ptr, DType::f32, 1025), ArgumentError);
  EXPECT_THROW((void)be_->wrap_device_buffer(ptr + 8, DType::f32, 1024), ArgumentError);
  EXPECT_THROW((void)be_->wrap_device_buffer(0, DType::f32, 1), ArgumentError);
}

TEST_F(CudaExec, CallerStream) {
  CudaOptions o;
  o.stream = be_->stream();  // a stream of the same primary context, owned by someone else
  o.use_cache = false;
  {
    auto second = CudaBackend::create(o);
    EXPECT_EQ(second->stream(), be_->stream());
    const auto k = copy_kernel();
    auto x = make_buffer(*second, DType::f32, iota_values(10));
    auto y = second->allocate(DType::f32, 10);
    second->launch(k, grid_1d(10, 32), {scalar_arg<u32>(10), x, y});
    EXPECT_EQ(read_buffer(*second, *y), iota_values(10));
  }
  // The borrowed stream was not destroyed with the second backend.
  be_->synchronize();
  auto z = make_buffer(*be_, DType::f32, iota_values(4));
  EXPECT_EQ(read_buffer(*be_, *z), iota_values(4));
}

TEST_F(CudaExec, BuffersOutliveTheirBackend) {
  BufferPtr kept;
  {
    auto other = CudaBackend::create();
    kept = make_buffer(*other, DType::f32, iota_values(8));
  }
  kept.reset();  // freed through the context the buffer keeps alive
  SUCCEED();
}

TEST_F(CudaExec, SecondCompileHitsTheDiskCache) {
  const auto k = vector_add_kernel<f32>();
  auto run = [&](CudaBackend& be) {
    auto x = make_buffer(be, DType::f32, iota_values(300));
    auto y = make_buffer(be, DType::f32, iota_values(300, 1000));
    auto z = be.allocate(DType::f32, 300);
    be.launch(k, grid_1d(300, 128), {scalar_arg<u32>(300), x, y, z});
    const auto out = read_buffer(be, *z);
    for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], 2.0 * static_cast<double>(i) + 1001.0) << i;
  };
  run(*be_);
  EXPECT_EQ(be_->stats().nvrtc_compiles, 1u);
  EXPECT_EQ(be_->stats().disk_cache_hits, 0u);
  run(*be_);  // same backend: already loaded
  EXPECT_EQ(be_->stats().nvrtc_compiles, 1u);
  EXPECT_EQ(be_->stats().memory_cache_hits, 1u);
  EXPECT_FALSE(std::filesystem::is_empty(cache_dir_));

  CudaOptions o;
  o.cache_dir = cache_dir_;
  auto fresh = CudaBackend::create(o);
  run(*fresh);
  EXPECT_EQ(fresh->stats().nvrtc_compiles, 0u);
  EXPECT_EQ(fresh->stats().disk_cache_hits, 1u);

  o.use_cache = false;
  auto uncached = CudaBackend::create(o);
  run(*uncached);
  EXPECT_EQ(uncached->stats().nvrtc_compiles, 1u);
  EXPECT_EQ(uncached->stats().disk_cache_hits, 0u);
}

TEST_F(CudaExec, SixteenBitConversionsMatchTheHostBitForBit) { ingot::testing::expect_conversions_match_host(*be_); }
