// The Vulkan runtime and the GLSL dialect. The tests that need a device skip (with the reason) where no Vulkan
// device is usable; with lavapipe (CI) or a driver present they run IR kernels printed as GLSL, compiled to SPIR-V,
// which must agree with the interpreter (the semantics) byte for byte, and the whole library against its oracles.
// Tests of an absent loader and of bad input run everywhere.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include "conversions.hpp"
#include "features.hpp"
#include "ingot/dsl.hpp"
#include "ingot/harness/backends.hpp"
#include "ingot/harness/harness.hpp"
#include "ingot/library.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/cache.hpp"
#include "ingot/runtime/interp.hpp"
#include "ingot/runtime/spirv.hpp"
#include "ingot/runtime/vulkan.hpp"
#include "shared_kernels.hpp"
#include "vector_add.hpp"

using namespace ingot;
using namespace ingot::dsl;
using namespace ingot::runtime;

namespace {

class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("ingot-vulkan-test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Never the user's cache directory.
VulkanOptions test_options(const std::filesystem::path& cache_dir = {}) {
  VulkanOptions o;
  o.cache_dir = cache_dir;
  o.use_cache = !cache_dir.empty();
  return o;
}

struct BufferInit {
  DType type;
  std::vector<double> values;  // empty: a fresh (poisoned) buffer of `count` elements
  std::size_t count = 0;
};
using InitArg = std::variant<BufferInit, Arg>;  // Arg: a scalar, passed as is

std::vector<std::vector<std::uint8_t>> run_on(Backend& be, const ir::Kernel& k, const LaunchGeometry& g,
                                              const std::vector<InitArg>& init) {
  std::vector<Arg> args;
  std::vector<BufferPtr> bufs;
  for (const auto& a : init) {
    if (const auto* s = std::get_if<Arg>(&a)) {
      args.push_back(*s);
    } else {
      const auto& bi = std::get<BufferInit>(a);
      auto b = bi.values.empty() ? be.allocate(bi.type, bi.count) : make_buffer(be, bi.type, bi.values);
      bufs.push_back(b);
      args.emplace_back(b);
    }
  }
  be.launch(k, g, args);
  std::vector<std::vector<std::uint8_t>> out;
  for (const auto& b : bufs) {
    std::vector<std::uint8_t> bytes(b->bytes());
    be.download(*b, bytes.data(), bytes.size());
    out.push_back(std::move(bytes));
  }
  return out;
}

// k on the interpreter and on Vulkan: every buffer agrees byte for byte.
void expect_same_as_interp(Backend& vk, const ir::Kernel& k, const LaunchGeometry& g,
                           const std::vector<InitArg>& init) {
  Interpreter interp;
  const auto want = run_on(interp, k, g, init);
  const auto got = run_on(vk, k, g, init);
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t b = 0; b < want.size(); ++b) {
    EXPECT_EQ(want[b], got[b]) << "kernel '" << k.name << "': buffer #" << b << " differs";
  }
}

std::vector<double> iota_values(std::size_t n, double start = 1) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// spirv-val (SPIRV-Tools) on SPIR-V words: "" when valid, else its output; nullopt where spirv-val is not installed.
std::optional<std::string> spirv_val(const std::vector<std::uint32_t>& words, const std::filesystem::path& dir) {
  if (std::system("command -v spirv-val > /dev/null 2>&1") != 0) return std::nullopt;
  const auto spv = dir / "k.spv", log = dir / "val.txt";
  std::ofstream(spv, std::ios::binary)
      .write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
  const std::string cmd = "spirv-val --target-env vulkan1.2 " + spv.string() + " > " + log.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  return rc == 0 ? std::string() : "spirv-val failed: " + text.str();
}

}  // namespace

// Creates `var` or skips the test, counted, with the reason Vulkan is unavailable.
// NOLINTBEGIN(bugprone-macro-parentheses): `var` names the variable being declared
#define INGOT_REQUIRE_VULKAN(var, options)          \
  std::unique_ptr<VulkanBackend> var;               \
  try {                                             \
    var = VulkanBackend::create(options);           \
  } catch (const BackendUnavailable& unavailable) { \
    GTEST_SKIP() << unavailable.what();             \
  }
// NOLINTEND(bugprone-macro-parentheses)

// ---------------------------------------------------------------------------- absent loader, bad input

