// kernels/conv/depthwise_conv2d.hpp — the test cases the two depthwise 2-D convolutions
// (depthwise_conv2d, NCHW; depthwise_conv2d_nhwc, NHWC) share. Both are thin registrations of
// direct_conv.hpp with groups = C = O and weight [C, kh, kw].
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "direct_conv_registry.hpp"

namespace ingot::kernels {

[[nodiscard]] std::vector<std::pair<std::string, ConvCase>> depthwise_conv2d_cases();

}  // namespace ingot::kernels
