// The OpenCL runtime (see ingot/runtime/opencl.hpp). Built against the OpenCL 1.2 API through
// the ICD loader when CMake finds OpenCL (INGOT_HAVE_OPENCL); otherwise create() explains that
// the build has no OpenCL and nothing else can be reached.
#include "ingot/runtime/opencl.hpp"

#include <sstream>

namespace ingot::runtime {

const char* program_origin_name(ProgramOrigin o) {
  switch (o) {
    case ProgramOrigin::Memory: return "memory";
    case ProgramOrigin::DiskCache: return "disk-cache";
    case ProgramOrigin::Source: return "source";
  }
  return "?";
}

std::string OpenCLDeviceInfo::describe() const {
  std::ostringstream os;
  os << "platform:            " << platform_name << " (" << platform_version << ")\n"
     << "device:              " << device_name << (is_gpu ? " [GPU]" : "") << "\n"
     << "device version:      " << device_version << "\n"
     << "OpenCL C version:    " << opencl_c_version << "\n"
     << "driver version:      " << driver_version << "\n"
     << "compute units:       " << compute_units << "\n"
     << "max work-group size: " << max_work_group_size << "\n"
     << "global memory:       " << global_memory_bytes / (1024ull * 1024ull) << " MiB\n"
     << "local memory:        " << local_memory_bytes / 1024 << " KiB\n"
     << "cl_khr_fp16:         " << (has_fp16 ? "yes" : "no") << "\n"
     << "cl_khr_int64_base_atomics: " << (has_int64_base_atomics ? "yes" : "no") << "\n"
     << "f16 conversions:     " << (f16_builtins ? "vload_half / vstore_half_rte" : "portable integer helpers") << "\n";
  return os.str();
}

}  // namespace ingot::runtime

#if defined(INGOT_HAVE_OPENCL) && INGOT_HAVE_OPENCL

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "ingot/codegen/dialect.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include <pthread.h>

#include "ingot/runtime/cache.hpp"

namespace ingot::runtime {

namespace {

// The stack a program's build, kernel creation and first queries run on. PoCL (LLVM 15) compiles a kernel on the
// thread that first creates or queries it (clCreateKernel, clGetKernelWorkGroupInfo), and for the largest
// legalised tensor-core kernel (the grouped 3-D 16-bit bench default, 4.5 MB of OpenCL C) its ScalarEvolution recursed
// past the 8 MB main-thread stack: a segmentation fault of the whole process after 7 minutes (2026-12-04, this
// repository's Debian 12 machine; a build on PoCL's own thread did not crash). Only touched pages are committed.
constexpr std::size_t kBuildStackBytes = std::size_t{1} << 30;

// Runs f on a thread with a stack of `bytes`, joins it and rethrows what f threw; where no such thread can be made,
// runs f on the caller's stack.
template <class F>
void on_big_stack(std::size_t bytes, F&& f) {
  struct Job {
    std::remove_reference_t<F>* f;
    std::exception_ptr error;
  };
  Job job{&f, nullptr};
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) {
    f();
    return;
  }
  pthread_t th{};
  const auto entry = [](void* p) -> void* {
    auto* j = static_cast<Job*>(p);
    try {
      (*j->f)();
    } catch (...) {
      j->error = std::current_exception();
    }
    return nullptr;
  };
  const bool started = pthread_attr_setstacksize(&attr, bytes) == 0 && pthread_create(&th, &attr, entry, &job) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    f();
    return;
  }
  pthread_join(th, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

// ------------------------------------------------------------------------------ error names

const char* cl_error_name(cl_int e) {
  switch (e) {
    case 0: return "CL_SUCCESS";
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -2: return "CL_DEVICE_NOT_AVAILABLE";
    case -3: return "CL_COMPILER_NOT_AVAILABLE";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -7: return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case -8: return "CL_MEM_COPY_OVERLAP";
    case -9: return "CL_IMAGE_FORMAT_MISMATCH";
    case -10: return "CL_IMAGE_FORMAT_NOT_SUPPORTED";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -12: return "CL_MAP_FAILURE";
    case -13: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case -14: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case -15: return "CL_COMPILE_PROGRAM_FAILURE";
    case -16: return "CL_LINKER_NOT_AVAILABLE";
    case -17: return "CL_LINK_PROGRAM_FAILURE";
    case -18: return "CL_DEVICE_PARTITION_FAILED";
    case -19: return "CL_KERNEL_ARG_INFO_NOT_AVAILABLE";
    case -30: return "CL_INVALID_VALUE";
    case -31: return "CL_INVALID_DEVICE_TYPE";
    case -32: return "CL_INVALID_PLATFORM";
    case -33: return "CL_INVALID_DEVICE";
    case -34: return "CL_INVALID_CONTEXT";
    case -35: return "CL_INVALID_QUEUE_PROPERTIES";
    case -36: return "CL_INVALID_COMMAND_QUEUE";
    case -37: return "CL_INVALID_HOST_PTR";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -39: return "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR";
    case -40: return "CL_INVALID_IMAGE_SIZE";
    case -41: return "CL_INVALID_SAMPLER";
    case -42: return "CL_INVALID_BINARY";
    case -43: return "CL_INVALID_BUILD_OPTIONS";
    case -44: return "CL_INVALID_PROGRAM";
    case -45: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -47: return "CL_INVALID_KERNEL_DEFINITION";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -53: return "CL_INVALID_WORK_DIMENSION";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -56: return "CL_INVALID_GLOBAL_OFFSET";
    case -57: return "CL_INVALID_EVENT_WAIT_LIST";
    case -58: return "CL_INVALID_EVENT";
    case -59: return "CL_INVALID_OPERATION";
    case -60: return "CL_INVALID_GL_OBJECT";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    case -62: return "CL_INVALID_MIP_LEVEL";
    case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -64: return "CL_INVALID_PROPERTY";
    case -65: return "CL_INVALID_IMAGE_DESCRIPTOR";
    case -66: return "CL_INVALID_COMPILER_OPTIONS";
    case -67: return "CL_INVALID_LINKER_OPTIONS";
    case -68: return "CL_INVALID_DEVICE_PARTITION_COUNT";
    case -69: return "CL_INVALID_PIPE_SIZE";
    case -70: return "CL_INVALID_DEVICE_QUEUE";
    case -71: return "CL_INVALID_SPEC_ID";
    case -72: return "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    case -1121: return "CL_CONTEXT_TERMINATED_KHR";
    case -9999: return "CL_NV_ILLEGAL_MEMORY_ACCESS(unofficial NVIDIA code)";
    default: return "CL_UNKNOWN_ERROR";
  }
}

std::string cl_error_text(cl_int e) { return std::string(cl_error_name(e)) + " (" + std::to_string(e) + ")"; }

// Throws OpenCLError "opencl: <doing>: <call> failed with CL_... (code)" unless e is CL_SUCCESS.
void check(cl_int e, const char* call, const std::string& doing) {
  if (e != CL_SUCCESS) throw OpenCLError("opencl: " + doing + ": " + call + " failed with " + cl_error_text(e), e);
}

// ------------------------------------------------------------------------------ RAII handles

// Owns one reference to a cl object; releases it on destruction. Move-only.
template <class T, cl_int (*Release)(T)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T h) : h_(h) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  [[nodiscard]] T get() const { return h_; }
  explicit operator bool() const { return h_ != nullptr; }
  void reset() {
    if (h_) Release(h_);
    h_ = nullptr;
  }