TEST(Vulkan, NoLoaderIsUnavailableWithTheReason) {
  VulkanOptions o = test_options();
  o.loader_library = "/nonexistent/libvulkan.so.1";
  try {
    (void)VulkanBackend::create(o);
    FAIL() << "created a backend without a loader";
  } catch (const BackendUnavailable& e) {
    EXPECT_EQ(std::string(e.what()).rfind("vulkan not available: ", 0), 0u) << e.what();
  }
  EXPECT_THROW((void)list_vulkan_devices(o), BackendUnavailable);
  harness::OpenBackendOptions open;
  open.vulkan = o;
  const auto slot = harness::open_backend("vulkan", open);
  EXPECT_EQ(slot.backend, nullptr);
  EXPECT_EQ(slot.why_absent.rfind("vulkan not available: ", 0), 0u) << slot.why_absent;
}

TEST(Vulkan, AFilterMatchingNoDeviceIsUnavailable) {
  VulkanOptions o = test_options();
  o.device_filter = "no-such-device-anywhere";
  EXPECT_THROW((void)VulkanBackend::create(o), BackendUnavailable);
  o.device_filter = "4096";  // an index past every device
  EXPECT_THROW((void)VulkanBackend::create(o), BackendUnavailable);
}

// ---------------------------------------------------------------------------- SPIR-V

// Every golden kernel's GLSL compiles and validates (spirv-val), including one with every feature of the printer.
TEST(Spirv, GoldenKernelsCompileAndValidate) {
  std::optional<SpirvCompiler> c;
  try {
    c.emplace(SpirvCompiler::load());
  } catch (const BackendUnavailable& e) {
    GTEST_SKIP() << e.what();
  }
  TempDir dir("spv");
  const std::vector<ir::Kernel> kernels = {passes::optimize(trace("vector_add_f32", examples::vector_add<f32>)),
                                           passes::optimize(trace("features", examples::features)),
                                           passes::optimize(ingot::testing::vector_reverse_kernel<bf16>(8)),
                                           passes::optimize(ingot::testing::shared_vector_kernel<f16>(2)),
                                           passes::optimize(ingot::testing::shuffle_kernel(8)),
                                           passes::optimize(ingot::testing::mma_kernel<bf16, f32>()),
                                           passes::optimize(ingot::testing::load_matrix_kernel<f16>(true)),
                                           passes::optimize(ingot::testing::async_copy_kernel<f32>(4))};
  for (const auto& k : kernels) {
    const auto src = codegen::emit(k, codegen::Target::GLSL);
    std::vector<std::uint32_t> words;
    ASSERT_NO_THROW(words = c->compile(src.source, k.name)) << src.source;
    ASSERT_GT(words.size(), 5u);
    EXPECT_EQ(words[0], 0x07230203u);  // the SPIR-V magic
    const auto val = spirv_val(words, dir.path());
    if (!val) GTEST_SKIP() << "spirv-val not installed (Debian: spirv-tools)";
    EXPECT_EQ(*val, "") << k.name;
  }
}

TEST(Spirv, BadGlslIsACompileErrorWithTheLog) {
  std::optional<SpirvCompiler> c;
  try {
    c.emplace(SpirvCompiler::load());
  } catch (const BackendUnavailable& e) {
    GTEST_SKIP() << e.what();
  }
  try {
    (void)c->compile("#version 450\nvoid main() { undeclared = 1; }\n", "bad");
    FAIL() << "compiled bad GLSL";
  } catch (const CompileError& e) {
    EXPECT_FALSE(e.log.empty());
  }
}

// ---------------------------------------------------------------------------- on a device

TEST(Vulkan, CreateDescribesTheDevice) {
  INGOT_REQUIRE_VULKAN(be, test_options());
  EXPECT_EQ(be->name(), "vulkan");
  const auto& d = be->device_info();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GE(d.max_invocations, 128u);
  EXPECT_GE(d.max_shared_bytes, 16u * 1024);
  EXPECT_GE(d.max_push_bytes, 128u);
  EXPECT_NE(d.describe().find(d.name), std::string::npos);
  // by index and by name, the same device
  VulkanOptions by_index = test_options();
  by_index.device_filter = std::to_string(d.index);
  EXPECT_EQ(VulkanBackend::create(by_index)->device_info().name, d.name);
  VulkanOptions by_name = test_options();
  by_name.device_filter = d.name.substr(0, 4);
  EXPECT_NO_THROW((void)VulkanBackend::create(by_name));
  const auto all = list_vulkan_devices(test_options());
  ASSERT_GT(all.size(), d.index);
  EXPECT_EQ(all[d.index].name, d.name);
}

