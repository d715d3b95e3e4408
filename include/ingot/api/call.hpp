// ingot/api/call.hpp — a library kernel run over the caller's tensors: the one generic call, by kernel name, that
// every typed function (ingot/api/conv.hpp, ingot/api/activation.hpp), the C ABI (ingot.h) and the Python module
// go through.
//
// Before anything is launched or written, every tensor is checked against the kernel traced for the parameters:
// each buffer of the kernel has a tensor and no tensor names anything else; dtypes; shapes (the kernel's declared
// logical shape where it has one — KernelSpec::shapes —, else the element count of the buffer's extent); dense
// row-major strides; alignment (the element size and the kernel's vector accesses); the device (the context's, and
// one for every tensor); no output sharing memory with another tensor. A failed check throws api::Error naming the
// tensor or parameter and what to change.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/api/context.hpp"
#include "ingot/api/error.hpp"
#include "ingot/api/tensor.hpp"
#include "ingot/harness/registry.hpp"

namespace ingot::api {

// Tensors by the kernel's buffer names (e.g. depthwise_conv1d: x, w, bias, y).
using Tensors = std::map<std::string, TensorView>;

// Runs `kernel` with parameters `params` (its shape and specialisation parameters, as `ingot list` names them:
// depthwise_conv1d's B, C, L, K, stride, pad, dilation, bias; tuning options may be given, else the library's
// default variant runs) over the tensors. The dtype is the one of the kernel's dtypes that most tensors have.
// Returns when the outputs are complete (on CUDA: after the stream has run the kernel).
void call(Context& ctx, std::string_view kernel, const harness::Params& params, const Tensors& tensors);

// What a kernel's buffers must be for (dtype, params): for output allocation by a caller (the Python module).
struct BufferInfo {
  std::string name;
  bool input = false;   // read by the kernel
  bool output = false;  // written by the kernel
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
};
// Throws Error(UnknownKernel) or Error(BadParameter).
[[nodiscard]] std::vector<BufferInfo> describe(Context& ctx, std::string_view kernel, DType t,
                                               const harness::Params& params);

}  // namespace ingot::api
