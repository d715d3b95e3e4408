// The CUDA backend's host side against a fake driver (tests/support/fake_cuda_driver.cpp), so
// it runs on machines without a GPU: device discovery and its failures, the context
// discipline (every call made with the context current, retains released), buffers, poison,
// caller memory and streams, the compile -> disk cache -> module path, launch parameters and
// argument checking. Needs NVRTC (real compiles); skipped without it.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <numeric>

#include "ingot/codegen/printer.hpp"
#include "ingot/dsl.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/cuda.hpp"
#include "ingot/runtime/interp.hpp"
#include "vector_add.hpp"

using namespace ingot;
using namespace ingot::dsl;
using namespace ingot::runtime;

namespace {

struct FakeCudaCounters {
  int retains;
  int current_depth;
  int context_violations;
  std::size_t live_allocations;
  std::size_t allocations_made;
  std::size_t frees;
  std::size_t live_streams;
  std::size_t live_modules;
  std::size_t modules_loaded;
  std::size_t launches;
  unsigned last_grid[3];
  unsigned last_block[3];
  void* last_stream;
  unsigned last_shared;
};

bool has_prefix(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool contains(const std::string& s, const std::string& p) { return s.find(p) != std::string::npos; }

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

class CudaFakeDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      (void)CudaCompiler::load();
    } catch (const BackendUnavailable& e) {
      GTEST_SKIP() << e.what();
    }
    lib_ = dlopen(INGOT_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib_, nullptr) << dlerror();
    reset_ = reinterpret_cast<void (*)(int, int, int)>(dlsym(lib_, "fake_cuda_reset"));
    counters_ = reinterpret_cast<void (*)(FakeCudaCounters*)>(dlsym(lib_, "fake_cuda_counters"));
    expect_params_ = reinterpret_cast<void (*)(std::size_t)>(dlsym(lib_, "fake_cuda_expect_params"));
    last_param_ = reinterpret_cast<std::uint64_t (*)(std::size_t)>(dlsym(lib_, "fake_cuda_last_param"));
    fail_next_sync_ = reinterpret_cast<void (*)(int)>(dlsym(lib_, "fake_cuda_fail_next_sync"));
    ASSERT_TRUE(reset_ && counters_ && expect_params_ && last_param_ && fail_next_sync_);
    reset_(0, 1, 1024);
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    cache_dir_ = std::filesystem::temp_directory_path() / ("ingot-test-cuda-fake-" + std::to_string(stamp));
    options_.driver_library = INGOT_FAKE_CUDA_DRIVER;
    options_.cache_dir = cache_dir_;
  }
  void TearDown() override {
    if (!lib_) return;
    be_.reset();
    const FakeCudaCounters c = counters();
    EXPECT_EQ(c.retains, 0) << "primary context retains not released";
    EXPECT_EQ(c.current_depth, 0) << "context pushes not popped";
    EXPECT_EQ(c.context_violations, 0) << "driver calls made without a current context";
    EXPECT_EQ(c.live_allocations, 0u) << "device memory leaked";
    EXPECT_EQ(c.live_streams, 0u) << "stream leaked";
    EXPECT_EQ(c.live_modules, 0u) << "module leaked";
    dlclose(lib_);
    std::error_code ec;
    std::filesystem::remove_all(cache_dir_, ec);
  }

  CudaBackend& backend() {
    if (!be_) be_ = CudaBackend::create(options_);
    return *be_;
  }
  FakeCudaCounters counters() const {
    FakeCudaCounters c{};
    counters_(&c);
    return c;
  }
  std::string create_error(const CudaOptions& o) {
    try {
      (void)CudaBackend::create(o);
    } catch (const BackendUnavailable& e) {
      return e.what();
    }
    return "(create succeeded)";
  }

  void* lib_ = nullptr;
  void (*reset_)(int, int, int) = nullptr;
  void (*counters_)(FakeCudaCounters*) = nullptr;
  void (*expect_params_)(std::size_t) = nullptr;
  std::uint64_t (*last_param_)(std::size_t) = nullptr;
  void (*fail_next_sync_)(int) = nullptr;
  std::filesystem::path cache_dir_;
  CudaOptions options_;
  std::unique_ptr<CudaBackend> be_;
};