TEST(Vulkan, FreshBuffersHoldPoison) {
  INGOT_REQUIRE_VULKAN(be, test_options());
  for (const DType t : {DType::f32, DType::f16, DType::i32, DType::u8}) {
    auto b = be->allocate(t, 7);
    std::vector<std::uint8_t> got(b->bytes());
    be->download(*b, got.data(), got.size());
    EXPECT_EQ(got, poison_bytes(t, 7)) << dtype_name(t);
  }
}

TEST(Vulkan, VectorAddMatchesInterpreterBitExact) {
  INGOT_REQUIRE_VULKAN(be, test_options());
  for (const DType t : {DType::f32, DType::f16, DType::bf16}) {
    const auto k = passes::optimize(t == DType::f32   ? trace("add", examples::vector_add<f32>)
                                    : t == DType::f16 ? trace("add", examples::vector_add<f16>)
                                                      : trace("add", examples::vector_add<bf16>));
    std::vector<double> x(1000), y(1000);
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = std::sin(static_cast<double>(i)) * 3;
      y[i] = std::cos(static_cast<double>(i) * 0.7);
    }
    expect_same_as_interp(*be, k, grid_1d(1000, 64),
                          {scalar_arg<u32>(1000), BufferInit{t, x}, BufferInit{t, y}, BufferInit{t, {}, 1000}});
  }
}

TEST(Vulkan, SixteenBitConversionsMatchTheHostBitForBit) {
  INGOT_REQUIRE_VULKAN(be, test_options());
  ingot::testing::expect_conversions_match_host(*be);
}

TEST(Vulkan, SharedMemoryAndBarrierMatchInterpreter) {
  INGOT_REQUIRE_VULKAN(be, test_options());
  expect_same_as_interp(
      *be, ingot::testing::reverse_kernel(), grid_1d(96, 32),
      {scalar_arg<u32>(96), BufferInit{DType::i32, iota_values(96, -40)}, BufferInit{DType::i32, {}, 96}});
}

// Sub-groups differ per device (lavapipe: 4-16 lanes): shuffles, mma fragments and matrix loads go through the
// shared-memory exchanges, whatever the sub-group size.
TEST(Vulkan, WarpWideOpsMatchTheirDefinition) {
  INGOT_REQUIRE_VULKAN(be, test_options());
  for (const std::uint32_t lanes : {4u, 32u}) {
    ingot::testing::expect_shuffle(*be, lanes, 128, 128, 64);
    ingot::testing::expect_shuffle(*be, lanes, 100, 128, 32);
  }
  ingot::testing::expect_mma<bf16, f32>(*be, 3, 128, 64);
  ingot::testing::expect_mma<f16, f16>(*be, 2, 64, 32);
  ingot::testing::expect_load_matrix<bf16>(*be, 3);
  ingot::testing::expect_load_matrix<bf16>(*be, 2, 0, true);
}

TEST(Vulkan, VectorAccessMatchesInterpreter) {
  INGOT_REQUIRE_VULKAN(be, test_options());
  std::vector<double> x(96);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i) * 0.25 - 7.0;
  const auto run = [&](const ir::Kernel& k, DType t, std::uint32_t width) {
    expect_same_as_interp(*be, passes::optimize(k), grid_1d(96 / width, 8),
                          {scalar_arg<u32>(96), BufferInit{t, x}, BufferInit{t, {}, 96}});
  };
  run(ingot::testing::vector_reverse_kernel<f32>(4), DType::f32, 4);
  run(ingot::testing::vector_reverse_kernel<bf16>(8), DType::bf16, 8);
  run(ingot::testing::vector_reverse_kernel<f16>(2), DType::f16, 2);
  std::vector<double> ints(96);
  for (std::size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<double>(i) - 50.0;
  expect_same_as_interp(*be, passes::optimize(ingot::testing::vector_reverse_kernel<i8>(16)), grid_1d(6, 2),
                        {scalar_arg<u32>(96), BufferInit{DType::i8, ints}, BufferInit{DType::i8, {}, 96}});
  std::vector<double> s(std::size_t{2} * 64 * 8);
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<double>(i % 61) * 0.25 - 7.0;
  ingot::testing::expect_shared_vector<bf16>(*be, DType::bf16, 8, s);
  ingot::testing::expect_shared_vector<f32>(*be, DType::f32, 4, s);
  std::vector<double> a(2 * 3 * 512 - 552);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 61) * 0.25 - 7.0;
  ingot::testing::expect_async_copy<f16>(*be, DType::f16, 2, a, 7);
}

