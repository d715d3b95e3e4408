// ingot/api/conv.hpp — the convolution family as plain functions over the caller's tensors. Each derives the kernel's
// parameters from the tensors' shapes and calls api::call (ingot/api/call.hpp), which checks everything before
// launching; errors are api::Error.
#pragma once

#include <cstdint>

#include "ingot/api/call.hpp"

namespace ingot::conv {

struct Conv1dOptions {
  std::int64_t stride = 1;
  std::int64_t padding = 0;  // on both ends
  std::int64_t dilation = 1;
};

// y[B,C,O] = depthwise 1-D convolution of x[B,C,L] with w[C,K] (+ bias[C] where given); O = (L + 2*padding -
// dilation*(K-1) - 1) / stride + 1.
void depthwise_conv1d(api::Context& ctx, const api::TensorView& x, const api::TensorView& w, const api::TensorView& y,
                      const Conv1dOptions& options = {}, const api::TensorView* bias = nullptr);

}  // namespace ingot::conv
