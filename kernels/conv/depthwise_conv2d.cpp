// depthwise_conv2d: depthwise 2-D convolution, NCHW in and out, weight [C, kh, kw], optional
// bias; kh != kw allowed; stride, padding and dilation per axis. A thin registration of
// direct_conv.hpp.
#include "depthwise_conv2d.hpp"

#include "register.hpp"

namespace ingot::kernels {

std::vector<std::pair<std::string, ConvCase>> depthwise_conv2d_cases() {
  return {
      // 189 outputs: a partial last work-group
      {"c3_7x9_3x3_pad1_bias", {.B = 1, .C = 3, .size = {7, 9}, .k = {3, 3}, .pad = {1, 1}, .bias = true}},
      {"kh3_kw5_s2x1_p1x2_batch2", {.B = 2, .C = 8, .size = {15, 17}, .k = {3, 5}, .stride = {2, 1}, .pad = {1, 2}}},
      {"d2x3_p2x3_batch2", {.B = 2, .C = 5, .size = {12, 11}, .k = {3, 3}, .pad = {2, 3}, .dil = {2, 3}}},
      {"1x1_batch2", {.B = 2, .C = 3, .size = {4, 5}, .k = {1, 1}}},
      {"k2x4_s2_nopad", {.B = 1, .C = 2, .size = {9, 10}, .k = {2, 4}, .stride = {2, 2}}},
      {"c7_k3x2_pad1_batch3_bias", {.B = 3, .C = 7, .size = {5, 6}, .k = {3, 2}, .pad = {1, 1}, .bias = true}},
  };
}

void register_depthwise_conv2d(harness::Registry& r) {
  const ConvForm f{"depthwise_conv2d", 2, ConvLayout::ChannelsFirst, ConvChannels::Depthwise};
  r.add(
      direct_conv_kernel(f,
                         "depthwise 2-D convolution, NCHW: x[B,C,H,W] * w[C,kh,kw] (+bias[C]) -> y[B,C,P,Q]; stride, "
                         "pad, dilation per axis",
                         depthwise_conv2d_cases(),
                         {
                             {"N32_C384_56x56_3x3", {.B = 32, .C = 384, .size = {56, 56}, .k = {3, 3}, .pad = {1, 1}}},
                         }));
}

}  // namespace ingot::kernels