ir::Kernel scalars_kernel() {
  return passes::optimize(trace("scalars", [](KernelBuilder& b) {
    auto flag = b.scalar<bool>("flag");
    auto big = b.scalar<i64>("big");
    auto f = b.scalar<f32>("f");
    auto neg = b.scalar<i32>("neg");
    auto y = b.out<i64>("y", 2);
    if_(b.program_id(0) == 0u, [&] {
      store(y, 0, select(flag, big, cast<i64>(neg)));
      store(y, 1, cast<i64>(f));
    });
  }));
}

}  // namespace

TEST_F(CudaFakeDriver, CreateReportsTheDevice) {
  auto& be = backend();
  const auto& info = be.device_info();
  EXPECT_EQ(info.name, "Fake H200");
  EXPECT_EQ(info.arch, "sm_90");
  EXPECT_EQ(info.compute_major, 9);
  EXPECT_EQ(info.compute_minor, 0);
  EXPECT_EQ(info.sm_count, 132);
  EXPECT_EQ(info.total_memory, std::uint64_t{141} << 30);
  EXPECT_EQ(info.max_threads_per_block, 1024);
  EXPECT_EQ(info.max_block_dim[2], 64);
  EXPECT_EQ(info.driver_version, 13000);
  EXPECT_FALSE(info.nvrtc_version.empty());
  EXPECT_FALSE(info.nvrtc_library.empty());
  EXPECT_TRUE(contains(info.describe(), "Fake H200 (sm_90, 132 SMs")) << info.describe();
  EXPECT_EQ(be.name(), "cuda");
  const auto c = counters();
  EXPECT_EQ(c.retains, 1);
  EXPECT_EQ(c.live_streams, 1u);
  EXPECT_EQ(c.current_depth, 0);
}

TEST_F(CudaFakeDriver, CuInitFailureIsNamed) {
  reset_(100, 1, 1024);  // CUDA_ERROR_NO_DEVICE
  EXPECT_EQ(create_error(options_),
            "cuda not available: cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
}

TEST_F(CudaFakeDriver, NoDevice) {
  reset_(0, 0, 1024);
  EXPECT_TRUE(has_prefix(create_error(options_), "cuda not available: no device")) << create_error(options_);
}

TEST_F(CudaFakeDriver, DeviceOrdinalOutOfRange) {
  CudaOptions o = options_;
  o.device = 3;
  EXPECT_EQ(create_error(o), "cuda not available: device 3 requested, but the driver reports 1 device(s)");
}

TEST_F(CudaFakeDriver, NvrtcMissingBesideADriver) {
  CudaOptions o = options_;
  o.nvrtc_library = "/nonexistent/libnvrtc.so.13";
  const std::string e = create_error(o);
  EXPECT_TRUE(has_prefix(e, "cuda not available: NVRTC not found")) << e;
  EXPECT_TRUE(contains(e, "Fake H200")) << e;
}

TEST_F(CudaFakeDriver, BuffersArePoisonedAndCopiedExactly) {
  auto& be = backend();
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::i32, DType::u8, DType::i64, DType::boolean}) {
    auto b = be.allocate(t, 37);
    EXPECT_EQ(read_bytes(be, *b), poison_bytes(t, 37)) << dtype_name(t);
  }
  auto y = make_buffer(be, DType::f32, iota_values(10));
  EXPECT_EQ(read_buffer(be, *y), iota_values(10));
  std::vector<float> three(3);
  try {
    be.upload(*y, three.data(), 12);
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), "upload of 12 bytes into a buffer of 40 bytes (10 x f32)");
  }
  EXPECT_THROW(be.download(*y, three.data(), 12), ArgumentError);
  Interpreter other;
  auto foreign = other.allocate(DType::f32, 3);
  EXPECT_THROW(be.upload(*foreign, three.data(), 12), ArgumentError);
  auto empty = be.allocate(DType::f32, 0);
  EXPECT_EQ(be.device_pointer(*empty), 0u);
  EXPECT_TRUE(read_bytes(be, *empty).empty());
}