 private:
  T h_ = nullptr;
};

using ContextHandle = Handle<cl_context, clReleaseContext>;
using QueueHandle = Handle<cl_command_queue, clReleaseCommandQueue>;
using MemHandle = Handle<cl_mem, clReleaseMemObject>;
using ProgramHandle = Handle<cl_program, clReleaseProgram>;
using KernelHandle = Handle<cl_kernel, clReleaseKernel>;

// ------------------------------------------------------------------------------ info queries

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back())))) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string platform_string(cl_platform_id p, cl_platform_info what, const char* name) {
  std::size_t n = 0;
  check(clGetPlatformInfo(p, what, 0, nullptr, &n), "clGetPlatformInfo", std::string("querying platform ") + name);
  std::string s(n, '\0');
  check(clGetPlatformInfo(p, what, n, s.data(), nullptr), "clGetPlatformInfo",
        std::string("querying platform ") + name);
  return trim(s);
}

std::string device_string(cl_device_id d, cl_device_info what, const char* name) {
  std::size_t n = 0;
  check(clGetDeviceInfo(d, what, 0, nullptr, &n), "clGetDeviceInfo", std::string("querying device ") + name);
  std::string s(n, '\0');
  check(clGetDeviceInfo(d, what, n, s.data(), nullptr), "clGetDeviceInfo", std::string("querying device ") + name);
  return trim(s);
}

template <class T>
T device_value(cl_device_id d, cl_device_info what, const char* name) {
  T v{};
  check(clGetDeviceInfo(d, what, sizeof v, &v, nullptr), "clGetDeviceInfo", std::string("querying device ") + name);
  return v;
}

bool has_extension(const std::string& extensions, const std::string& ext) {
  std::istringstream is(extensions);
  std::string tok;
  while (is >> tok) {
    if (tok == ext) return true;
  }
  return false;
}

// "OpenCL C 1.2 PoCL" -> 12; 0 when unparsable.
int opencl_c_version_number(const std::string& s) {
  int major = 0;
  int minor = 0;
  if (std::sscanf(s.c_str(), "OpenCL C %d.%d", &major, &minor) != 2) return 0;
  return major * 10 + minor;
}