TEST(Vulkan, AtomicsMatchInterpreter) {
  INGOT_REQUIRE_VULKAN(be, test_options());
  const auto k = trace("histogram", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<u32>("x", n);
    auto h = b.inout<u32>("h", 4);
    auto m = b.inout<i32>("m", 2);
    auto i = b.program_id(0);
    auto v = load(x, select(i < n, i, 0u));
    if_(i < n, [&] {
      (void)atomic_add(h, v % 4u, 1u);
      (void)atomic_max(m, 0, cast<i32>(v) - 500);
      (void)atomic_min(m, 1, cast<i32>(v) - 500);
    });
  });
  expect_same_as_interp(*be, k, grid_1d(1000, 64),
                        {scalar_arg<u32>(1000), BufferInit{DType::u32, iota_values(1000, 0)},
                         BufferInit{DType::u32, {0, 0, 0, 0}}, BufferInit{DType::i32, {-100000, 100000}}});
}

// Scalars of every kind travel in the push constants (bool widened to 32 bits, i64 in an 8-byte-aligned slot after a
// 32-bit one) and arrive with their values.
TEST(Vulkan, ScalarsOfEveryKindArrive) {
  INGOT_REQUIRE_VULKAN(be, test_options());
  const auto k = trace("scalars", [](KernelBuilder& b) {
    auto a = b.scalar<float>("a");
    auto s = b.scalar<i32>("s");
    auto wide = b.scalar<i64>("wide");
    auto flag = b.scalar<bool>("flag");
    auto u = b.scalar<u32>("u");
    auto y = b.out<float>("y", 4);
    if_(b.program_id(0) == 0u, [&] {
      store(y, 0, a);
      store(y, 1, cast<float>(s));
      store(y, 2, cast<float>(u));
      store(y, 3, select(flag, cast<float>(wide), -1.0f));
    });
  });
  const auto src = codegen::emit(k, codegen::Target::GLSL);
  EXPECT_EQ(src.push_offsets[2], 8u);  // i64 after two 32-bit slots, at a multiple of 8
  EXPECT_EQ(src.push_bytes, 24u);
  expect_same_as_interp(
      *be, k, grid_1d(1, 1),
      {scalar_arg<float>(2.5f), scalar_arg<std::int32_t>(-7), scalar_arg<std::int64_t>(-123456789012LL),
       scalar_arg<bool>(true), scalar_arg<std::uint32_t>(4000000000u), BufferInit{DType::f32, {}, 4}});
  expect_same_as_interp(*be, k, grid_1d(1, 1),
                        {scalar_arg<float>(-0.5f), scalar_arg<std::int32_t>(3), scalar_arg<std::int64_t>(5),
                         scalar_arg<bool>(false), scalar_arg<std::uint32_t>(1u), BufferInit{DType::f32, {}, 4}});
}

TEST(Vulkan, BadLaunchesAreRefusedBeforeAnythingRuns) {
  INGOT_REQUIRE_VULKAN(be, test_options());
  const auto k = passes::optimize(trace("add", examples::vector_add<f32>));
  auto x = be->allocate(DType::f32, 64), y = be->allocate(DType::f32, 64), z = be->allocate(DType::f32, 64);
  // a buffer of another backend
  Interpreter interp;
  auto foreign = interp.allocate(DType::f32, 64);
  EXPECT_THROW(be->launch(k, grid_1d(64, 64), {scalar_arg<u32>(64), foreign, y, z}), ArgumentError);
  // a work-group larger than the device allows
  LaunchGeometry g;
  g.group_size = {be->device_info().max_invocations + 1, 1, 1};
  EXPECT_THROW(be->launch(k, g, {scalar_arg<u32>(64), x, y, z}), ArgumentError);
  // a buffer smaller than its extent
  auto small = be->allocate(DType::f32, 10);
  EXPECT_THROW(be->launch(k, grid_1d(64, 64), {scalar_arg<u32>(64), small, y, z}), ArgumentError);
  // and nothing was written
  std::vector<std::uint8_t> got(z->bytes());
  be->download(*z, got.data(), got.size());
  EXPECT_EQ(got, poison_bytes(DType::f32, 64));
}

