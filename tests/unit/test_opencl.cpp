// The OpenCL runtime. Every test skips (with the reason) when no OpenCL device is usable here;
// with PoCL or a driver present they run: hand-written kernels through the low-level path,
// build errors, poison, size and argument checks, and IR kernels printed as OpenCL C, which
// must agree with the interpreter (the semantics).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <optional>
#include <random>

#include "conversions.hpp"
#include "depthwise_conv1d.hpp"
#include "features.hpp"
#include "ingot/dsl.hpp"
#include "ingot/harness/backends.hpp"
#include "ingot/harness/bench.hpp"
#include "ingot/harness/harness.hpp"
#include "ingot/library.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/cache.hpp"
#include "ingot/runtime/interp.hpp"
#include "ingot/runtime/opencl.hpp"
#include "reference.hpp"
#include "shared_kernels.hpp"
#include "vector_add.hpp"

using namespace ingot;
using namespace ingot::dsl;
using namespace ingot::runtime;
using examples::Conv1dShape;
using examples::TailPolicy;

namespace {

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("ingot-opencl-test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
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

// Options for tests: never the user's cache directory.
OpenCLOptions test_options(const std::filesystem::path& cache_dir = {}) {
  OpenCLOptions o;
  o.cache_dir = cache_dir;
  o.use_cache = !cache_dir.empty();
  return o;
}

}  // namespace

// Creates `var` or skips the test, counted, with the reason OpenCL is unavailable.
// NOLINTBEGIN(bugprone-macro-parentheses): `var` names the variable being declared
#define INGOT_REQUIRE_OPENCL(var, options)          \
  std::unique_ptr<OpenCLBackend> var;               \
  try {                                             \
    var = OpenCLBackend::create(options);           \
  } catch (const BackendUnavailable& unavailable) { \
    GTEST_SKIP() << unavailable.what();             \
  }
// NOLINTEND(bugprone-macro-parentheses)

namespace {

std::vector<std::uint8_t> bytes_of(Backend& b, const DeviceBuffer& buf) {
  std::vector<std::uint8_t> out(buf.bytes());
  b.download(buf, out.data(), out.size());
  return out;
}

std::vector<double> iota_values(std::size_t n, double start = 1) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

codegen::KernelSource opencl_source(std::string entry, std::string source) {
  codegen::KernelSource s;
  s.target = codegen::Target::OpenCL;
  s.entry = std::move(entry);
  s.source = std::move(source);
  return s;
}

// y[i] = flag ? a * x[i] + y[i] + (float)offset : -1, with every scalar size of the ABI.
const char* kSaxpySource = R"CL(
__kernel void saxpy(float a, __global const float* x, __global float* y, unsigned int n, unsigned char flag,
                    long offset, unsigned short h) {
  unsigned int i = (unsigned int)get_global_id(0);
  if (i < n) y[i] = flag ? a * x[i] + y[i] + (float)offset + (float)h : -1.0f;
}
)CL";

// The same IR kernel on the interpreter and on OpenCL: buffers are created from the same
// input values on both; returns the raw bytes of every buffer argument after the launch.
struct Side {
  std::vector<std::vector<std::uint8_t>> buffers;
};
struct BufferInit {
  DType type;
  std::vector<double> values;  // empty: a fresh (poisoned) buffer of `count` elements
  std::size_t count = 0;
};
using InitArg = std::variant<BufferInit, Arg>;  // Arg: a scalar, passed as is

Side run_on(Backend& be, const ir::Kernel& k, const LaunchGeometry& g, const std::vector<InitArg>& init) {
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
  Side s;
  for (const auto& b : bufs) s.buffers.push_back(bytes_of(be, *b));
  return s;
}

// Runs k on the interpreter and on `ocl`; every buffer must agree byte for byte.
void expect_same_as_interp(OpenCLBackend& ocl, const ir::Kernel& k, const LaunchGeometry& g,
                           const std::vector<InitArg>& init) {
  Interpreter interp;
  const Side want = run_on(interp, k, g, init);
  const Side got = run_on(ocl, k, g, init);
  ASSERT_EQ(want.buffers.size(), got.buffers.size());
  for (std::size_t b = 0; b < want.buffers.size(); ++b) {
    EXPECT_EQ(want.buffers[b], got.buffers[b]) << "kernel '" << k.name << "': buffer #" << b << " differs";
  }
}

}  // namespace

// ---------------------------------------------------------------------------- device and setup

TEST(OpenCL, CreateDescribesTheDevice) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  EXPECT_EQ(be->name(), "opencl");
  const auto& info = be->device_info();
  EXPECT_FALSE(info.platform_name.empty());
  EXPECT_FALSE(info.device_name.empty());
  EXPECT_FALSE(info.driver_version.empty());
  EXPECT_NE(info.opencl_c_version.find("OpenCL C"), std::string::npos) << info.opencl_c_version;
  EXPECT_GE(info.max_work_group_size, 1u);
  EXPECT_GE(info.compute_units, 1u);
  EXPECT_GT(info.global_memory_bytes, 0u);
  EXPECT_NE(info.describe().find(info.device_name), std::string::npos);
  EXPECT_EQ(be->cache_target(), "opencl-" + info.platform_name + "-" + info.device_name + "-" + info.driver_version);
  EXPECT_NE(be->build_options().find("-cl-std=CL1.2"), std::string::npos);
  EXPECT_EQ(be->build_options().find("fast"), std::string::npos) << "no fast-math: " << be->build_options();
  EXPECT_EQ(be->build_options().find("-cl-mad-enable"), std::string::npos);
  EXPECT_EQ(be->build_options().find("-cl-opt-disable"), std::string::npos);
}