// ------------------------------------------------------------------------------ shared state

// The context and queue, shared by the backend and every buffer it made (a buffer may outlive
// its backend; the context lives until the last of them is gone).
struct Session {
  cl_device_id device = nullptr;
  ContextHandle context;
  QueueHandle queue;
};

class OpenCLBuffer final : public DeviceBuffer {
 public:
  OpenCLBuffer(DType t, std::size_t count, std::shared_ptr<const Session> s, MemHandle m)
      : DeviceBuffer(t, count), session(std::move(s)), mem(std::move(m)) {}
  [[nodiscard]] std::string backend_name() const override { return "opencl"; }
  std::shared_ptr<const Session> session;  // declared first: destroyed after mem
  MemHandle mem;
};

struct Candidate {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  std::string platform_name;
  std::string device_name;
  bool is_gpu = false;
};

}  // namespace

// ------------------------------------------------------------------------------ the backend

struct OpenCLBackend::Impl {
  struct Built {
    ProgramHandle program;
    KernelHandle kernel;
    std::uint64_t max_group_threads = 0;  // CL_KERNEL_WORK_GROUP_SIZE on this device
    cl_uint num_args = 0;
  };

  OpenCLOptions options;
  OpenCLDeviceInfo info;
  std::array<std::size_t, 3> max_item_sizes{};
  std::uint64_t max_alloc_bytes = 0;
  std::string build_options = "-cl-std=CL1.2";
  std::string portable_macro = codegen::dialect(codegen::Target::OpenCL).portable_helpers_macro;
  std::string cache_target;
  std::optional<DiskCache> cache;
  std::shared_ptr<Session> session;
  std::unordered_map<std::string, Built> programs;        // key: entry, '\n', source
  codegen::SourceCache sources{codegen::Target::OpenCL};  // a relaunched kernel is not re-printed

  OpenCLBuffer& own(const DeviceBuffer& b) const {
    auto* p = dynamic_cast<const OpenCLBuffer*>(&b);
    if (!p) throw ArgumentError("buffer belongs to backend '" + b.backend_name() + "', not 'opencl'");
    if (p->session != session) {
      throw ArgumentError(
          "buffer belongs to another OpenCL backend (a different context): allocate it with the backend that launches");
    }
    return const_cast<OpenCLBuffer&>(*p);
  }

  // A printed kernel's shared arrays (KernelSource::shared_bytes; 0 where unknown) against the device's local memory.
  void check_local_memory(const codegen::KernelSource& src) const {
    if (src.shared_bytes <= info.local_memory_bytes) return;
    throw ArgumentError("kernel '" + src.entry + "' needs " + std::to_string(src.shared_bytes) +
                        " bytes of local memory per work-group; " + info.device_name + " has " +
                        std::to_string(info.local_memory_bytes) +
                        " (CL_DEVICE_LOCAL_MEM_SIZE): use a configuration with smaller shared arrays");
  }

  void check_geometry(const LaunchGeometry& g, const std::string& kernel) const {
    try {
      validate_geometry(g, info.max_work_group_size);
    } catch (const std::invalid_argument& e) {
      throw ArgumentError("kernel '" + kernel + "': " + e.what() + " (" + info.device_name + ")");
    }
    for (int a = 0; a < 3; ++a) {
      if (g.group_size[a] > max_item_sizes[a]) {
        throw ArgumentError("kernel '" + kernel + "': launch " + g.describe() + ": work-group size " +
                            std::to_string(g.group_size[a]) + " on axis " + std::to_string(a) + " exceeds " +
                            info.device_name + "'s limit of " + std::to_string(max_item_sizes[a]) +
                            " (CL_DEVICE_MAX_WORK_ITEM_SIZES)");
      }
    }
  }

  std::string build_log(cl_program p) const {
    std::size_t n = 0;
    if (clGetProgramBuildInfo(p, session->device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) != CL_SUCCESS) {
      return "(no build log: clGetProgramBuildInfo failed)";
    }
    std::string log(n, '\0');
    if (clGetProgramBuildInfo(p, session->device, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr) != CL_SUCCESS) {
      return "(no build log: clGetProgramBuildInfo failed)";
    }
    log = trim(log);
    return log.empty() ? "(the driver's build log is empty)" : log;
  }

  // The options of one program (OpenCLOptions::unoptimized_below, f16_conversions).
  std::string options_for(const codegen::KernelSource& src) const {
    std::string o = src.source.size() < options.unoptimized_below ? build_options + " -cl-opt-disable" : build_options;
    if (!info.f16_builtins && !portable_macro.empty() && src.source.find(portable_macro) != std::string::npos) {
      o += " -D " + portable_macro;
    }
    return o;
  }