TEST_F(CudaFakeDriver, CallerMemoryIsWrappedNotFreed) {
  auto& be = backend();
  auto owner = make_buffer(be, DType::f32, iota_values(100));
  const std::uint64_t p = be.device_pointer(*owner);
  const auto frees_before = counters().frees;
  {
    auto whole = be.wrap_device_buffer(p, DType::f32, 100);
    auto tail = be.wrap_device_buffer(p + 40, DType::f32, 90);
    EXPECT_EQ(read_buffer(be, *whole), iota_values(100));
    EXPECT_EQ(read_buffer(be, *tail), iota_values(90, 11));
    be.upload(*tail, std::vector<float>(90, 0.5f).data(), 360);
  }
  EXPECT_EQ(counters().frees, frees_before);
  EXPECT_EQ(read_buffer(be, *owner)[10], 0.5);
  EXPECT_EQ(read_buffer(be, *owner)[9], 10.0);
  try {
    (void)be.wrap_device_buffer(p + 40, DType::f32, 91);
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_TRUE(contains(e.what(), "overruns its allocation")) << e.what();
  }
  try {
    (void)be.wrap_device_buffer(0x10, DType::f32, 1);
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_TRUE(contains(e.what(), "is not device memory the driver knows")) << e.what();
    EXPECT_TRUE(contains(e.what(), "CUDA_ERROR_NOT_FOUND")) << e.what();
  }
  EXPECT_THROW((void)be.wrap_device_buffer(0, DType::f32, 1), ArgumentError);
  auto none = be.wrap_device_buffer(0, DType::f32, 0);
  EXPECT_EQ(none->count(), 0u);
}

TEST_F(CudaFakeDriver, BuffersOutliveTheBackend) {
  auto b = backend().allocate(DType::f32, 8);
  be_.reset();
  EXPECT_EQ(counters().retains, 1);  // the buffer keeps the context
  EXPECT_EQ(counters().live_allocations, 1u);
  b.reset();
  EXPECT_EQ(counters().retains, 0);
  EXPECT_EQ(counters().live_allocations, 0u);
}

TEST_F(CudaFakeDriver, LaunchPassesTheAbiParameters) {
  auto& be = backend();
  const auto k = passes::optimize(trace("vadd_f32", examples::vector_add<f32>));
  auto x = make_buffer(be, DType::f32, iota_values(300));
  auto y = make_buffer(be, DType::f32, iota_values(300));
  auto z = be.allocate(DType::f32, 300);
  expect_params_(4);
  be.launch(k, grid_1d(300, 128), {scalar_arg<u32>(300), x, y, z});
  auto c = counters();
  EXPECT_EQ(c.launches, 1u);
  EXPECT_EQ(c.modules_loaded, 1u);
  EXPECT_EQ((std::vector<unsigned>(c.last_grid, c.last_grid + 3)), (std::vector<unsigned>{3, 1, 1}));
  EXPECT_EQ((std::vector<unsigned>(c.last_block, c.last_block + 3)), (std::vector<unsigned>{128, 1, 1}));
  EXPECT_EQ(c.last_stream, be.stream());
  EXPECT_EQ(last_param_(0) & 0xffffffffu, 300u);
  EXPECT_EQ(last_param_(1), be.device_pointer(*x));
  EXPECT_EQ(last_param_(2), be.device_pointer(*y));
  EXPECT_EQ(last_param_(3), be.device_pointer(*z));
  EXPECT_EQ(be.stats().launches, 1u);
}

// Shared arrays over CUDA's 48 KB of static shared memory: printed as carve-outs of one dynamic array (NVRTC compiles
// them), launched with that many bytes after the function's limit is raised (the fake refuses a launch above the
// limit); the interpreter runs the same kernel; more than the device allows is refused before compiling.
ir::Kernel big_shared_kernel(std::uint32_t floats) {
  return passes::optimize(trace("big_shared", [floats](KernelBuilder& b) {
    auto y = b.out<f32>("y", 64);
    auto s = b.shared<f32>("s", floats);
    auto t = b.shared<u32>("t", 64);
    auto l = b.local_id(0);
    store(s, l * (floats / 64), cast<f32>(l));
    store(t, l, l * 2u);
    b.barrier();
    auto n = b.let("n", (l + 1u) % 64u);
    store(y, l, load(s, n * (floats / 64)) + cast<f32>(load(t, n)));
  }));
}

