// python/src/dlpack_view.hpp — the DLPack tensor exchange structures (the pre-versioned ABI that `__dlpack__`
// returns in a capsule named "dltensor": PyTorch 1.10+, NumPy 1.22+), declared from the protocol's published layout,
// and the reading of one into an api::TensorView.
#pragma once

#include <cstdint>

namespace ingot::python {

// Field for field the C layout of DLPack's DLDevice, DLDataType, DLTensor and DLManagedTensor.
struct DLDeviceView {
  std::int32_t device_type;  // 1: CPU, 2: CUDA, 3: CUDA host memory, 4: OpenCL, ...
  std::int32_t device_id;
};
struct DLDataTypeView {
  std::uint8_t code;  // 0: int, 1: uint, 2: float, 4: bfloat, 6: bool
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensorView {
  void* data;
  DLDeviceView device;
  std::int32_t ndim;
  DLDataTypeView dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; NULL: dense row-major
  std::uint64_t byte_offset;
};
struct DLManagedTensorView {
  DLTensorView dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorView*);
};

inline constexpr std::int32_t kDLCPU = 1;
inline constexpr std::int32_t kDLCUDA = 2;

}  // namespace ingot::python