  ProgramHandle build_from_source(const codegen::KernelSource& src, const std::string& opts) const {
    const char* text = src.source.c_str();
    const std::size_t len = src.source.size();
    cl_int e = CL_SUCCESS;
    ProgramHandle p(clCreateProgramWithSource(session->context.get(), 1, &text, &len, &e));
    check(e, "clCreateProgramWithSource", "creating the program of kernel '" + src.entry + "'");
    const cl_int be = clBuildProgram(p.get(), 1, &session->device, opts.c_str(), nullptr, nullptr);
    if (be != CL_SUCCESS) {
      const std::string log = build_log(p.get());
      throw OpenCLCompileError("opencl: building kernel '" + src.entry + "' for " + info.device_name +
                                   " with options '" + opts + "': clBuildProgram failed with " + cl_error_text(be) +
                                   "; build log:\n" + log,
                               src.entry, opts, log, src.source);
    }
    return p;
  }

  // A program from a cached binary, or an empty handle when the driver refuses it.
  ProgramHandle build_from_binary(const std::vector<std::uint8_t>& bin, const std::string& opts) const {
    const unsigned char* ptr = bin.data();
    const std::size_t len = bin.size();
    cl_int status = CL_SUCCESS;
    cl_int e = CL_SUCCESS;
    ProgramHandle p(clCreateProgramWithBinary(session->context.get(), 1, &session->device, &len, &ptr, &status, &e));
    if (e != CL_SUCCESS || status != CL_SUCCESS || !p) return {};
    if (clBuildProgram(p.get(), 1, &session->device, opts.c_str(), nullptr, nullptr) != CL_SUCCESS) return {};
    return p;
  }

  // The device binary of a built program; empty when the driver offers none.
  std::vector<std::uint8_t> binary_of(cl_program p) const {
    std::size_t size = 0;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0) {
      return {};
    }
    std::vector<std::uint8_t> bin(size);
    unsigned char* ptrs[1] = {bin.data()};
    if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptrs, ptrs, nullptr) != CL_SUCCESS) return {};
    return bin;
  }

  std::pair<Built*, ProgramOrigin> get(const codegen::KernelSource& src) {
    std::string key = src.entry;
    key += '\n';
    key += src.source;
    if (auto it = programs.find(key); it != programs.end()) return {&it->second, ProgramOrigin::Memory};
    Built b;
    ProgramOrigin origin = ProgramOrigin::Source;
    on_big_stack(kBuildStackBytes, [&] { origin = build(src, b); });
    auto [it, inserted] = programs.emplace(std::move(key), std::move(b));
    (void)inserted;
    return {&it->second, origin};
  }

  // Builds src's program (from the disk cache's binary where it has one), creates its kernel and asks its limits:
  // where it came from.
  ProgramOrigin build(const codegen::KernelSource& src, Built& b) {
    const std::string program_options = options_for(src);
    const CacheKey ck{src.source, cache_target, program_options};
    ProgramOrigin origin = ProgramOrigin::Source;
    ProgramHandle program;
    if (cache) {
      if (auto bin = cache->get(ck)) {
        const CacheUse in_use = cache->mark_in_use(ck);  // (a crash inside the driver here quarantines the entry)
        program = build_from_binary(*bin, program_options);
        if (program) {
          origin = ProgramOrigin::DiskCache;
        } else {
          cache->quarantine(ck);
        }
      }
    }
    if (!program) {
      program = build_from_source(src, program_options);
      if (cache) {
        // Stored only once the driver has accepted these very bytes back (a driver can hand out a binary it cannot
        // load, e.g. from its own cache left half-written by an interrupted build).
        const auto bin = binary_of(program.get());
        if (!bin.empty() && build_from_binary(bin, program_options)) (void)cache->put(ck, bin);
      }
    }

    cl_int e = CL_SUCCESS;
    b.kernel = KernelHandle(clCreateKernel(program.get(), src.entry.c_str(), &e));
    check(e, "clCreateKernel", "creating kernel '" + src.entry + "' from its built program");
    b.program = std::move(program);
    std::size_t wg = 0;
    check(clGetKernelWorkGroupInfo(b.kernel.get(), session->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr),
          "clGetKernelWorkGroupInfo", "querying the work-group limit of kernel '" + src.entry + "'");
    b.max_group_threads = wg;
    check(clGetKernelInfo(b.kernel.get(), CL_KERNEL_NUM_ARGS, sizeof b.num_args, &b.num_args, nullptr),
          "clGetKernelInfo", "querying the parameters of kernel '" + src.entry + "'");
    return origin;
  }

  // Sets the arguments and runs the kernel; `param_names` (may be empty) improves messages.
  void run(const codegen::KernelSource& src, const LaunchGeometry& g, const std::vector<Arg>& args,
           const std::vector<std::string>& param_names) {
    Built& b = *get(src).first;
    const std::string& entry = src.entry;
    if (g.threads_per_group() > b.max_group_threads) {
      throw ArgumentError("kernel '" + entry + "': launch " + g.describe() + ": a work-group of " +
                          std::to_string(g.threads_per_group()) + " threads exceeds this kernel's limit of " +
                          std::to_string(b.max_group_threads) + " on " + info.device_name +
                          " (CL_KERNEL_WORK_GROUP_SIZE): use smaller work-groups");
    }
    if (args.size() != b.num_args) {
      throw ArgumentError("kernel '" + entry + "' takes " + std::to_string(b.num_args) + " arguments, got " +
                          std::to_string(args.size()));
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string what = "setting argument " + std::to_string(i) +
                               (i < param_names.size() ? " ('" + param_names[i] + "')" : std::string()) +
                               " of kernel '" + entry + "'";
      const auto idx = static_cast<cl_uint>(i);
      if (const auto* buf = std::get_if<BufferPtr>(&args[i])) {
        if (!*buf) throw ArgumentError(what + ": the buffer is null");
        const cl_mem m = own(**buf).mem.get();
        check(clSetKernelArg(b.kernel.get(), idx, sizeof(cl_mem), &m), "clSetKernelArg", what);
      } else {
        const auto& s = std::get<ScalarArg>(args[i]);
        // Little-endian host: the low dtype_size bytes of the canonical bits are the value
        // (bool: one byte, 0 or 1).
        const std::uint64_t bits = s.bits;
        check(clSetKernelArg(b.kernel.get(), idx, dtype_size(s.type), &bits), "clSetKernelArg", what);
      }
    }
    std::array<std::size_t, 3> global{};
    std::array<std::size_t, 3> local{};
    for (int a = 0; a < 3; ++a) {
      global[a] = static_cast<std::size_t>(g.groups[a]) * g.group_size[a];
      local[a] = g.group_size[a];
    }
    const cl_command_queue q = session->queue.get();
    check(clEnqueueNDRangeKernel(q, b.kernel.get(), 3, nullptr, global.data(), local.data(), 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel", "launching kernel '" + entry + "' with " + g.describe());
    check(clFinish(q), "clFinish", "waiting for kernel '" + entry + "' (" + g.describe() + ") to finish");
  }
};

namespace {

std::string list_candidates(const std::vector<Candidate>& cs) {
  std::string s;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    s += (i ? "; " : "") + std::string("[") + std::to_string(i) + "] platform '" + cs[i].platform_name + "' device '" +
         cs[i].device_name + "'" + (cs[i].is_gpu ? " (GPU)" : "");
  }
  return s;
}

}  // namespace

