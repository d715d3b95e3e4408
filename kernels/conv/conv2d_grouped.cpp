// conv2d_grouped: grouped 2-D convolution, NCHW input, weight [O, C/groups, kh, kw], optional
// bias; kernel size, stride, padding and dilation per axis. A thin registration of
// direct_conv.hpp.
#include "direct_conv_registry.hpp"
#include "register.hpp"

namespace ingot::kernels {

void register_conv2d_grouped(harness::Registry& r) {
  const ConvForm f{"conv2d_grouped", 2, ConvLayout::ChannelsFirst, ConvChannels::Grouped};
  r.add(direct_conv_kernel(
      f,
      "grouped 2-D convolution: x[B,C,H,W] * w[O,C/groups,kh,kw] (+bias[O]) -> y[B,O,P,Q]; stride, pad, dilation "
      "per axis",
      {
          // groups = C = O (depthwise); 1188 outputs: a partial last work-group
          {"depthwise_g6_3x3_pad1_bias",
           {.B = 2, .C = 6, .O = 6, .groups = 6, .size = {9, 11}, .k = {3, 3}, .pad = {1, 1}, .bias = true}},
          // 2 input and 3 output channels per group
          {"cpg2_g3_k2x3_s1x2_p1_d2x1",
           {.B = 2,
            .C = 6,
            .O = 9,
            .groups = 3,
            .size = {7, 8},
            .k = {2, 3},
            .stride = {1, 2},
            .pad = {1, 1},
            .dil = {2, 1}}},
          {"cpg4_g2_s2",
           {.B = 1, .C = 8, .O = 4, .groups = 2, .size = {9, 9}, .k = {3, 3}, .stride = {2, 2}, .pad = {1, 1}}},
          // depthwise with a channel multiplier of 2
          {"multiplier2_g3_d1x2_bias",
           {.B = 1,
            .C = 3,
            .O = 6,
            .groups = 3,
            .size = {6, 7},
            .k = {3, 3},
            .pad = {1, 1},
            .dil = {1, 2},
            .bias = true}},
      },
      {
          {"N32_C256_56x56_3x3_g32",
           {.B = 32, .C = 256, .O = 256, .groups = 32, .size = {56, 56}, .k = {3, 3}, .pad = {1, 1}}},
      }));
}

}  // namespace ingot::kernels