TEST(Vulkan, SpirvIsCachedOnDisk) {
  TempDir dir("cache");
  INGOT_REQUIRE_VULKAN(be, test_options(dir.path()));
  const auto k = passes::optimize(trace("add", examples::vector_add<f32>));
  const std::vector<InitArg> init{scalar_arg<u32>(100), BufferInit{DType::f32, iota_values(100)},
                                  BufferInit{DType::f32, iota_values(100)}, BufferInit{DType::f32, {}, 100}};
  (void)run_on(*be, k, grid_1d(100, 32), init);
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) entries += e.path().extension() == ".bin";
  EXPECT_EQ(entries, 1u);
  // a second backend runs the cached SPIR-V, with the same results
  INGOT_REQUIRE_VULKAN(second, test_options(dir.path()));
  expect_same_as_interp(*second, k, grid_1d(100, 32), init);
}

TEST(Vulkan, TimestampsTimeLaunches) {
  INGOT_REQUIRE_VULKAN(be, test_options());
  const auto k = passes::optimize(trace("add", examples::vector_add<f32>));
  auto x = make_buffer(*be, DType::f32, iota_values(4096)), y = make_buffer(*be, DType::f32, iota_values(4096));
  auto z = be->allocate(DType::f32, 4096);
  TimingOptions o;
  o.warmup = 1;
  o.reps = 3;
  const auto t = be->time_launches(k, grid_1d(4096, 64), {{scalar_arg<u32>(4096), x, y, z}}, o);
  ASSERT_EQ(t.seconds.size(), 3u);
  for (const double s : t.seconds) EXPECT_GT(s, 0.0);
  EXPECT_EQ(t.timer, be->device_info().timestamps ? "vulkan timestamps" : "host clock");
  EXPECT_EQ(read_buffer(*be, *z)[4095], 2 * 4096.0);
}

// Every registered kernel x dtype x default case against its CPU oracle on this device, one test per kernel (CTest
// runs them in parallel). Skips only with a reason a device limit gives (shared memory); none on lavapipe.
class VulkanKernelLibrary : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanKernelLibrary, PassesTheHarness) {
  harness::OpenBackendOptions open;
  open.vulkan = test_options();
  const harness::BackendSlot slot = harness::open_backend("vulkan", open);
  if (!slot.backend) GTEST_SKIP() << slot.why_absent;
  harness::HarnessOptions o;
  o.filter = GetParam() + "$";
  const auto rep = harness::run_harness(harness::builtin_registry(), {slot}, o);
  for (const auto& r : rep.results) {
    EXPECT_EQ(r.kernel, GetParam());
    if (r.status == harness::Status::Fail) {
      ADD_FAILURE() << r.kernel << " " << dtype_name(r.dtype) << " " << r.case_name << ": " << r.message;
    }
  }
  EXPECT_GT(rep.passed, 0u);
  for (const auto& [why, n] : rep.skip_reasons) {
    EXPECT_NE(why.find("of shared memory per work-group; the device gives"), std::string::npos)
        << n << " skipped: " << why;
    std::printf("%zu cases skipped: %s\n", n, why.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKernel, VulkanKernelLibrary, ::testing::ValuesIn(harness::builtin_registry().names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// A buffer larger than one storage binding (maxStorageBufferRange: lavapipe 128 MiB) is refused before anything runs;
// one at the limit runs.
TEST(Vulkan, BuffersOverTheBindingRangeAreRefused) {
  INGOT_REQUIRE_VULKAN(be, test_options());
  const std::uint64_t range = be->device_info().max_storage_range;
  if (range > (std::uint64_t{256} << 20)) GTEST_SKIP() << "the device binds " << range << " bytes: too large to test";
  const auto k = trace("fill", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto y = b.out<u32>("y", n);
    auto i = b.program_id(0);
    if_(i < n, [&] { store(y, i, i); });
  });
  const auto at_limit = static_cast<std::uint32_t>(range / 4);
  {
    auto y = be->allocate(DType::u32, at_limit);
    be->launch(k, grid_1d(at_limit, 1024), {scalar_arg<u32>(at_limit), y});
    std::vector<std::uint32_t> got(at_limit);
    be->download(*y, got.data(), y->bytes());
    EXPECT_EQ(got[at_limit - 1], at_limit - 1);
  }
  auto over = be->allocate(DType::u32, std::size_t{at_limit} + 1);
  EXPECT_THROW(be->launch(k, grid_1d(at_limit + 1, 1024), {scalar_arg<u32>(at_limit + 1), over}), ArgumentError);
  std::vector<std::uint32_t> all(std::size_t{at_limit} + 1);
  be->download(*over, all.data(), over->bytes());
  EXPECT_EQ(all[0], 0xA5A5A5A5u);  // untouched: the poison
}
