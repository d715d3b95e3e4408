// driver_api.hpp — the few CUDA driver API entry points ingot uses, loaded from libcuda.so.1
// at run time (internal to the CUDA runtime).
//
// These are ingot's own minimal declarations (cuda.h is never included): opaque handles are
// pointers to incomplete structs, CUdeviceptr is 64-bit, and every entry point whose ABI
// changed in CUDA 3.2/4.0/11 is bound by its versioned export name (_v2), which is what
// cuda.h's macros map the plain names to. All functions use the C calling convention.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "shared_library.hpp"

namespace ingot::runtime::cuda_detail {

using CUresult = int;  // 0 = CUDA_SUCCESS
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // 64-bit device address (CUdeviceptr_v2)
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
struct CUevent_st;
using CUevent = CUevent_st*;

inline constexpr CUresult kCudaSuccess = 0;
inline constexpr CUresult kCudaErrorNoDevice = 100;

// CUdevice_attribute values used here.
enum class DeviceAttribute : int {
  MaxThreadsPerBlock = 1,
  MaxBlockDimX = 2,
  MaxBlockDimY = 3,
  MaxBlockDimZ = 4,
  MaxGridDimX = 5,
  MaxGridDimY = 6,
  MaxGridDimZ = 7,
  MultiprocessorCount = 16,
  MaxSharedMemoryPerBlockOptin = 97,
  ComputeCapabilityMajor = 75,
  ComputeCapabilityMinor = 76,
};
// CUfunction_attribute values used here.
enum class FunctionAttribute : int {
  MaxThreadsPerBlock = 0,
  SharedSizeBytes = 1,
  NumRegs = 4,
  MaxDynamicSharedSizeBytes = 8,
};

struct DriverApi {
  // cuInit(unsigned int Flags)
  CUresult (*cuInit)(unsigned int) = nullptr;
  // cuDriverGetVersion(int* driverVersion)
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  // cuGetErrorName / cuGetErrorString(CUresult, const char** pStr)
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  // cuDeviceGetCount(int*), cuDeviceGet(CUdevice*, int ordinal)
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  // cuDeviceGetName(char* name, int len, CUdevice)
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  // cuDeviceGetAttribute(int* value, CUdevice_attribute, CUdevice)
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  // cuDeviceTotalMem_v2(size_t* bytes, CUdevice)
  CUresult (*cuDeviceTotalMem)(std::size_t*, CUdevice) = nullptr;
  // cuDevicePrimaryCtxRetain(CUcontext*, CUdevice), cuDevicePrimaryCtxRelease_v2(CUdevice)
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  // cuCtxPushCurrent_v2(CUcontext), cuCtxPopCurrent_v2(CUcontext*)
  CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxPopCurrent)(CUcontext*) = nullptr;
  // cuMemAlloc_v2(CUdeviceptr*, size_t), cuMemFree_v2(CUdeviceptr)
  CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  // cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* size, CUdeviceptr)
  CUresult (*cuMemGetAddressRange)(CUdeviceptr*, std::size_t*, CUdeviceptr) = nullptr;
  // cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t, CUstream)
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, std::size_t, CUstream) = nullptr;
  // cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t, CUstream)
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, std::size_t, CUstream) = nullptr;
  // cuMemsetD8Async(CUdeviceptr, unsigned char, size_t count, CUstream)
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, std::size_t, CUstream) = nullptr;
  // cuStreamCreate(CUstream*, unsigned int flags), cuStreamDestroy_v2, cuStreamSynchronize
  CUresult (*cuStreamCreate)(CUstream*, unsigned int) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  // cuModuleLoadData(CUmodule*, const void* image), cuModuleUnload(CUmodule)
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  // cuModuleGetFunction(CUfunction*, CUmodule, const char* name)
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  // cuFuncGetAttribute(int* value, CUfunction_attribute, CUfunction)
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction) = nullptr;
  // cuFuncSetAttribute(CUfunction, CUfunction_attribute, int value)
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  // cuLaunchKernel(f, gridDimX..Z, blockDimX..Z, sharedMemBytes, stream, kernelParams, extra)
  CUresult (*cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                             unsigned int, unsigned int, CUstream, void**, void**) = nullptr;

  // Optional (bound when present; the bench needs them, launches do not):
  // cuEventCreate(CUevent*, unsigned int flags), cuEventRecord(CUevent, CUstream),
  // cuEventSynchronize(CUevent), cuEventElapsedTime(float* ms, CUevent start, CUevent end),
  // cuEventDestroy_v2(CUevent), cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t, CUstream)
  CUresult (*cuEventCreate)(CUevent*, unsigned int) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream) = nullptr;
  // cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction, int blockSize, size_t dynamicSMemSize)
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, CUfunction, int, std::size_t) = nullptr;

  SharedLibrary library;  // keeps the code above mapped

  // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; falls back to the number for unknown codes.
  [[nodiscard]] std::string describe(CUresult r) const;
  // The name alone ("CUDA_ERROR_OUT_OF_MEMORY"), or "CUresult <n>".
  [[nodiscard]] std::string error_name(CUresult r) const;
};

// Loads libcuda.so.1 (or `library` when not empty) and resolves every entry point above.
// Returns nullptr and sets *why when the library or a symbol is missing. Does not call cuInit.
[[nodiscard]] std::shared_ptr<const DriverApi> load_driver_api(const std::string& library, std::string* why);

}  // namespace ingot::runtime::cuda_detail
