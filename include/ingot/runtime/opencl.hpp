// ingot/runtime/opencl.hpp — the OpenCL runtime: runs kernels through the ICD loader on any
// OpenCL 1.2+ device (PoCL on a CPU in CI, vendor drivers on GPUs).
//
// Contracts:
//   - create() picks one device and holds one context and one in-order queue on it. A backend
//     is used from one thread at a time; two backends are independent.
//   - Fresh buffers hold poison_bytes() (NaN for floats); upload/download copy exactly
//     buffer.bytes() bytes and are synchronous.
//   - launch() checks the arguments and the geometry before anything runs (ArgumentError), then
//     prints the kernel as OpenCL C (codegen::emit, the ABI in codegen/printer.hpp), builds it
//     (memory map, then disk cache, then source), runs it, and returns after clFinish.
//   - Builds use "-cl-std=CL1.2" (plus "-cl-opt-disable" for sources under
//     OpenCLOptions::unoptimized_below, and "-D INGOT_PORTABLE_F16" for sources with f16 conversions where
//     OpenCLOptions::f16_conversions picks the portable helpers) and never fast-math or any option that relaxes
//     IEEE rules.
//   - Every error message names the OpenCL error (e.g. CL_INVALID_WORK_GROUP_SIZE) and what was
//     being done. The public header does not include the OpenCL headers, so it is usable (and
//     create() reports why OpenCL is unavailable) in builds without them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ingot/codegen/printer.hpp"
#include "ingot/runtime/backend.hpp"

namespace ingot::runtime {

struct OpenCLOptions {
  // Case-insensitive substring of the platform or device name. Empty: $INGOT_OPENCL_DEVICE when
  // set, else the first GPU of the first platform that has one, else the first device found.
  std::string device_filter;
  // Where compiled program binaries are kept; empty means DiskCache's default directory.
  std::filesystem::path cache_dir;
  // Whether to read and write the disk cache at all (the in-memory map is always used).
  bool use_cache = true;
  // Sources shorter than this many bytes build with "-cl-opt-disable" (0: none do). PoCL on a CPU
  // spends ~1 s of -O2 passes on any program, so a small one builds ~4x faster unoptimized (the unit
  // tests' check of the whole library: correctness, not speed; results stay IEEE-exact). (A legalised
  // tensor-core kernel whose mma emulation repeated its loads built ~30x slower unoptimized; since each
  // value is loaded once it builds as fast either way.)
  std::size_t unoptimized_below = 0;
  // How f16 <-> f32 conversions build (both exact, round to nearest even): the core built-ins vload_half /
  // vstore_half_rte (one instruction on a GPU; no cl_khr_fp16 needed) or ingot's portable integer helpers (~10
  // operations per value; codegen::Dialect::portable_helpers_macro). Auto: the built-ins, except on PoCL, whose
  // work-item loop vectoriser (PoCL 3.1, LLVM 15) miscompiles vload_half in some kernels (measured: depthwise_conv2d
  // f16 case c2_13x16_7x7_pad3_t6x8_ahead2 gave 52 of 832 outputs wrong; right with POCL_WORK_GROUP_METHOD=loops).
  // Auto also follows $INGOT_OPENCL_F16 (builtins, portable or auto) when set.
  enum class F16Conversions { Auto, Builtins, Portable };
  F16Conversions f16_conversions = F16Conversions::Auto;
};

// The chosen device, as the driver describes it (for `ingot device` and bug reports).
struct OpenCLDeviceInfo {
  std::string platform_name;
  std::string platform_version;  // "OpenCL 3.0 PoCL 3.1+debian ..."
  std::string device_name;
  std::string device_version;    // "OpenCL 3.0 ..."
  std::string opencl_c_version;  // "OpenCL C 1.2 ..."
  std::string driver_version;
  bool is_gpu = false;
  std::uint64_t max_work_group_size = 0;
  std::uint32_t compute_units = 0;
  std::uint64_t global_memory_bytes = 0;
  std::uint64_t local_memory_bytes = 0;
  bool has_fp16 = false;                       // cl_khr_fp16
  bool has_int64_base_atomics = false;         // cl_khr_int64_base_atomics
  bool f16_builtins = false;                   // f16 conversions by vload_half / vstore_half_rte (OpenCLOptions)
  [[nodiscard]] std::string describe() const;  // multi-line "key: value" text
};

// An OpenCL call failed at run time (out of resources, a lost device, ...). what() names the
// call, the error (CL_...) and what was being done.
struct OpenCLError : std::runtime_error {
  int code = 0;  // the cl_int error code
  OpenCLError(const std::string& message, int code_) : std::runtime_error(message), code(code_) {}
};

// The OpenCL C compiler refused a program. what() holds the complete build log (also in `log`,
// from runtime::CompileError).
struct OpenCLCompileError : CompileError {
  std::string entry;
  std::string options;
  std::string source;  // the source that failed to build
  OpenCLCompileError(const std::string& message, std::string entry_, std::string options_, std::string log_,
                     std::string source_)
      : CompileError(message, std::move(log_)),
        entry(std::move(entry_)),
        options(std::move(options_)),
        source(std::move(source_)) {}
};

// Where a program came from when it was last asked for (see OpenCLBackend::prepare).
enum class ProgramOrigin {
  Memory,     // already built by this backend
  DiskCache,  // a cached binary the driver accepted
  Source,     // compiled from source now (and stored in the disk cache when enabled)
};
[[nodiscard]] const char* program_origin_name(ProgramOrigin o);  // "memory", "disk-cache", "source"

class OpenCLBackend final : public Backend {
 public:
  // Discovers platforms and devices and picks one (see OpenCLOptions::device_filter). Throws
  // BackendUnavailable whose message starts with "opencl not available: " and says why: no ICD
  // loader/platform (with the CL error name), no device matching the filter (listing those that
  // exist), or a build without OpenCL headers.
  [[nodiscard]] static std::unique_ptr<OpenCLBackend> create(const OpenCLOptions& options = {});
  ~OpenCLBackend() override;
  OpenCLBackend(const OpenCLBackend&) = delete;
  OpenCLBackend& operator=(const OpenCLBackend&) = delete;