TEST_F(CudaFakeDriver, SharedMemoryOver48KiBIsDynamic) {
  auto& be = backend();
  EXPECT_EQ(be.device_info().max_shared_per_group, 232448);
  const auto big = big_shared_kernel(16384);  // 64 KiB + 256 bytes
  const codegen::KernelSource src = codegen::emit(big, codegen::Target::CUDA);
  EXPECT_EQ(src.dynamic_shared_bytes, 65536u + 256u);
  EXPECT_TRUE(contains(src.source, "extern __shared__ unsigned char ingot_shared[]")) << src.source;
  EXPECT_TRUE(contains(src.source, "*>(ingot_shared + 65536u)")) << src.source;
  EXPECT_FALSE(contains(codegen::emit(big, codegen::Target::OpenCL).source, "ingot_shared"));
  auto y = be.allocate(DType::f32, 64);
  be.launch(big, grid_1d(64, 64), {y});
  EXPECT_EQ(counters().launches, 1u);
  EXPECT_EQ(counters().last_shared, 65536u + 256u);

  const auto small = big_shared_kernel(4096);  // 16 KiB: static arrays, no dynamic bytes
  EXPECT_EQ(codegen::emit(small, codegen::Target::CUDA).dynamic_shared_bytes, 0u);
  be.launch(small, grid_1d(64, 64), {y});
  EXPECT_EQ(counters().last_shared, 0u);

  Interpreter cpu;
  auto yc = cpu.allocate(DType::f32, 64);
  cpu.launch(big, grid_1d(64, 64), {yc});
  std::vector<float> out(64);
  cpu.download(*yc, out.data(), out.size() * sizeof(float));
  for (std::uint32_t i = 0; i < 64; ++i) EXPECT_EQ(out[i], static_cast<float>((i + 1) % 64 * 3)) << i;

  try {
    be.launch(big_shared_kernel(65536), grid_1d(64, 64), {y});  // 256 KiB
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_TRUE(contains(e.what(), "needs 262400 bytes of shared memory per work-group")) << e.what();
    EXPECT_TRUE(contains(e.what(), "allows at most 232448")) << e.what();
  }
  EXPECT_EQ(counters().launches, 2u);
}

// Residency (the bench's waves): the driver's occupancy calculator for the compiled kernel at the launch's group size
// and its dynamic shared memory, the device's SMs and the kernel's registers.
TEST_F(CudaFakeDriver, ResidencyAsksTheOccupancyCalculator) {
  auto& be = backend();
  auto last_occupancy = reinterpret_cast<void (*)(int*, std::size_t*)>(dlsym(lib_, "fake_cuda_last_occupancy"));
  ASSERT_NE(last_occupancy, nullptr);
  int block = 0;
  std::size_t shared = 0;
  const auto small = big_shared_kernel(4096);  // static shared memory only
  const auto r = be.residency(small, grid_1d(1024, 256));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->groups_per_unit, 8);  // the fake's 2048 threads per SM / 256
  EXPECT_EQ(r->units, 132);
  EXPECT_EQ(r->registers, 32);
  last_occupancy(&block, &shared);
  EXPECT_EQ(block, 256);
  EXPECT_EQ(shared, 0u);
  const auto big = big_shared_kernel(16384);  // 64 KiB + 256 bytes, dynamic
  const auto rb = be.residency(big, grid_1d(64, 64));
  ASSERT_TRUE(rb.has_value());
  last_occupancy(&block, &shared);
  EXPECT_EQ(block, 64);
  EXPECT_EQ(shared, 65536u + 256u);  // the kernel's dynamic shared memory is part of the question
  EXPECT_EQ(rb->groups_per_unit, 233472 / (65536 + 256 + 1024));
  EXPECT_EQ(counters().launches, 0u);  // asked, not launched
}

TEST_F(CudaFakeDriver, ScalarsByValue) {
  auto& be = backend();
  auto y = be.allocate(DType::i64, 2);
  expect_params_(5);
  be.launch(scalars_kernel(), grid_1d(1, 32),
            {scalar_arg<bool>(true), scalar_arg<i64>(-5), scalar_arg<f32>(2.5f), scalar_arg<i32>(-17), y});
  EXPECT_EQ(last_param_(0) & 0xff, 1u);
  EXPECT_EQ(last_param_(1), static_cast<std::uint64_t>(std::int64_t{-5}));
  EXPECT_EQ(last_param_(2) & 0xffffffffu, std::bit_cast<std::uint32_t>(2.5f));
  EXPECT_EQ(last_param_(3) & 0xffffffffu, static_cast<std::uint32_t>(-17));
  EXPECT_EQ(last_param_(4), be.device_pointer(*y));
}

