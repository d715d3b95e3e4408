// nvrtc_api.hpp — the NVRTC entry points ingot uses, loaded at run time (internal to the CUDA
// runtime). Own minimal declarations: nvrtc.h is never included.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "shared_library.hpp"

namespace ingot::runtime::cuda_detail {

using nvrtcResult = int;  // 0 = NVRTC_SUCCESS
struct _nvrtcProgram;
using nvrtcProgram = _nvrtcProgram*;

inline constexpr nvrtcResult kNvrtcSuccess = 0;

struct NvrtcApi {
  // const char* nvrtcGetErrorString(nvrtcResult)
  const char* (*nvrtcGetErrorString)(nvrtcResult) = nullptr;
  // nvrtcVersion(int* major, int* minor)
  nvrtcResult (*nvrtcVersion)(int*, int*) = nullptr;
  // nvrtcGetNumSupportedArchs(int*), nvrtcGetSupportedArchs(int*)
  nvrtcResult (*nvrtcGetNumSupportedArchs)(int*) = nullptr;
  nvrtcResult (*nvrtcGetSupportedArchs)(int*) = nullptr;
  // nvrtcCreateProgram(prog*, src, name, numHeaders, headers, includeNames)
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                    const char* const*) = nullptr;
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*) = nullptr;
  // nvrtcCompileProgram(prog, numOptions, options)
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, std::size_t*) = nullptr;
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, std::size_t*) = nullptr;
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, std::size_t*) = nullptr;
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*) = nullptr;
  // nvrtcAddNameExpression(prog, const char* expr), nvrtcGetLoweredName(prog, expr, const char** lowered)
  nvrtcResult (*nvrtcAddNameExpression)(nvrtcProgram, const char*) = nullptr;
  nvrtcResult (*nvrtcGetLoweredName)(nvrtcProgram, const char*, const char**) = nullptr;

  SharedLibrary library;
  int major = 0;
  int minor = 0;
  std::vector<int> archs;  // supported SM numbers, e.g. 75, 80, ..., 90, 100, ...

  [[nodiscard]] std::string describe(nvrtcResult r) const;
  [[nodiscard]] std::string version_string() const;  // "13.0"
};

// The candidates tried, in order, when no explicit library is given: libnvrtc.so.13,
// libnvrtc.so.12, libnvrtc.so through the loader's search path, then the same names under
// $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64.
[[nodiscard]] std::vector<std::string> nvrtc_candidates();

// Loads NVRTC (`library` when not empty, else the candidates) and queries its version and
// architectures. Returns nullptr and sets *why when absent or incomplete.
[[nodiscard]] std::shared_ptr<const NvrtcApi> load_nvrtc_api(const std::string& library, std::string* why);

}  // namespace ingot::runtime::cuda_detail