TEST(OpenCL, DeviceFilterSelectsOrExplains) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  const auto& info = be->device_info();
  // A case-insensitive piece of the device name selects that device.
  OpenCLOptions o = test_options();
  std::string piece = info.device_name.substr(0, std::min<std::size_t>(info.device_name.size(), 6));
  for (auto& c : piece) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  o.device_filter = piece;
  auto again = OpenCLBackend::create(o);
  EXPECT_EQ(again->device_info().device_name, info.device_name);
  // A filter nothing matches lists what exists.
  o.device_filter = "no-such-device-xyzzy";
  try {
    (void)OpenCLBackend::create(o);
    FAIL() << "expected BackendUnavailable";
  } catch (const BackendUnavailable& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("opencl not available: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("no-such-device-xyzzy"), std::string::npos) << msg;
    EXPECT_NE(msg.find("devices found"), std::string::npos) << msg;
    EXPECT_NE(msg.find(info.device_name), std::string::npos) << msg;
  }
  // The environment variable is the default filter.
  const char* old = std::getenv("INGOT_OPENCL_DEVICE");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ::setenv("INGOT_OPENCL_DEVICE", "no-such-device-from-env", 1);
  try {
    (void)OpenCLBackend::create(test_options());
    ADD_FAILURE() << "expected BackendUnavailable from $INGOT_OPENCL_DEVICE";
  } catch (const BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("INGOT_OPENCL_DEVICE"), std::string::npos) << e.what();
  }
  if (saved) {
    ::setenv("INGOT_OPENCL_DEVICE", saved->c_str(), 1);
  } else {
    ::unsetenv("INGOT_OPENCL_DEVICE");
  }
}

// ---------------------------------------------------------------------------- low-level path

TEST(OpenCL, HandWrittenKernelBuildsAndRuns) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  const auto src = opencl_source("saxpy", kSaxpySource);
  EXPECT_EQ(be->prepare(src), ProgramOrigin::Source);
  EXPECT_EQ(be->prepare(src), ProgramOrigin::Memory);
  const std::size_t n = 300;  // not a multiple of the group size: 84 tail threads
  auto x = make_buffer(*be, DType::f32, iota_values(n));
  auto y = make_buffer(*be, DType::f32, std::vector<double>(n, 0.5));
  be->launch_source(src, grid_1d(n, 128),
                    {scalar_arg<float>(2.0f), x, y, scalar_arg<u32>(static_cast<u32>(n)), scalar_arg<u8>(1),
                     scalar_arg<i64>(-10), scalar_arg<u16>(3)});
  const auto out = read_buffer(*be, *y);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0 * static_cast<double>(i + 1) + 0.5 - 10 + 3) << i;
  // flag = 0 takes the other branch: the one-byte scalar really arrives as one byte.
  be->launch_source(src, grid_1d(n, 128),
                    {scalar_arg<float>(2.0f), x, y, scalar_arg<u32>(static_cast<u32>(n)), scalar_arg<u8>(0),
                     scalar_arg<i64>(0), scalar_arg<u16>(0)});
  EXPECT_EQ(read_buffer(*be, *y), std::vector<double>(n, -1.0));
}

TEST(OpenCL, LowLevelLaunchChecksArgumentsAndGeometry) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  const auto src = opencl_source("saxpy", kSaxpySource);
  auto x = make_buffer(*be, DType::f32, iota_values(8));
  auto y = be->allocate(DType::f32, 8);
  try {
    be->launch_source(src, grid_1d(8, 8), {scalar_arg<float>(1.0f), x, y});
    FAIL() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("takes 7 arguments, got 3"), std::string::npos) << e.what();
  }
  LaunchGeometry g;
  g.group_size = {static_cast<u32>(be->device_info().max_work_group_size + 1), 1, 1};
  const std::vector<Arg> args{scalar_arg<float>(1.0f), x, y, scalar_arg<u32>(8), scalar_arg<u8>(1), scalar_arg<i64>(0),
                              scalar_arg<u16>(0)};
  try {
    be->launch_source(src, g, args);
    FAIL() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds this backend's limit"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::isnan(read_buffer(*be, *y)[0])) << "a refused launch wrote the output";
}

TEST(OpenCL, LaunchErrorsNameTheOpenCLError) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  // The driver itself refuses this launch (the kernel requires groups of 64), so the message
  // must carry the CL error name and what was being done.
  const auto src = opencl_source("fixed64", R"CL(
__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void fixed64(__global int* y) {
  y[get_global_id(0)] = 1;
}
)CL");
  auto y = be->allocate(DType::i32, 64);
  try {
    be->launch_source(src, grid_1d(64, 32), {y});
    FAIL() << "expected OpenCLError";
  } catch (const OpenCLError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.code, -54);
    EXPECT_NE(msg.find("CL_INVALID_WORK_GROUP_SIZE"), std::string::npos) << msg;
    EXPECT_NE(msg.find("launching kernel 'fixed64' with grid 2x1x1 groups of 32x1x1"), std::string::npos) << msg;
  }
  be->launch_source(src, grid_1d(64, 64), {y});
  EXPECT_EQ(read_buffer(*be, *y), std::vector<double>(64, 1.0));
}

