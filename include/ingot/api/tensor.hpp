// ingot/api/tensor.hpp — a view of a caller's tensor: where its memory is (host, an OpenCL buffer, CUDA device
// memory), its element type, shape and strides. A view owns nothing; the caller keeps the memory alive for the call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ingot/dtype.hpp"

namespace ingot::api {

// Where a tensor's memory lives.
enum class DeviceKind : int { Host = 0, OpenCL = 1, Cuda = 2 };
[[nodiscard]] const char* device_kind_name(DeviceKind d);  // "host", "opencl", "cuda"

struct TensorView {
  DeviceKind device = DeviceKind::Host;
  int device_index = 0;  // CUDA: the device ordinal; otherwise 0
  // Host: the first element's address. OpenCL: the cl_mem (its first element is the tensor's). CUDA: the
  // CUdeviceptr of the first element.
  void* data = nullptr;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;    // outermost first
  std::vector<std::int64_t> strides;  // in elements, one per dimension; empty: dense row-major
};

[[nodiscard]] inline TensorView host_tensor(const void* data, DType t, std::vector<std::int64_t> shape) {
  return {DeviceKind::Host, 0, const_cast<void*>(data), t, std::move(shape), {}};
}
[[nodiscard]] inline TensorView opencl_tensor(void* cl_mem, DType t, std::vector<std::int64_t> shape) {
  return {DeviceKind::OpenCL, 0, cl_mem, t, std::move(shape), {}};
}
[[nodiscard]] inline TensorView cuda_tensor(std::uint64_t device_ptr, DType t, std::vector<std::int64_t> shape,
                                            int device = 0) {
  return {DeviceKind::Cuda, device, reinterpret_cast<void*>(device_ptr), t, std::move(shape), {}};
}

// The element count (1 for rank 0); -1 when a dimension is negative.
[[nodiscard]] std::int64_t element_count(const TensorView& t);
// Whether the strides are the dense row-major ones (dimensions of size 1 may have any stride).
[[nodiscard]] bool is_contiguous(const TensorView& t);
// "(2, 3, 17)"
[[nodiscard]] std::string shape_text(const std::vector<std::int64_t>& shape);

}  // namespace ingot::api