std::unique_ptr<OpenCLBackend> OpenCLBackend::create(const OpenCLOptions& options) {
  const std::string na = "opencl not available: ";

  // Platforms. With no ICD installed, the loader answers CL_PLATFORM_NOT_FOUND_KHR.
  cl_uint num_platforms = 0;
  cl_int e = clGetPlatformIDs(0, nullptr, &num_platforms);
  if (e != CL_SUCCESS || num_platforms == 0) {
    throw BackendUnavailable(
        na + "no OpenCL platform found (clGetPlatformIDs " +
        (e != CL_SUCCESS ? "failed with " + cl_error_text(e) : std::string("returned no platforms")) +
        "): install an OpenCL driver (ICD) such as pocl-opencl-icd or the GPU vendor's, and check "
        "/etc/OpenCL/vendors and $OCL_ICD_VENDORS");
  }
  std::vector<cl_platform_id> platforms(num_platforms);
  e = clGetPlatformIDs(num_platforms, platforms.data(), nullptr);
  if (e != CL_SUCCESS)
    throw BackendUnavailable(na + "listing OpenCL platforms: clGetPlatformIDs failed with " + cl_error_text(e));

  // Devices of every platform.
  std::vector<Candidate> candidates;
  std::string platform_notes;
  for (cl_platform_id p : platforms) {
    std::string pname;
    try {
      pname = platform_string(p, CL_PLATFORM_NAME, "name");
    } catch (const OpenCLError& err) {
      platform_notes += std::string("; a platform could not be queried: ") + err.what();
      continue;
    }
    cl_uint n = 0;
    e = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (e != CL_SUCCESS || n == 0) {
      platform_notes += "; platform '" + pname + "' has no device (" +
                        (e != CL_SUCCESS ? "clGetDeviceIDs failed with " + cl_error_text(e) : std::string("none")) +
                        ")";
      continue;
    }
    std::vector<cl_device_id> devs(n);
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, devs.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id d : devs) {
      try {
        Candidate c{p, d, pname, device_string(d, CL_DEVICE_NAME, "name"), false};
        c.is_gpu = (device_value<cl_device_type>(d, CL_DEVICE_TYPE, "type") & CL_DEVICE_TYPE_GPU) != 0;
        candidates.push_back(std::move(c));
      } catch (const OpenCLError& err) {
        platform_notes += std::string("; a device of '") + pname + "' could not be queried: " + err.what();
      }
    }
  }
  if (candidates.empty()) {
    throw BackendUnavailable(na + std::to_string(num_platforms) + " OpenCL platform(s) found but no usable device" +
                             platform_notes);
  }

  // Choice.
  std::string filter = options.device_filter;
  std::string filter_from = "OpenCLOptions::device_filter";
  if (filter.empty()) {
    if (const char* env = std::getenv("INGOT_OPENCL_DEVICE"); env && *env) {
      filter = env;
      filter_from = "$INGOT_OPENCL_DEVICE";
    }
  }
  const Candidate* chosen = nullptr;
  if (!filter.empty()) {
    const std::string f = lower(filter);
    for (const auto& c : candidates) {
      if (lower(c.platform_name).find(f) != std::string::npos || lower(c.device_name).find(f) != std::string::npos) {
        chosen = &c;
        break;
      }
    }
    if (!chosen) {
      throw BackendUnavailable(na + "no OpenCL device matches '" + filter + "' (from " + filter_from +
                               ", a case-insensitive substring of the platform or device name); devices found: " +
                               list_candidates(candidates));
    }
  } else {
    for (const auto& c : candidates) {
      if (c.is_gpu) {
        chosen = &c;
        break;
      }
    }
    if (!chosen) chosen = &candidates.front();
  }

  auto impl = std::make_unique<Impl>();
  impl->options = options;
  const cl_device_id dev = chosen->device;
  OpenCLDeviceInfo& info = impl->info;
  try {
    info.platform_name = chosen->platform_name;
    info.platform_version = platform_string(chosen->platform, CL_PLATFORM_VERSION, "version");
    info.device_name = chosen->device_name;
    info.device_version = device_string(dev, CL_DEVICE_VERSION, "version");
    info.opencl_c_version = device_string(dev, CL_DEVICE_OPENCL_C_VERSION, "OpenCL C version");
    info.driver_version = device_string(dev, CL_DRIVER_VERSION, "driver version");
    info.is_gpu = chosen->is_gpu;
    info.max_work_group_size = device_value<std::size_t>(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, "max work-group size");
    info.compute_units = device_value<cl_uint>(dev, CL_DEVICE_MAX_COMPUTE_UNITS, "compute units");
    info.global_memory_bytes = device_value<cl_ulong>(dev, CL_DEVICE_GLOBAL_MEM_SIZE, "global memory size");
    info.local_memory_bytes = device_value<cl_ulong>(dev, CL_DEVICE_LOCAL_MEM_SIZE, "local memory size");
    const std::string ext = device_string(dev, CL_DEVICE_EXTENSIONS, "extensions");
    info.has_fp16 = has_extension(ext, "cl_khr_fp16");
    info.has_int64_base_atomics = has_extension(ext, "cl_khr_int64_base_atomics");
    using F16 = OpenCLOptions::F16Conversions;
    F16 f16 = options.f16_conversions;
    if (const char* env = std::getenv("INGOT_OPENCL_F16"); f16 == F16::Auto && env && *env) {
      const std::string v = lower(env);
      if (v != "builtins" && v != "portable" && v != "auto") {
        throw BackendUnavailable(na + "$INGOT_OPENCL_F16 is '" + env + "'; set it to builtins, portable or auto");
      }
      f16 = v == "builtins" ? F16::Builtins : v == "portable" ? F16::Portable : F16::Auto;
    }
    info.f16_builtins =
        f16 == F16::Builtins ||
        (f16 == F16::Auto && lower(info.platform_name).find("portable computing language") == std::string::npos);
    impl->max_alloc_bytes = device_value<cl_ulong>(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, "max allocation size");
    cl_uint dims = device_value<cl_uint>(dev, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, "work-item dimensions");
    if (dims < 3) {
      throw BackendUnavailable(na + "device '" + info.device_name + "' supports " + std::to_string(dims) +
                               " work-item dimensions; ingot launches need 3");
    }
    std::vector<std::size_t> sizes(dims);
    check(clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(std::size_t) * dims, sizes.data(), nullptr),
          "clGetDeviceInfo", "querying device max work-item sizes");
    for (int a = 0; a < 3; ++a) impl->max_item_sizes[a] = sizes[a];
    if (!device_value<cl_bool>(dev, CL_DEVICE_AVAILABLE, "availability")) {
      throw BackendUnavailable(na + "device '" + info.device_name + "' reports it is not available");
    }
    if (!device_value<cl_bool>(dev, CL_DEVICE_COMPILER_AVAILABLE, "compiler availability")) {
      throw BackendUnavailable(na + "device '" + info.device_name + "' has no OpenCL C compiler");
    }
  } catch (const OpenCLError& err) {
    throw BackendUnavailable(na + "device '" + chosen->device_name + "' could not be queried: " + err.what());
  }
  if (opencl_c_version_number(info.opencl_c_version) < 12) {
    throw BackendUnavailable(na + "device '" + info.device_name + "' supports '" + info.opencl_c_version +
                             "'; ingot's kernels need OpenCL C 1.2 or later");
  }

  auto session = std::make_shared<Session>();
  session->device = dev;
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(chosen->platform),
                                         0};
  session->context = ContextHandle(clCreateContext(props, 1, &dev, nullptr, nullptr, &e));
  if (e != CL_SUCCESS) {
    throw BackendUnavailable(na + "creating a context on '" + info.device_name + "': clCreateContext failed with " +
                             cl_error_text(e));
  }
  session->queue = QueueHandle(clCreateCommandQueue(session->context.get(), dev, 0, &e));
  if (e != CL_SUCCESS) {
    throw BackendUnavailable(na + "creating a command queue on '" + info.device_name +
                             "': clCreateCommandQueue failed with " + cl_error_text(e));
  }
  impl->session = std::move(session);
  impl->cache_target = "opencl-" + info.platform_name + "-" + info.device_name + "-" + info.driver_version;
  if (options.use_cache) impl->cache.emplace(options.cache_dir);
  return std::unique_ptr<OpenCLBackend>(new OpenCLBackend(std::move(impl)));
}