TEST(OpenCL, BuildErrorCarriesTheBuildLog) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  const auto src = opencl_source("broken", R"CL(
__kernel void broken(__global float* y) { y[0] = undeclared_identifier_xyzzy; }
)CL");
  try {
    (void)be->prepare(src);
    FAIL() << "expected CompileError";
  } catch (const OpenCLCompileError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << msg;
    EXPECT_NE(msg.find("building kernel 'broken'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("build log"), std::string::npos) << msg;
    EXPECT_NE(msg.find("undeclared_identifier_xyzzy"), std::string::npos) << msg;  // from the compiler's log
    EXPECT_NE(e.log.find("undeclared_identifier_xyzzy"), std::string::npos) << e.log;
    EXPECT_EQ(e.entry, "broken");
    EXPECT_EQ(e.source, src.source);
  }
}

TEST(OpenCL, MissingEntryPointIsNamed) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  const auto src = opencl_source("not_there", "__kernel void present(__global int* y) { y[0] = 1; }\n");
  try {
    (void)be->prepare(src);
    FAIL() << "expected OpenCLError";
  } catch (const OpenCLError& e) {
    EXPECT_NE(std::string(e.what()).find("CL_INVALID_KERNEL_NAME"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not_there"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------- buffers

TEST(OpenCL, FreshBuffersArePoisoned) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::i32, DType::u32, DType::i64, DType::boolean, DType::u8,
                  DType::i8, DType::u16}) {
    auto b = be->allocate(t, 37);
    EXPECT_EQ(b->backend_name(), "opencl");
    EXPECT_EQ(bytes_of(*be, *b), poison_bytes(t, 37)) << dtype_name(t);
  }
  auto f = be->allocate(DType::f32, 5);
  for (double v : read_buffer(*be, *f)) EXPECT_TRUE(std::isnan(v));
  auto empty = be->allocate(DType::f32, 0);  // OpenCL has no empty buffers; ours still work
  EXPECT_TRUE(read_buffer(*be, *empty).empty());
}

TEST(OpenCL, UploadDownloadRoundTripAndSizeErrors) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  auto b = make_buffer(*be, DType::bf16, {1.0, -2.5, 3.0, 1e10});
  EXPECT_EQ(read_buffer(*be, *b), unpack(DType::bf16, pack(DType::bf16, {1.0, -2.5, 3.0, 1e10})));
  std::vector<std::uint8_t> six(6);
  try {
    be->upload(*b, six.data(), six.size());
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("upload of 6 bytes into a buffer of 8 bytes"), std::string::npos) << e.what();
  }
  std::vector<std::uint8_t> ten(10);
  try {
    be->download(*b, ten.data(), ten.size());
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("download of 10 bytes from a buffer of 8 bytes"), std::string::npos)
        << e.what();
  }
  // the refused upload changed nothing
  EXPECT_EQ(read_buffer(*be, *b)[1], -2.5);
}

TEST(OpenCL, BuffersOfOtherBackendsAreRefused) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  Interpreter interp;
  auto foreign = interp.allocate(DType::f32, 4);
  std::vector<float> four(4);
  EXPECT_THROW(be->upload(*foreign, four.data(), 16), ArgumentError);
  auto other = OpenCLBackend::create(test_options());
  auto theirs = other->allocate(DType::f32, 4);
  try {
    be->download(*theirs, four.data(), 16);
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("another OpenCL backend"), std::string::npos) << e.what();
  }
  // A buffer may outlive its backend (the context stays alive until the buffer goes).
  other.reset();
  EXPECT_EQ(theirs->count(), 4u);
}

// ---------------------------------------------------------------------------- IR kernels

namespace {

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

}  // namespace

TEST(OpenCL, ArgumentsAreCheckedBeforeLaunch) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  const auto k = copy_kernel();
  auto x = make_buffer(*be, DType::f32, iota_values(100));
  auto small = be->allocate(DType::f32, 50);
  auto halfs = be->allocate(DType::f16, 100);
  auto y = be->allocate(DType::f32, 100);
  Interpreter interp;
  auto foreign = interp.allocate(DType::f32, 100);
  auto expect_error = [&](const LaunchGeometry& g, const std::vector<Arg>& args, const std::string& needle) {
    try {
      be->launch(k, g, args);
      ADD_FAILURE() << "expected ArgumentError containing: " << needle;
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const auto g = grid_1d(100, 64);
  expect_error(g, {scalar_arg<u32>(100), x}, "takes 3 arguments, got 2");
  expect_error(g, {scalar_arg<i32>(100), x, y}, "expected a scalar of u32, got i32");
  expect_error(g, {scalar_arg<u32>(100), halfs, y}, "expected a buffer of f32, got a buffer of f16");
  expect_error(g, {x, x, y}, "expected a scalar, got a buffer");
  expect_error(g, {scalar_arg<u32>(100), x, small}, "buffer 'y' has 50 elements but its declared extent n needs 100");
  expect_error(g, {scalar_arg<u32>(100), foreign, y}, "buffer belongs to backend 'interp', not 'opencl'");
  LaunchGeometry too_big;
  too_big.group_size = {static_cast<u32>(be->device_info().max_work_group_size * 2), 1, 1};
  expect_error(too_big, {scalar_arg<u32>(100), x, y}, "kernel 'copy_guarded': launch");
  LaunchGeometry empty;
  empty.groups = {0, 1, 1};
  expect_error(empty, {scalar_arg<u32>(100), x, y}, "is empty on axis 0");
  // nothing was written by the refused launches
  EXPECT_TRUE(std::isnan(read_buffer(*be, *y)[0]));
}

TEST(OpenCL, GuardedCopyWithTail) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  const auto k = copy_kernel();
  auto x = make_buffer(*be, DType::f32, iota_values(100));
  auto y = be->allocate(DType::f32, 100);
  be->launch(k, grid_1d(100, 64), {scalar_arg<u32>(100), x, y});
  EXPECT_EQ(read_buffer(*be, *y), iota_values(100));
}

