// ingot/runtime/cuda_compile.hpp — compiling kernels for NVIDIA GPUs with NVRTC, without a
// GPU or driver: the compile-only half of the CUDA backend.
//
// NVRTC is loaded at run time (libnvrtc.so.13, .so.12 or .so, from the loader's search path,
// $CUDA_HOME/lib64, $CUDA_PATH/lib64 or /usr/local/cuda/lib64), so ingot builds without CUDA.
// Where NVRTC is absent every entry point throws BackendUnavailable("cuda not available:
// NVRTC not found ...").
//
// Floating point: never fast-math. The options always include --ftz=false, --prec-div=true and
// --prec-sqrt=true. --fmad=true (NVRTC's default) is kept unless CudaCompileOptions::fmad is
// false: it lets a*b+c contract to one fused multiply-add, which is more accurate than the
// interpreter's two roundings but not bit-identical to it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ingot/ir.hpp"
#include "ingot/runtime/backend.hpp"

namespace ingot::runtime {

namespace cuda_detail {
struct NvrtcApi;
}

struct CudaCompileOptions {
  // "sm_XY" compiles to a CUBIN (SASS for that architecture); "compute_XY" to PTX only.
  std::string arch = "sm_90";
  bool fmad = true;                        // see the header comment
  std::vector<std::string> extra_options;  // appended verbatim after ingot's own
};

struct CudaCompileResult {
  std::string arch;                  // as requested, "sm_90"
  std::string entry;                 // the kernel's name in the source
  std::string lowered_name;          // its symbol in the binary (cuModuleGetFunction takes this)
  std::string source;                // the CUDA source compiled
  std::vector<std::string> options;  // the exact NVRTC options used
  std::vector<std::uint8_t> cubin;   // ELF image; empty for a compute_XY arch
  std::string ptx;                   // PTX text when NVRTC provides it for this arch, else empty
  std::string log;                   // NVRTC's program log (warnings), may be empty
  std::string nvrtc_version;         // "13.0"
};

// A loaded NVRTC. Cheap to copy (shares the library); keep one around to compile many kernels
// without reloading NVRTC each time. Compiling is thread-safe.
class CudaCompiler {
 public:
  // Loads NVRTC from `nvrtc_library` when given, else from the default candidates.
  // Throws BackendUnavailable("cuda not available: NVRTC not found ...").
  [[nodiscard]] static CudaCompiler load(const std::filesystem::path& nvrtc_library = {});

  [[nodiscard]] std::string version() const;               // "13.0"
  [[nodiscard]] std::vector<int> supported_archs() const;  // e.g. {75, 80, 86, 87, 89, 90, 100, ...}
  [[nodiscard]] std::string library_path() const;          // the library file that was loaded

  // The NVRTC options compile() passes for `options` (part of the disk-cache key).
  [[nodiscard]] static std::vector<std::string> nvrtc_options(const CudaCompileOptions& options);

  // Emits k for CUDA (codegen::emit) and compiles it. Throws CompileError with NVRTC's log
  // when NVRTC rejects the source, std::invalid_argument for a malformed arch.
  [[nodiscard]] CudaCompileResult compile(const ir::Kernel& k, const CudaCompileOptions& options = {}) const;
  // Compiles hand-written source whose __global__ function is named `entry` (extern "C" or
  // not: the symbol is found through NVRTC's name expressions).
  [[nodiscard]] CudaCompileResult compile_source(const std::string& source, const std::string& entry,
                                                 const CudaCompileOptions& options = {}) const;

 private:
  explicit CudaCompiler(std::shared_ptr<const cuda_detail::NvrtcApi> api) : api_(std::move(api)) {}
  std::shared_ptr<const cuda_detail::NvrtcApi> api_;
};

// One-shot convenience: CudaCompiler::load().compile(k, options).
[[nodiscard]] CudaCompileResult compile_cuda(const ir::Kernel& k, const CudaCompileOptions& options = {});

// Whether `image` starts with the ELF magic (0x7f 'E' 'L' 'F'), as a CUBIN does.
[[nodiscard]] bool is_elf_image(const std::vector<std::uint8_t>& image);

}  // namespace ingot::runtime