OpenCLBackend::OpenCLBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OpenCLBackend::~OpenCLBackend() = default;

const OpenCLDeviceInfo& OpenCLBackend::device_info() const { return impl_->info; }
const std::string& OpenCLBackend::build_options() const { return impl_->build_options; }
const std::string& OpenCLBackend::cache_target() const { return impl_->cache_target; }

BufferPtr OpenCLBackend::allocate(DType t, std::size_t count) {
  const std::size_t es = dtype_size(t);
  if (count > impl_->max_alloc_bytes / es) {
    throw ArgumentError("allocation of " + std::to_string(count) + " x " + std::string(dtype_name(t)) + " exceeds " +
                        impl_->info.device_name + "'s largest buffer of " + std::to_string(impl_->max_alloc_bytes) +
                        " bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
  }
  const std::size_t bytes = count * es;
  const std::string doing = "allocating a buffer of " + std::to_string(count) + " x " + std::string(dtype_name(t));
  cl_int e = CL_SUCCESS;
  // OpenCL has no empty buffers: an empty one still holds one element's storage.
  MemHandle mem(clCreateBuffer(impl_->session->context.get(), CL_MEM_READ_WRITE, std::max(bytes, es), nullptr, &e));
  check(e, "clCreateBuffer", doing);
  // The poison pattern repeats per element, so one element's bytes are the fill pattern.
  const auto pattern = poison_bytes(t, 1);
  if (bytes > 0) {
    check(clEnqueueFillBuffer(impl_->session->queue.get(), mem.get(), pattern.data(), pattern.size(), 0, bytes, 0,
                              nullptr, nullptr),
          "clEnqueueFillBuffer", doing + " (filling it with the poison pattern)");
  }
  return std::make_shared<OpenCLBuffer>(t, count, impl_->session, std::move(mem));
}

void* OpenCLBackend::queue() const { return impl_->session->queue.get(); }
void* OpenCLBackend::context() const { return impl_->session->context.get(); }

BufferPtr OpenCLBackend::wrap_buffer(void* cl_mem_handle, DType t, std::size_t count) {
  auto* mem = static_cast<cl_mem>(cl_mem_handle);
  if (!mem) throw ArgumentError("wrapping an OpenCL buffer: the cl_mem is null");
  cl_context owner = nullptr;
  check(clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof owner, &owner, nullptr), "clGetMemObjectInfo",
        "querying the context of a caller's cl_mem");
  if (owner != impl_->session->context.get()) {
    throw ArgumentError(
        "the cl_mem belongs to another OpenCL context: create it in the backend's context (OpenCLBackend::context)");
  }
  std::size_t size = 0;
  check(clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr), "clGetMemObjectInfo",
        "querying the size of a caller's cl_mem");
  if (count > size / dtype_size(t)) {
    throw ArgumentError("the cl_mem holds " + std::to_string(size) + " bytes, fewer than " + std::to_string(count) +
                        " x " + std::string(dtype_name(t)));
  }
  check(clRetainMemObject(mem), "clRetainMemObject", "retaining a caller's cl_mem");
  return std::make_shared<OpenCLBuffer>(t, count, impl_->session, MemHandle(mem));
}

