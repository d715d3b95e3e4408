// ingot/runtime/cuda.hpp — the CUDA runtime backend: NVIDIA GPUs through the driver API, with
// kernels compiled by NVRTC for the device's own architecture.
//
// Nothing of CUDA is needed to build ingot: libcuda.so.1 and NVRTC are loaded at run time, and
// CudaBackend::create() throws BackendUnavailable("cuda not available: <why>") where either is
// missing, cuInit fails or there is no device. Compiling without a GPU: cuda_compile.hpp.
//
// Launch path: check_args, geometry against the device's limits, codegen::emit(k, CUDA),
// NVRTC to a CUBIN for sm_XY of this device (no fast-math; --fmad=true unless
// CudaOptions::fmad is false), the disk cache (runtime/cache.hpp) keyed by {source,
// "cuda-sm_XY", NVRTC version + options}, cuModuleLoadData, then cuLaunchKernel on the
// backend's stream and a stream synchronisation, so results are ready to download when
// launch() returns. Arguments follow the kernel ABI of codegen/printer.hpp: buffers as 64-bit
// device pointers, scalars by value in their own type (bool as one byte).
//
// Every driver failure throws CudaError naming what was being done and the driver's error
// name and string. The primary context of the device is used and pushed around each call, so
// the caller's current context is left as it was. A CudaBackend is not thread-safe: use one
// per thread or lock around it. Buffers keep the context alive and may outlive the backend.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingot/runtime/backend.hpp"
#include "ingot/runtime/cuda_compile.hpp"

namespace ingot::runtime {

struct CudaOptions {
  int device = 0;                   // ordinal, as counted by the driver
  std::filesystem::path cache_dir;  // empty: DiskCache::default_dir()
  bool use_cache = true;            // read and write compiled CUBINs on disk
  // The caller's CUstream (it must belong to the device's primary context, i.e. the one the
  // CUDA runtime API uses). It is used for every copy and launch and is never destroyed.
  // nullptr: the backend creates its own stream.
  void* stream = nullptr;
  bool fmad = true;                      // NVRTC --fmad (contraction to FMA); never fast-math
  std::filesystem::path driver_library;  // empty: "libcuda.so.1"
  std::filesystem::path nvrtc_library;   // empty: the search of cuda_compile.hpp
};

// The compile options these backend options ask for (fmad; arch stays the compiler's default until a device names its
// own).
inline CudaCompileOptions compile_options_of(const CudaOptions& o) {
  CudaCompileOptions c;
  c.fmad = o.fmad;
  return c;
}

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;                            // "NVIDIA H200"
  int compute_major = 0;                       // 9 on H200
  int compute_minor = 0;                       // 0 on H200
  std::string arch;                            // "sm_90": what kernels are compiled for
  int sm_count = 0;                            // streaming multiprocessors
  std::uint64_t total_memory = 0;              // bytes
  int max_threads_per_block = 0;               // device limit (a kernel's own limit may be lower)
  std::array<int, 3> max_block_dim{};          // per-axis group-size limits
  std::array<int, 3> max_grid_dim{};           // per-axis group-count limits
  int max_shared_per_group = 0;                // bytes of shared memory a work-group may opt in to (H200: 227 KB)
  int driver_version = 0;                      // cuDriverGetVersion: 13000 for CUDA 13.0
  std::string nvrtc_version;                   // "13.0"
  std::string nvrtc_library;                   // path of the NVRTC that was loaded
  [[nodiscard]] std::string describe() const;  // one line for logs
};

// Counters, for tests and diagnostics.
struct CudaStats {
  std::uint64_t nvrtc_compiles = 0;     // kernels compiled by NVRTC
  std::uint64_t disk_cache_hits = 0;    // CUBINs read from the disk cache instead
  std::uint64_t memory_cache_hits = 0;  // launches (and residency queries) of a kernel already loaded by this backend
  std::uint64_t launches = 0;
};

// A driver call failed. what(): "cuda: <what was being done>: CUDA_ERROR_X (driver's text)".
struct CudaError : std::runtime_error {
  int code = 0;            // the CUresult
  std::string error_name;  // "CUDA_ERROR_OUT_OF_MEMORY"
  CudaError(const std::string& message, int result, std::string name)
      : std::runtime_error(message), code(result), error_name(std::move(name)) {}
};

class CudaBackend final : public Backend {
 public:
  // Loads the driver and NVRTC, initialises CUDA and retains device options.device's primary
  // context. Throws BackendUnavailable("cuda not available: ...") naming the reason.
  [[nodiscard]] static std::unique_ptr<CudaBackend> create(const CudaOptions& options = {});
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  [[nodiscard]] std::string name() const override { return "cuda"; }
  // Device memory filled with poison_bytes(t, count).
  [[nodiscard]] BufferPtr allocate(DType t, std::size_t count) override;
  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override;
  void download(const DeviceBuffer& src, void* dst, std::size_t bytes) override;
  void launch(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args) override;
  // CUDA events around each launch on the stream (falls back to the host clock when the
  // driver lacks the event API).
  [[nodiscard]] Timing time_launches(const ir::Kernel& k, const LaunchGeometry& g,
                                     const std::vector<std::vector<Arg>>& arg_sets,
                                     const TimingOptions& options) override;
  // cuMemcpyDtoDAsync between two fresh allocations, timed with events.
  [[nodiscard]] std::optional<double> time_copy(std::size_t bytes, const TimingOptions& options) override;
  // cuOccupancyMaxActiveBlocksPerMultiprocessor for the compiled kernel at g's group size and its dynamic shared
  // memory, the device's SM count and the kernel's registers; nullopt where the driver lacks the entry point or the
  // call fails.
  [[nodiscard]] std::optional<Residency> residency(const ir::Kernel& k, const LaunchGeometry& g) override;

  // Wraps caller-owned device memory (a CUdeviceptr of this device, count elements of t) as a
  // buffer of this backend. The memory is not copied, not poisoned and never freed by ingot;
  // the caller keeps it alive while the buffer is used. Throws ArgumentError when the driver
  // does not know the pointer or its allocation is smaller than count elements.
  [[nodiscard]] BufferPtr wrap_device_buffer(std::uint64_t device_ptr, DType t, std::size_t count);
  // The CUdeviceptr behind a buffer of this backend (0 for an empty buffer).
  [[nodiscard]] std::uint64_t device_pointer(const DeviceBuffer& buffer) const;

  [[nodiscard]] const CudaDeviceInfo& device_info() const;
  [[nodiscard]] void* stream() const;  // the CUstream in use
  void synchronize();                  // waits for all work on the stream
  [[nodiscard]] CudaStats stats() const;

  struct Impl;  // driver state; defined in src/runtime/cuda

 private:
  explicit CudaBackend(std::unique_ptr<Impl> impl);
  // One launch checked, compiled and packed: everything of a launch but the driver call, so that a
  // timed loop enqueues nothing else (checking and looking up a convolution's kernel costs tens of
  // microseconds of host time, longer than many of the kernels: inside the timed events it would
  // leave the device idle and be timed as the kernel's).
  struct Prepared {
    void* function = nullptr;          // CUfunction
    LaunchGeometry geometry;           // (checked against the device and the kernel)
    std::vector<std::uint64_t> slots;  // one 8-byte slot per argument (see enqueue)
    std::uint32_t shared_bytes = 0;    // dynamic shared memory (codegen::KernelSource::dynamic_shared_bytes)
    std::string where;                 // the launch, for errors
  };
  [[nodiscard]] Prepared prepare(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args);
  // Enqueues a prepared launch on the stream without waiting for it.
  void enqueue(const Prepared& p);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ingot::runtime