  [[nodiscard]] std::string name() const override { return "opencl"; }
  [[nodiscard]] const OpenCLDeviceInfo& device_info() const;
  // The build options every program is compiled with (also part of the disk-cache key).
  [[nodiscard]] const std::string& build_options() const;
  // The disk-cache target string: "opencl-<platform>-<device>-<driver version>".
  [[nodiscard]] const std::string& cache_target() const;

  [[nodiscard]] BufferPtr allocate(DType t, std::size_t count) override;
  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override;
  void download(const DeviceBuffer& src, void* dst, std::size_t bytes) override;
  void launch(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args) override;

  // The backend's cl_command_queue and cl_context (as void*: this header does not include OpenCL's). Buffers a caller
  // creates in this context can be wrapped and launched on.
  [[nodiscard]] void* queue() const;
  [[nodiscard]] void* context() const;
  // Wraps a caller's cl_mem of this backend's context (count elements of t from its first byte) as a buffer of this
  // backend: retained while the buffer lives, not copied, not poisoned. Throws ArgumentError when the cl_mem belongs
  // to another context or holds fewer than count elements.
  [[nodiscard]] BufferPtr wrap_buffer(void* cl_mem, DType t, std::size_t count);

  // Low level: builds `src` (OpenCL C; entry point src.entry) unless it is already built, and
  // says where the program came from. Throws CompileError with the build log.
  ProgramOrigin prepare(const codegen::KernelSource& src);
  // Low level: runs an OpenCL C kernel with arguments following the ABI of codegen/printer.hpp
  // (buffers of this backend as global pointers, scalars by value in their dtype's size).
  // Checks buffers belong to this backend and the geometry fits the device; there is no IR, so
  // argument types and extents are the caller's responsibility.
  void launch_source(const codegen::KernelSource& src, const LaunchGeometry& g, const std::vector<Arg>& args);

 private:
  struct Impl;
  explicit OpenCLBackend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ingot::runtime