// Timed launches: each pair of events holds exactly one launch, and the kernel is checked and
// looked up once per argument set before the first event, not once per launch (a convolution's
// lookup costs tens of microseconds of host time, which the events would time as the kernel's).
TEST_F(CudaFakeDriver, TimedLaunchesHoldOnlyTheLaunch) {
  const auto k = passes::optimize(trace("vadd_f32", examples::vector_add<f32>));
  auto& be = backend();
  auto x = make_buffer(be, DType::f32, iota_values(10));
  std::vector<std::vector<Arg>> sets;
  sets.reserve(4);
  for (int s = 0; s < 3; ++s) sets.push_back({scalar_arg<u32>(10), x, x, be.allocate(DType::f32, 10)});
  be.launch(k, grid_1d(10, 32), sets[0]);  // compiled and loaded
  const auto hits = be.stats().memory_cache_hits;
  const auto t = be.time_launches(k, grid_1d(10, 32), sets, {.warmup = 2, .reps = 7});
  EXPECT_EQ(t.timer, "cuda events");
  ASSERT_EQ(t.seconds.size(), 7u);
  for (const double sec : t.seconds) EXPECT_DOUBLE_EQ(sec, 1e-3);  // one launch per timed window
  EXPECT_EQ(counters().launches, 1u + 2 + 7);
  EXPECT_EQ(be.stats().memory_cache_hits, hits + sets.size());  // one lookup per set
  // A bad set is refused before anything is launched.
  sets.push_back({scalar_arg<u32>(10), x, x, be.allocate(DType::f32, 5)});
  EXPECT_THROW((void)be.time_launches(k, grid_1d(10, 32), sets, {.warmup = 0, .reps = 4}), ArgumentError);
  EXPECT_EQ(counters().launches, 10u);
  // Back to back: each pair of events holds N launches (rotating over the sets), the time is the window's / N; N out
  // of range is refused before anything is launched.
  sets.pop_back();
  const auto b2b = be.time_launches(k, grid_1d(10, 32), sets, {.warmup = 1, .reps = 5, .back_to_back = 4});
  EXPECT_EQ(b2b.timer, "cuda events, 4 launches back to back per window");
  ASSERT_EQ(b2b.seconds.size(), 5u);
  for (const double sec : b2b.seconds) EXPECT_DOUBLE_EQ(sec, 1e-3);  // 4 launches (4 ms in the fake) / 4
  EXPECT_EQ(counters().launches, 10u + 1 + 5 * 4);
  for (const int bad : {0, 1001}) {
    try {
      (void)be.time_launches(k, grid_1d(10, 32), sets, {.warmup = 0, .reps = 2, .back_to_back = bad});
      FAIL() << bad;
    } catch (const ArgumentError& e) {
      EXPECT_TRUE(contains(e.what(), "back_to_back = " + std::to_string(bad))) << e.what();
    }
  }
  EXPECT_EQ(counters().launches, 31u);
}

TEST_F(CudaFakeDriver, CompiledOnceThenFromMemoryThenFromDisk) {
  const auto k = passes::optimize(trace("vadd_f32", examples::vector_add<f32>));
  auto run = [&](CudaBackend& be) {
    auto x = make_buffer(be, DType::f32, iota_values(10));
    auto z = be.allocate(DType::f32, 10);
    be.launch(k, grid_1d(10, 32), {scalar_arg<u32>(10), x, x, z});
  };
  auto& be = backend();
  run(be);
  run(be);
  EXPECT_EQ(be.stats().nvrtc_compiles, 1u);
  EXPECT_EQ(be.stats().memory_cache_hits, 1u);
  EXPECT_EQ(be.stats().disk_cache_hits, 0u);
  EXPECT_EQ(counters().modules_loaded, 1u);
  {
    auto again = CudaBackend::create(options_);
    run(*again);
    EXPECT_EQ(again->stats().nvrtc_compiles, 0u);
    EXPECT_EQ(again->stats().disk_cache_hits, 1u);
  }
  // A corrupt entry is not trusted: it is recompiled.
  for (const auto& e : std::filesystem::directory_iterator(cache_dir_)) {
    std::filesystem::resize_file(e.path(), std::filesystem::file_size(e.path()) / 2);
  }
  {
    auto third = CudaBackend::create(options_);
    run(*third);
    EXPECT_EQ(third->stats().nvrtc_compiles, 1u);
    EXPECT_EQ(third->stats().disk_cache_hits, 0u);
  }
  CudaOptions o = options_;
  o.use_cache = false;
  o.fmad = false;
  auto uncached = CudaBackend::create(o);
  run(*uncached);
  EXPECT_EQ(uncached->stats().nvrtc_compiles, 1u);
}

