// Loading the CUDA driver API from libcuda.so.1.
#include "driver_api.hpp"

namespace ingot::runtime::cuda_detail {

namespace {

template <class F>
bool bind(const SharedLibrary& lib, F& fn, const char* name, std::string* missing) {
  fn = reinterpret_cast<F>(lib.symbol(name));
  if (!fn) {
    if (!missing->empty()) *missing += ", ";
    *missing += name;
  }
  return fn != nullptr;
}

}  // namespace

std::string DriverApi::error_name(CUresult r) const {
  const char* name = nullptr;
  if (cuGetErrorName && cuGetErrorName(r, &name) == kCudaSuccess && name) return name;
  return "CUresult " + std::to_string(r);
}

std::string DriverApi::describe(CUresult r) const {
  const char* text = nullptr;
  std::string s = error_name(r);
  if (cuGetErrorString && cuGetErrorString(r, &text) == kCudaSuccess && text) s += std::string(" (") + text + ")";
  return s;
}

std::shared_ptr<const DriverApi> load_driver_api(const std::string& library, std::string* why) {
  auto api = std::make_shared<DriverApi>();
  api->library = SharedLibrary::open_first({library.empty() ? std::string("libcuda.so.1") : library});
  if (!api->library.loaded()) {
    *why = "libcuda.so.1 not found (no NVIDIA driver installed): " + api->library.why();
    return nullptr;
  }
  const SharedLibrary& lib = api->library;
  std::string missing;
  bind(lib, api->cuInit, "cuInit", &missing);
  bind(lib, api->cuDriverGetVersion, "cuDriverGetVersion", &missing);
  bind(lib, api->cuGetErrorName, "cuGetErrorName", &missing);
  bind(lib, api->cuGetErrorString, "cuGetErrorString", &missing);
  bind(lib, api->cuDeviceGetCount, "cuDeviceGetCount", &missing);
  bind(lib, api->cuDeviceGet, "cuDeviceGet", &missing);
  bind(lib, api->cuDeviceGetName, "cuDeviceGetName", &missing);
  bind(lib, api->cuDeviceGetAttribute, "cuDeviceGetAttribute", &missing);
  bind(lib, api->cuDeviceTotalMem, "cuDeviceTotalMem_v2", &missing);
  bind(lib, api->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", &missing);
  bind(lib, api->cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", &missing);
  bind(lib, api->cuCtxPushCurrent, "cuCtxPushCurrent_v2", &missing);
  bind(lib, api->cuCtxPopCurrent, "cuCtxPopCurrent_v2", &missing);
  bind(lib, api->cuMemAlloc, "cuMemAlloc_v2", &missing);
  bind(lib, api->cuMemFree, "cuMemFree_v2", &missing);
  bind(lib, api->cuMemGetAddressRange, "cuMemGetAddressRange_v2", &missing);
  bind(lib, api->cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", &missing);
  bind(lib, api->cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", &missing);
  bind(lib, api->cuMemsetD8Async, "cuMemsetD8Async", &missing);
  bind(lib, api->cuStreamCreate, "cuStreamCreate", &missing);
  bind(lib, api->cuStreamDestroy, "cuStreamDestroy_v2", &missing);
  bind(lib, api->cuStreamSynchronize, "cuStreamSynchronize", &missing);
  bind(lib, api->cuModuleLoadData, "cuModuleLoadData", &missing);
  bind(lib, api->cuModuleUnload, "cuModuleUnload", &missing);
  bind(lib, api->cuModuleGetFunction, "cuModuleGetFunction", &missing);
  bind(lib, api->cuFuncGetAttribute, "cuFuncGetAttribute", &missing);
  bind(lib, api->cuFuncSetAttribute, "cuFuncSetAttribute", &missing);
  bind(lib, api->cuLaunchKernel, "cuLaunchKernel", &missing);
  std::string optional_missing;  // timing, device copies and occupancy: used by the bench only
  bind(lib, api->cuEventCreate, "cuEventCreate", &optional_missing);
  bind(lib, api->cuEventRecord, "cuEventRecord", &optional_missing);
  bind(lib, api->cuEventSynchronize, "cuEventSynchronize", &optional_missing);
  bind(lib, api->cuEventElapsedTime, "cuEventElapsedTime", &optional_missing);
  bind(lib, api->cuEventDestroy, "cuEventDestroy_v2", &optional_missing);
  bind(lib, api->cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", &optional_missing);
  bind(lib, api->cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
       &optional_missing);
  if (!missing.empty()) {
    *why = api->library.path() + " lacks driver entry points " + missing + " (driver too old?)";
    return nullptr;
  }
  return api;
}

}  // namespace ingot::runtime::cuda_detail
