// Tensor views and error names.
#include "ingot/api/tensor.hpp"
#include "ingot/api/error.hpp"

namespace ingot::api {

const char* error_code_name(ErrorCode c) {
  switch (c) {
    case ErrorCode::Ok: return "Ok";
    case ErrorCode::UnknownKernel: return "UnknownKernel";
    case ErrorCode::BadParameter: return "BadParameter";
    case ErrorCode::MissingTensor: return "MissingTensor";
    case ErrorCode::UnexpectedTensor: return "UnexpectedTensor";
    case ErrorCode::BadDtype: return "BadDtype";
    case ErrorCode::BadShape: return "BadShape";
    case ErrorCode::NotContiguous: return "NotContiguous";
    case ErrorCode::Misaligned: return "Misaligned";
    case ErrorCode::WrongDevice: return "WrongDevice";
    case ErrorCode::Aliasing: return "Aliasing";
    case ErrorCode::InvalidTensor: return "InvalidTensor";
    case ErrorCode::Unavailable: return "Unavailable";
    case ErrorCode::LaunchFailed: return "LaunchFailed";
  }
  return "Unknown";
}

const char* device_kind_name(DeviceKind d) {
  switch (d) {
    case DeviceKind::Host: return "host";
    case DeviceKind::OpenCL: return "opencl";
    case DeviceKind::Cuda: return "cuda";
  }
  return "unknown";
}

std::int64_t element_count(const TensorView& t) {
  std::int64_t n = 1;
  for (auto d : t.shape) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

bool is_contiguous(const TensorView& t) {
  if (t.strides.empty()) return true;
  if (t.strides.size() != t.shape.size()) return false;
  std::int64_t expect = 1;
  for (std::size_t i = t.shape.size(); i-- > 0;) {
    if (t.shape[i] != 1 && t.strides[i] != expect) return false;
    expect *= t.shape[i];
  }
  return true;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace ingot::api