TEST_F(CudaFakeDriver, ArgumentErrorsAreRefusedBeforeLaunch) {
  auto& be = backend();
  const auto k = passes::optimize(trace("vadd_f32", examples::vector_add<f32>));
  auto x = make_buffer(be, DType::f32, iota_values(100));
  auto z = be.allocate(DType::f32, 100);
  auto small = be.allocate(DType::f32, 50);
  auto g = grid_1d(100, 64);
  EXPECT_THROW(be.launch(k, g, {scalar_arg<u32>(100), x, x}), ArgumentError);
  EXPECT_THROW(be.launch(k, g, {scalar_arg<u32>(100), x, x, small}), ArgumentError);
  LaunchGeometry tall;
  tall.groups = {1, 70000, 1};
  try {
    be.launch(k, tall, {scalar_arg<u32>(100), x, x, z});
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_TRUE(contains(e.what(), "70000 groups on axis 1 exceed Fake H200's limit of 65535")) << e.what();
  }
  EXPECT_EQ(counters().launches, 0u);
  EXPECT_EQ(counters().modules_loaded, 0u);  // refused before compiling
}

TEST_F(CudaFakeDriver, KernelThreadLimitBelowTheDevicesIsRefused) {
  reset_(0, 1, 128);  // as if the kernel's registers allowed only 128 threads per block
  auto& be = backend();
  const auto k = passes::optimize(trace("vadd_f32", examples::vector_add<f32>));
  auto x = make_buffer(be, DType::f32, iota_values(512));
  auto z = be.allocate(DType::f32, 512);
  try {
    be.launch(k, grid_1d(512, 256), {scalar_arg<u32>(512), x, x, z});
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_TRUE(contains(e.what(), "exceed this kernel's limit of 128")) << e.what();
  }
  EXPECT_EQ(counters().launches, 0u);
  be.launch(k, grid_1d(512, 128), {scalar_arg<u32>(512), x, x, z});
  EXPECT_EQ(counters().launches, 1u);
}

TEST_F(CudaFakeDriver, KernelFaultIsReportedWithTheDriversWords) {
  auto& be = backend();
  const auto k = passes::optimize(trace("vadd_f32", examples::vector_add<f32>));
  auto x = make_buffer(be, DType::f32, iota_values(10));
  auto z = be.allocate(DType::f32, 10);
  fail_next_sync_(700);
  try {
    be.launch(k, grid_1d(10, 32), {scalar_arg<u32>(10), x, x, z});
    FAIL();
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code, 700);
    EXPECT_EQ(e.error_name, "CUDA_ERROR_ILLEGAL_ADDRESS");
    EXPECT_EQ(std::string(e.what()),
              "cuda: running kernel 'vadd_f32' (grid 1x1x1 groups of 32x1x1) on Fake H200: CUDA_ERROR_ILLEGAL_ADDRESS "
              "(an illegal memory access was encountered)");
  }
}

TEST_F(CudaFakeDriver, CallerStreamIsUsedAndNotDestroyed) {
  auto& owner = backend();
  CudaOptions o = options_;
  o.stream = owner.stream();
  {
    auto borrower = CudaBackend::create(o);
    EXPECT_EQ(borrower->stream(), owner.stream());
    EXPECT_EQ(counters().live_streams, 1u);
    const auto k = passes::optimize(trace("vadd_f32", examples::vector_add<f32>));
    auto x = make_buffer(*borrower, DType::f32, iota_values(10));
    auto z = borrower->allocate(DType::f32, 10);
    borrower->launch(k, grid_1d(10, 32), {scalar_arg<u32>(10), x, x, z});
    EXPECT_EQ(counters().last_stream, owner.stream());
  }
  EXPECT_EQ(counters().live_streams, 1u);
  owner.synchronize();
}