void OpenCLBackend::upload(DeviceBuffer& dst, const void* src, std::size_t bytes) {
  auto& b = impl_->own(dst);
  if (bytes != b.bytes()) {
    throw ArgumentError("upload of " + std::to_string(bytes) + " bytes into a buffer of " + std::to_string(b.bytes()) +
                        " bytes (" + std::to_string(b.count()) + " x " + std::string(dtype_name(b.dtype())) + ")");
  }
  if (bytes == 0) return;
  check(clEnqueueWriteBuffer(impl_->session->queue.get(), b.mem.get(), CL_TRUE, 0, bytes, src, 0, nullptr, nullptr),
        "clEnqueueWriteBuffer", "uploading " + std::to_string(bytes) + " bytes");
}

void OpenCLBackend::download(const DeviceBuffer& src, void* dst, std::size_t bytes) {
  auto& b = impl_->own(src);
  if (bytes != b.bytes()) {
    throw ArgumentError("download of " + std::to_string(bytes) + " bytes from a buffer of " +
                        std::to_string(b.bytes()) + " bytes (" + std::to_string(b.count()) + " x " +
                        std::string(dtype_name(b.dtype())) + ")");
  }
  if (bytes == 0) return;
  check(clEnqueueReadBuffer(impl_->session->queue.get(), b.mem.get(), CL_TRUE, 0, bytes, dst, 0, nullptr, nullptr),
        "clEnqueueReadBuffer", "downloading " + std::to_string(bytes) + " bytes");
}