namespace {

template <class T>
void check_vector_add(OpenCLBackend& be) {
  const DType t = dtype_of<T>;
  const auto k = passes::optimize(trace("vadd_" + std::string(dtype_name(t)), examples::vector_add<T>));
  for (std::size_t n : {1u, 255u, 1000u}) {
    const auto x = examples::random_values(t, n, 11 + n);
    const auto y = examples::random_values(t, n, 22 + n);
    expect_same_as_interp(
        be, k, grid_1d(n, 256),
        {scalar_arg<u32>(static_cast<u32>(n)), BufferInit{t, x}, BufferInit{t, y}, BufferInit{t, {}, n}});
  }
  // Overflow to infinity and rounding ties behave the same as on the host.
  if (t != DType::f32) {
    const std::vector<double> x{65504.0, 1.0, -3.0, 0.1, 1e38};
    const std::vector<double> y{65504.0, 0.0009765625, 3.0, 0.2, 1e38};
    expect_same_as_interp(be, k, grid_1d(5, 4),
                          {scalar_arg<u32>(5), BufferInit{t, x}, BufferInit{t, y}, BufferInit{t, {}, 5}});
  }
}

struct ConvCase {
  Conv1dShape shape;
  std::uint32_t batch;
};

const ConvCase kConvCases[] = {
    {{8, 17, 3, 1, 0, 1}, 1},  // 8 x 15 = 120 outputs, 136 tail threads
    {{3, 19, 3, 1, 0, 1}, 1},  // 3 x 17 = 51 outputs
    {{5, 40, 4, 2, 3, 2}, 2},  // stride, pad and dilation together
};

template <class T>
void check_conv(OpenCLBackend& be, const ConvCase& c) {
  const DType t = dtype_of<T>;
  const auto& s = c.shape;
  SCOPED_TRACE(std::string(dtype_name(t)) + " C=" + std::to_string(s.channels) + " L=" + std::to_string(s.length) +
               " K=" + std::to_string(s.ksize) + " batch=" + std::to_string(c.batch));
  const auto k = passes::optimize(
      trace("dwconv1d", [&](KernelBuilder& b) { examples::depthwise_conv1d<T>(b, s, TailPolicy::Guarded); }));
  const std::size_t n = std::size_t{c.batch} * s.channels * s.out_len();
  const auto x = examples::random_values(t, std::size_t{c.batch} * s.channels * s.length, 100 + s.channels);
  const auto w = examples::random_values(t, std::size_t{s.channels} * s.ksize, 200 + s.ksize);
  const std::vector<InitArg> init{scalar_arg<u32>(c.batch), BufferInit{t, x}, BufferInit{t, w}, BufferInit{t, {}, n}};
  Interpreter interp;
  const auto want = unpack(t, run_on(interp, k, grid_1d(n, 256), init).buffers[2]);
  const auto got = unpack(t, run_on(be, k, grid_1d(n, 256), init).buffers[2]);
  const auto tol = examples::conv_tolerance(t, s.ksize);
  for (std::size_t i = 0; i < n; ++i) ASSERT_FALSE(std::isnan(got[i])) << "element " << i << " unwritten or NaN";
  const auto bad = examples::first_mismatch(want, got, tol);
  EXPECT_EQ(bad, -1) << "element " << bad << ": interp " << want[bad] << ", opencl " << got[bad];
  // and both match the f64 oracle
  EXPECT_EQ(examples::first_mismatch(examples::depthwise_conv1d_reference(s, c.batch, x, w), got, tol), -1);
}

}  // namespace

TEST(OpenCL, VectorAddMatchesInterpreterBitExact) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  check_vector_add<f32>(*be);
  check_vector_add<f16>(*be);
  check_vector_add<bf16>(*be);
}

TEST(OpenCL, GuardedDepthwiseConv1dF32) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  for (const auto& c : kConvCases) check_conv<f32>(*be, c);
}
TEST(OpenCL, GuardedDepthwiseConv1dF16) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  for (const auto& c : kConvCases) check_conv<f16>(*be, c);
}
TEST(OpenCL, GuardedDepthwiseConv1dBf16) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  for (const auto& c : kConvCases) check_conv<bf16>(*be, c);
}

TEST(OpenCL, SharedMemoryAndBarrierMatchInterpreter) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  const auto k = ingot::testing::reverse_kernel();
  expect_same_as_interp(
      *be, k, grid_1d(96, 32),
      {scalar_arg<u32>(96), BufferInit{DType::i32, iota_values(96, -40)}, BufferInit{DType::i32, {}, 96}});
}

// A kernel named like an OpenCL C built-in builds and runs under its renamed entry.
TEST(OpenCL, KernelNamedLikeABuiltinRuns) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  const auto k = trace("shuffle", [](KernelBuilder& b) {
    auto y = b.out<u32>("y", 1);
    store(y, 0, 7u);
  });
  auto y = be->allocate(DType::u32, 1);
  be->launch(k, grid_1d(1, 1), {y});
  EXPECT_EQ(read_buffer(*be, *y)[0], 7.0);
}

// No sub-groups on PoCL's CPU device: the printer exchanges through local memory between barriers.
TEST(OpenCL, ShufflesMatchTheirDefinition) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  EXPECT_NE(codegen::emit(ingot::testing::shuffle_kernel(8), codegen::Target::OpenCL).source.find("barrier("),
            std::string::npos);
  for (const std::uint32_t lanes : {4u, 32u}) {
    ingot::testing::expect_shuffle(*be, lanes, 128, 128, 64);
    ingot::testing::expect_shuffle(*be, lanes, 100, 128, 32);
  }
}

// No tensor cores in OpenCL C: the printer exchanges the fragments through local memory.
TEST(OpenCL, MmaMatchesItsDefinition) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  const std::string src = codegen::emit(ingot::testing::mma_kernel<bf16, f32>(), codegen::Target::OpenCL).source;
  EXPECT_NE(src.find("barrier("), std::string::npos);
  ingot::testing::expect_mma<bf16, f32>(*be, 3, 128, 64);
  ingot::testing::expect_mma<f16, f16>(*be, 2, 64, 32);
  // the compact exchange (16-bit slots) printed: the same products in the same order, so the same bits
  EXPECT_EQ((ingot::testing::expect_mma<bf16, f32>(*be, 3, 128, 64, 2)),
            (ingot::testing::expect_mma<bf16, f32>(*be, 3, 128, 64, 1)));
  EXPECT_EQ((ingot::testing::expect_mma<f16, f16>(*be, 2, 64, 32, 2)),
            (ingot::testing::expect_mma<f16, f16>(*be, 2, 64, 32, 1)));
}

