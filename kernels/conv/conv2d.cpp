// conv2d: dense 2-D convolution, NCHW input, OIHW weight, optional bias; kernel size, stride,
// padding and dilation per axis. A thin registration of direct_conv.hpp.
#include "direct_conv_registry.hpp"
#include "register.hpp"

namespace ingot::kernels {

void register_conv2d(harness::Registry& r) {
  const ConvForm f{"conv2d", 2, ConvLayout::ChannelsFirst, ConvChannels::Dense};
  r.add(direct_conv_kernel(
      f, "2-D convolution: x[B,C,H,W] * w[O,C,kh,kw] (+bias[O]) -> y[B,O,P,Q]; stride, pad, dilation per axis",
      {
          // 315 outputs: a partial last work-group
          {"c3_o5_7x9_3x3_pad1_bias",
           {.B = 1, .C = 3, .O = 5, .size = {7, 9}, .k = {3, 3}, .pad = {1, 1}, .bias = true}},
          {"kh2_kw5_s2x1_p1x2_d2x1_batch2",
           {.B = 2, .C = 4, .O = 6, .size = {11, 13}, .k = {2, 5}, .stride = {2, 1}, .pad = {1, 2}, .dil = {2, 1}}},
          {"1x1_batch3", {.B = 3, .C = 8, .O = 4, .size = {5, 6}, .k = {1, 1}}},
          {"s2x3_p2x1_d2_bias",
           {.B = 2,
            .C = 3,
            .O = 3,
            .size = {10, 9},
            .k = {3, 3},
            .stride = {2, 3},
            .pad = {2, 1},
            .dil = {2, 2},
            .bias = true}},
          {"kernel_covers_input_5x3", {.B = 2, .C = 2, .O = 3, .size = {5, 3}, .k = {5, 3}}},
      },
      {
          {"N32_C256_K256_56x56_3x3", {.B = 32, .C = 256, .O = 256, .size = {56, 56}, .k = {3, 3}, .pad = {1, 1}}},
      }));
}

}  // namespace ingot::kernels