void OpenCLBackend::launch(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args) {
  check_args(k, args);
  for (const auto& a : args) {
    if (const auto* b = std::get_if<BufferPtr>(&a)) (void)impl_->own(**b);
  }
  impl_->check_geometry(g, k.name);
  check_launch_bounds(k, g);
  const codegen::KernelSource& src = impl_->sources.get(k);
  impl_->check_local_memory(src);
  std::vector<std::string> names;
  names.reserve(k.params.size());
  for (const auto& p : k.params) names.push_back(p.name);
  impl_->run(src, g, args, names);
}

ProgramOrigin OpenCLBackend::prepare(const codegen::KernelSource& src) { return impl_->get(src).second; }

void OpenCLBackend::launch_source(const codegen::KernelSource& src, const LaunchGeometry& g,
                                  const std::vector<Arg>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (const auto* b = std::get_if<BufferPtr>(&args[i])) {
      if (!*b) throw ArgumentError("kernel '" + src.entry + "' argument " + std::to_string(i) + ": the buffer is null");
      (void)impl_->own(**b);
    }
  }
  impl_->check_geometry(g, src.entry);
  impl_->check_local_memory(src);
  impl_->run(src, g, args, {});
}

}  // namespace ingot::runtime

#else  // no OpenCL headers at build time

namespace ingot::runtime {

// No OpenCLBackend can exist in this build: create() always throws, so the members below are
// unreachable and only satisfy the linker.
struct OpenCLBackend::Impl {
  OpenCLDeviceInfo info;
  std::string text;
};

std::unique_ptr<OpenCLBackend> OpenCLBackend::create(const OpenCLOptions&) {
  throw BackendUnavailable(
      "opencl not available: ingot was built without OpenCL headers (install ocl-icd-opencl-dev opencl-headers)");
}
OpenCLBackend::OpenCLBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OpenCLBackend::~OpenCLBackend() = default;
const OpenCLDeviceInfo& OpenCLBackend::device_info() const { return impl_->info; }
const std::string& OpenCLBackend::build_options() const { return impl_->text; }
const std::string& OpenCLBackend::cache_target() const { return impl_->text; }
BufferPtr OpenCLBackend::allocate(DType, std::size_t) { throw BackendUnavailable("opencl not available"); }
void OpenCLBackend::upload(DeviceBuffer&, const void*, std::size_t) {
  throw BackendUnavailable("opencl not available");
}
void OpenCLBackend::download(const DeviceBuffer&, void*, std::size_t) {
  throw BackendUnavailable("opencl not available");
}
void OpenCLBackend::launch(const ir::Kernel&, const LaunchGeometry&, const std::vector<Arg>&) {
  throw BackendUnavailable("opencl not available");
}
ProgramOrigin OpenCLBackend::prepare(const codegen::KernelSource&) { throw BackendUnavailable("opencl not available"); }
void* OpenCLBackend::queue() const { return nullptr; }
void* OpenCLBackend::context() const { return nullptr; }
BufferPtr OpenCLBackend::wrap_buffer(void*, DType, std::size_t) { throw BackendUnavailable("opencl not available"); }
void OpenCLBackend::launch_source(const codegen::KernelSource&, const LaunchGeometry&, const std::vector<Arg>&) {
  throw BackendUnavailable("opencl not available");
}

}  // namespace ingot::runtime

#endif