// No ldmatrix in OpenCL C: the printer shuffles the row indexes (through local memory) and loads pairs.
TEST(OpenCL, LoadMatrixMatchesItsDefinition) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  ingot::testing::expect_load_matrix<bf16>(*be, 3);
  ingot::testing::expect_load_matrix<f16>(*be, 2);
  ingot::testing::expect_load_matrix<bf16>(*be, 2, 0, true);  // transposed (OpenCL: the shared-memory exchange)
}

TEST(OpenCL, VectorAccessMatchesInterpreter) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  std::vector<double> x(96);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i) * 0.25 - 7.0;
  auto run = [&](const ir::Kernel& k, DType t, std::uint32_t width) {
    expect_same_as_interp(*be, passes::optimize(k), grid_1d(96 / width, 8),
                          {scalar_arg<u32>(96), BufferInit{t, x}, BufferInit{t, {}, 96}});
  };
  run(ingot::testing::vector_reverse_kernel<f32>(4), DType::f32, 4);
  run(ingot::testing::vector_reverse_kernel<f32>(2), DType::f32, 2);
  run(ingot::testing::vector_reverse_kernel<bf16>(8), DType::bf16, 8);
  run(ingot::testing::vector_reverse_kernel<f16>(4), DType::f16, 4);
  run(ingot::testing::vector_reverse_kernel<f16>(2), DType::f16, 2);
  std::vector<double> ints(96);
  for (std::size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<double>(i) - 50.0;
  expect_same_as_interp(*be, passes::optimize(ingot::testing::vector_reverse_kernel<i8>(16)), grid_1d(6, 2),
                        {scalar_arg<u32>(96), BufferInit{DType::i8, ints}, BufferInit{DType::i8, {}, 96}});
  expect_same_as_interp(*be, passes::optimize(ingot::testing::vector_reverse_kernel<i32>(4)), grid_1d(24, 8),
                        {scalar_arg<u32>(96), BufferInit{DType::i32, ints}, BufferInit{DType::i32, {}, 96}});
}

TEST(OpenCL, SharedArraysTakeVectorAccess) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  std::vector<double> x(std::size_t{2} * 64 * 8);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 61) * 0.25 - 7.0;
  ingot::testing::expect_shared_vector<bf16>(*be, DType::bf16, 8, x);
  ingot::testing::expect_shared_vector<f32>(*be, DType::f32, 4, x);
  ingot::testing::expect_shared_vector<f16>(*be, DType::f16, 2, x);
}

// Asynchronous copies on a dialect without them: legalise copies at once.
TEST(OpenCL, AsyncCopiesLand) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  std::vector<double> x(2 * 3 * 512 - 552);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 61) * 0.25 - 7.0;
  ingot::testing::expect_async_copy<bf16>(*be, DType::bf16, 8, x, 2);
  ingot::testing::expect_async_copy<f32>(*be, DType::f32, 4, x, 4);
  ingot::testing::expect_async_copy<f16>(*be, DType::f16, 2, x, 7);
}

TEST(OpenCL, AtomicsMatchInterpreter) {
  INGOT_REQUIRE_OPENCL(be, test_options());
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

TEST(OpenCL, FloatAtomicAddMatchesInterpreter) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  // Integer-valued floats: every order of additions gives the same exact sum.
  const auto k = trace("fsum", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<f32>("x", n);
    auto s = b.inout<f32>("s", 1);
    auto i = b.program_id(0);
    auto v = load(x, select(i < n, i, 0u));
    if_(i < n, [&] { (void)atomic_add(s, 0u, v); });
  });
  expect_same_as_interp(
      *be, k, grid_1d(500, 128),
      {scalar_arg<u32>(500), BufferInit{DType::f32, iota_values(500, -100)}, BufferInit{DType::f32, {0.5}}});
}

TEST(OpenCL, TwoDimensionalGridMatchesInterpreter) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  const auto k = ingot::testing::grid2d_kernel(/*with_groups=*/true);
  expect_same_as_interp(*be, k, grid_2d(7, 5, 4, 2),
                        {scalar_arg<u32>(7), scalar_arg<u32>(5), BufferInit{DType::u32, {}, 35}});
  auto y = be->allocate(DType::u32, 35);
  be->launch(k, grid_2d(7, 5, 4, 2), {scalar_arg<u32>(7), scalar_arg<u32>(5), y});
  const auto out = read_buffer(*be, *y);
  for (u32 r = 0; r < 5; ++r) {
    for (u32 c = 0; c < 7; ++c) EXPECT_EQ(out[r * 7 + c], r * 100 + c + 3 * 10000) << r << "," << c;
  }
}

TEST(OpenCL, MultiplyAddIsUnfusedOrFused) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  // OpenCL C lets the compiler contract a*b+c into one fma (FP_CONTRACT defaults to ON, and the
  // printer leaves it on; docs/architecture.md lists contraction among the expected precision
  // differences). The interpreter rounds twice. With a = 1+2^-12 the product's last bit is a tie
  // that rounds away, so a*a-(1+2^-11) is 0 unfused and 2^-24 fused: either is accepted, and
  // nothing else (PoCL fuses).
  const auto k = passes::optimize(trace("muladd", [](KernelBuilder& b) {
    auto a = b.in<f32>("a", 1u);
    auto c = b.in<f32>("c", 1u);
    auto y = b.out<f32>("y", 1u);
    store(y, 0u, load(a, 0u) * load(a, 0u) + load(c, 0u));
  }));
  const std::vector<InitArg> init{BufferInit{DType::f32, {1.0 + 1.0 / 4096}},
                                  BufferInit{DType::f32, {-(1.0 + 1.0 / 2048)}}, BufferInit{DType::f32, {}, 1}};
  Interpreter interp;
  EXPECT_EQ(unpack(DType::f32, run_on(interp, k, grid_1d(1, 1), init).buffers[2])[0], 0.0);
  const double got = unpack(DType::f32, run_on(*be, k, grid_1d(1, 1), init).buffers[2])[0];
  EXPECT_TRUE(got == 0.0 || got == std::ldexp(1.0, -24)) << got;
}

TEST(OpenCL, FeaturesKernelAgreesWithInterpreter) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  // Shared memory, barrier, loops, if/else, integer and f32 atomics, math functions, 16-bit
  // conversions. Math functions may differ by a few ulp between backends and f32 atomic adds
  // in any order, so y and total get a tolerance; the integer counts must be exact.
  const auto k = passes::optimize(trace("features", examples::features));
  const u32 n = 150;  // 3 groups of 64: 42 tail threads take the else branch
  const auto x = examples::random_values(DType::f16, n, 7, -2.0, 2.0);
  const std::vector<InitArg> init{scalar_arg<u32>(n),
                                  scalar_arg<float>(0.75f),
                                  BufferInit{DType::f16, x},
                                  BufferInit{DType::bf16, {}, n},
                                  BufferInit{DType::i32, {0, 0, 0, 0, 0}},
                                  BufferInit{DType::f32, {0.0}}};
  Interpreter interp;
  const Side want = run_on(interp, k, grid_1d(n, 64), init);
  const Side got = run_on(*be, k, grid_1d(n, 64), init);
  const auto y_want = unpack(DType::bf16, want.buffers[1]);
  const auto y_got = unpack(DType::bf16, got.buffers[1]);
  EXPECT_EQ(examples::first_mismatch(y_want, y_got, {1e-6, 1.0 / 128}), -1);  // one bf16 ulp
  // Every atomic result is order-independent: adds go to counts[0..2], the max to counts[3],
  // the tail threads' min to counts[4].
  const auto c_want = unpack(DType::i32, want.buffers[2]);
  const auto c_got = unpack(DType::i32, got.buffers[2]);
  for (int b = 0; b < 5; ++b) EXPECT_EQ(c_got[b], c_want[b]) << "counts[" << b << "]";
  EXPECT_EQ(c_want[3], 2);
  const double t_want = unpack(DType::f32, want.buffers[3])[0];
  const double t_got = unpack(DType::f32, got.buffers[3])[0];
  EXPECT_NEAR(t_got, t_want, 1e-4 * (1 + std::fabs(t_want)));
}

// Every registered kernel x dtype x case against its CPU oracle, on this device: one test per kernel
// (PoCL compiles each variant cold, so CTest runs them in parallel), programs under 100 kB built with
// -cl-opt-disable (OpenCLOptions::unoptimized_below; ingot test and the other tests here build
// everything optimized). On a CPU device, kernels whose
// OpenCL C exceeds harness::OpenBackendOptions' limit (the largest tensor-core cases, 1-2 minutes
// each to compile: more than half the suite's time) are skipped, with the reason, unless
// INGOT_TEST_LONG=1; they run on the interpreter and the GPUs regardless.
class OpenCLKernelLibrary : public ::testing::TestWithParam<std::string> {};

TEST_P(OpenCLKernelLibrary, PassesTheHarness) {
  const char* long_env = std::getenv("INGOT_TEST_LONG");
  const bool long_compiles = long_env != nullptr && std::string(long_env) == "1";
  harness::OpenBackendOptions open;
  open.opencl = test_options();
  open.opencl.unoptimized_below = 100'000;  // ~4x faster PoCL builds of small programs; the other tests: optimized
  if (long_compiles) open.cpu_opencl_source_limit = 0;
  const harness::BackendSlot slot = harness::open_backend("opencl", open);
  if (!slot.backend) GTEST_SKIP() << slot.why_absent;
  const auto* cl = dynamic_cast<const OpenCLBackend*>(slot.backend.get());
  ASSERT_NE(cl, nullptr);
  const bool cpu = !cl->device_info().is_gpu;
  // Skips: the source-size limit on CPU devices only (unless INGOT_TEST_LONG=1), and on any device a kernel whose
  // shared memory exceeds the device's (NVIDIA's OpenCL gives 48 KiB, less than CUDA's opt-in 227 KiB).
  const auto size_skip = [](const std::string& why) {
    return why.find("minutes to compile on a CPU device") != std::string::npos;
  };
  const auto memory_skip = [](const std::string& why) {
    return why.find("of shared memory per work-group; the device gives") != std::string::npos;
  };
  harness::HarnessOptions o;
  o.filter = GetParam() + "$";
  // The library's default variants; INGOT_TEST_ALL_VARIANTS=1 adds every tuning option set the registry lists (the
  // interpreter runs all of them in Harness.LibraryPassesOnTheInterpreter).
  const char* all_env = std::getenv("INGOT_TEST_ALL_VARIANTS");
  o.all_variants = all_env != nullptr && std::string(all_env) == "1";
  const auto rep = harness::run_harness(harness::builtin_registry(), {slot}, o);
  for (const auto& r : rep.results) {
    EXPECT_EQ(r.kernel, GetParam());
    if (r.status == harness::Status::Fail) {
      ADD_FAILURE() << r.kernel << " " << dtype_name(r.dtype) << " " << r.case_name << ": " << r.message;
    }
  }
  EXPECT_GT(rep.passed, 0u);
  for (const auto& [why, n] : rep.skip_reasons) {
    EXPECT_TRUE((size_skip(why) && cpu && !long_compiles) || memory_skip(why)) << n << " skipped: " << why;
    std::printf("%zu cases skipped: %s\n", n, why.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKernel, OpenCLKernelLibrary, ::testing::ValuesIn(harness::builtin_registry().names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// ---------------------------------------------------------------------------- disk cache

TEST(OpenCL, SecondBuildComesFromTheDiskCache) {
  TempDir dir("cache");
  INGOT_REQUIRE_OPENCL(first, test_options(dir.path()));
  const auto src = opencl_source("saxpy", kSaxpySource);
  EXPECT_EQ(first->prepare(src), ProgramOrigin::Source);
  const CacheKey key{src.source, first->cache_target(), first->build_options()};
  const auto file = dir.path() / (key.hex() + ".bin");
  ASSERT_TRUE(std::filesystem::exists(file)) << file;
  EXPECT_GT(std::filesystem::file_size(file), 0u);

  // A fresh backend with the same cache directory loads the binary, and it runs.
  auto second = OpenCLBackend::create(test_options(dir.path()));
  EXPECT_EQ(second->prepare(src), ProgramOrigin::DiskCache);
  EXPECT_EQ(second->prepare(src), ProgramOrigin::Memory);
  auto x = make_buffer(*second, DType::f32, {1, 2, 3});
  auto y = make_buffer(*second, DType::f32, {0, 0, 0});
  second->launch_source(
      src, grid_1d(3, 4),
      {scalar_arg<float>(3.0f), x, y, scalar_arg<u32>(3), scalar_arg<u8>(1), scalar_arg<i64>(0), scalar_arg<u16>(0)});
  EXPECT_EQ(read_buffer(*second, *y), (std::vector<double>{3, 6, 9}));

  // use_cache = false neither reads nor writes it.
  OpenCLOptions no_cache = test_options(dir.path());
  no_cache.use_cache = false;
  EXPECT_EQ(OpenCLBackend::create(no_cache)->prepare(src), ProgramOrigin::Source);
}

TEST(OpenCL, RefusedCachedBinaryFallsBackToSource) {
  TempDir dir("badbin");
  INGOT_REQUIRE_OPENCL(be, test_options(dir.path()));
  const auto src = opencl_source("saxpy", kSaxpySource);
  const CacheKey key{src.source, be->cache_target(), be->build_options()};
  // A well-formed cache entry whose content no driver accepts as a program binary.
  ASSERT_TRUE(DiskCache(dir.path()).put(key, {'n', 'o', 't', ' ', 'a', ' ', 'b', 'i', 'n', 'a', 'r', 'y'}));
  EXPECT_EQ(be->prepare(src), ProgramOrigin::Source);
  // ...and the entry was replaced by the real binary.
  EXPECT_EQ(OpenCLBackend::create(test_options(dir.path()))->prepare(src), ProgramOrigin::DiskCache);
}

TEST(OpenCL, IRKernelSecondBuildComesFromTheDiskCache) {
  TempDir dir("ircache");
  INGOT_REQUIRE_OPENCL(first, test_options(dir.path()));
  const auto k = copy_kernel();
  const auto src = codegen::emit(k, codegen::Target::OpenCL);
  auto x = make_buffer(*first, DType::f32, iota_values(10));
  auto y = first->allocate(DType::f32, 10);
  first->launch(k, grid_1d(10, 8), {scalar_arg<u32>(10), x, y});
  EXPECT_EQ(first->prepare(src), ProgramOrigin::Memory);
  const CacheKey key{src.source, first->cache_target(), first->build_options()};
  EXPECT_TRUE(std::filesystem::exists(dir.path() / (key.hex() + ".bin")));

  auto second = OpenCLBackend::create(test_options(dir.path()));
  EXPECT_EQ(second->prepare(src), ProgramOrigin::DiskCache);
  auto x2 = make_buffer(*second, DType::f32, iota_values(10));
  auto y2 = second->allocate(DType::f32, 10);
  second->launch(k, grid_1d(10, 8), {scalar_arg<u32>(10), x2, y2});
  EXPECT_EQ(read_buffer(*second, *y2), iota_values(10));
}

// OpenCLOptions::unoptimized_below: a program under it builds with -cl-opt-disable (its disk-cache key says so), one
// at or over it with the plain options; both compute the same values.
TEST(OpenCL, SmallProgramsBuildUnoptimizedBelowTheLimit) {
  TempDir dir("o0cache");
  const auto k = copy_kernel();
  const auto src = codegen::emit(k, codegen::Target::OpenCL);
  for (const bool small : {true, false}) {
    OpenCLOptions o = test_options(dir.path());
    o.unoptimized_below = small ? src.source.size() + 1 : src.source.size();
    INGOT_REQUIRE_OPENCL(be, o);
    auto x = make_buffer(*be, DType::f32, iota_values(10));
    auto y = be->allocate(DType::f32, 10);
    be->launch(k, grid_1d(10, 8), {scalar_arg<u32>(10), x, y});
    EXPECT_EQ(read_buffer(*be, *y), iota_values(10));
    const CacheKey o0{src.source, be->cache_target(), be->build_options() + " -cl-opt-disable"};
    const CacheKey o2{src.source, be->cache_target(), be->build_options()};
    EXPECT_EQ(std::filesystem::exists(dir.path() / (o0.hex() + ".bin")), small);
    EXPECT_EQ(std::filesystem::exists(dir.path() / (o2.hex() + ".bin")), !small);
    std::filesystem::remove_all(dir.path());
    std::filesystem::create_directories(dir.path());
  }
}

// Both builds of the f16 conversions (OpenCLOptions::f16_conversions) give the host's bits: the core built-ins
// vload_half / vstore_half_rte and the portable helpers (the source holds both, the portable under #ifdef; the build
// options pick). Auto takes the portable helpers on PoCL only (its loop vectoriser miscompiles vload_half in some
// kernels) unless $INGOT_OPENCL_F16 says otherwise.
TEST(OpenCL, SixteenBitConversionsMatchTheHostBitForBit) {
  using F16 = OpenCLOptions::F16Conversions;
  const char* env = std::getenv("INGOT_OPENCL_F16");
  TempDir dir("f16cache");
  const auto h2f = codegen::emit(ingot::testing::conversion_kernel<f16, float>("h2f"), codegen::Target::OpenCL);
  for (const F16 mode : {F16::Builtins, F16::Portable, F16::Auto}) {
    std::filesystem::remove_all(dir.path());
    std::filesystem::create_directories(dir.path());
    OpenCLOptions o = test_options(dir.path());
    o.f16_conversions = mode;
    INGOT_REQUIRE_OPENCL(be, o);
    std::string platform = be->device_info().platform_name;
    for (auto& ch : platform) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const bool pocl = platform.find("portable computing language") != std::string::npos;
    if (mode != F16::Auto || env == nullptr) {
      EXPECT_EQ(be->device_info().f16_builtins, mode == F16::Builtins || (mode == F16::Auto && !pocl));
    }
    SCOPED_TRACE(be->device_info().f16_builtins ? "vload_half / vstore_half_rte" : "portable helpers");
    ingot::testing::expect_conversions_match_host(*be);
    // The portable build is the one with the macro defined (the disk cache's key holds the options).
    const std::string opts = be->build_options() + (be->device_info().f16_builtins ? "" : " -D INGOT_PORTABLE_F16");
    EXPECT_TRUE(std::filesystem::exists(dir.path() / (CacheKey{h2f.source, be->cache_target(), opts}.hex() + ".bin")))
        << "no program built with options '" << opts << "'";
  }
}

// $INGOT_OPENCL_F16 picks the conversions where the options leave it to Auto; a value it does not know is refused with
// the values it takes; explicit options win over it.
TEST(OpenCL, SixteenBitConversionsFollowTheEnvironment) {
  INGOT_REQUIRE_OPENCL(plain, test_options());  // (skips before the environment is touched)
  EXPECT_EQ(plain->name(), "opencl");
  using F16 = OpenCLOptions::F16Conversions;
  struct Restore {  // the variable as it was, however the test ends
    std::optional<std::string> saved;
    ~Restore() { saved ? (void)::setenv("INGOT_OPENCL_F16", saved->c_str(), 1) : (void)::unsetenv("INGOT_OPENCL_F16"); }
  } restore{std::getenv("INGOT_OPENCL_F16") ? std::optional<std::string>(std::getenv("INGOT_OPENCL_F16"))
                                            : std::nullopt};
  ::setenv("INGOT_OPENCL_F16", "portable", 1);
  EXPECT_FALSE(OpenCLBackend::create(test_options())->device_info().f16_builtins);
  ::setenv("INGOT_OPENCL_F16", "BuiltIns", 1);
  EXPECT_TRUE(OpenCLBackend::create(test_options())->device_info().f16_builtins);
  OpenCLOptions o = test_options();
  o.f16_conversions = F16::Portable;
  EXPECT_FALSE(OpenCLBackend::create(o)->device_info().f16_builtins);
  ::setenv("INGOT_OPENCL_F16", "fast", 1);
  try {
    (void)OpenCLBackend::create(test_options());
    ADD_FAILURE() << "expected BackendUnavailable from $INGOT_OPENCL_F16";
  } catch (const BackendUnavailable& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("INGOT_OPENCL_F16 is 'fast'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("builtins, portable or auto"), std::string::npos) << msg;
  }
}

TEST(OpenCL, SixteenBitConversionsPrintBothWays) {
  const auto k = trace("twice16", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<f16>("x", n);
    auto y = b.out<f16>("y", n);
    auto i = b.program_id(0);
    auto v = cast<float>(load(x, select(i < n, i, 0u))) * 2.0f;
    if_(i < n, [&] { store(y, i, v); });
  });
  const auto cl = codegen::emit(k, codegen::Target::OpenCL).source;
  for (const char* want : {"#ifdef INGOT_PORTABLE_F16", "vload_half(0, ", "vstore_half_rte(f, 0, ",
                           "ingot_f16_to_f32(ushort h)", "ingot_f32_to_f16(float f)", "#else", "#endif"}) {
    EXPECT_NE(cl.find(want), std::string::npos) << want << " missing from\n" << cl;
  }
  EXPECT_EQ(codegen::emit(k, codegen::Target::CUDA).source.find("INGOT_PORTABLE_F16"), std::string::npos);
}

// The bench on a device measures, per row, a copy of the same bytes timed the same way.
TEST(OpenCL, BenchRowsCarryTheSameSizeCopy) {
  INGOT_REQUIRE_OPENCL(be, test_options());
  harness::Registry reg;
  harness::KernelSpec s = *harness::builtin_registry().find("depthwise_conv1d");
  s.bench = {{"tiny", s.default_test().params}};
  reg.add(s);
  harness::BenchOptions opt;
  opt.dtype = DType::f32;
  opt.timing = {1, 3};
  const auto rows = harness::run_bench(reg, *be, "opencl", harness::Ceilings{}, opt);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_TRUE(rows[0].skipped.empty()) << rows[0].skipped;
  EXPECT_GT(rows[0].same_copy_s, 0);
  EXPECT_DOUBLE_EQ(rows[0].frac_same_copy, rows[0].same_copy_s / rows[0].median_s);
}
