// conv3d: dense 3-D convolution, NCDHW input, OIDHW weight, optional bias; kernel size, stride,
// padding and dilation per axis. A thin registration of direct_conv.hpp.
#include "direct_conv_registry.hpp"
#include "register.hpp"

namespace ingot::kernels {

void register_conv3d(harness::Registry& r) {
  const ConvForm f{"conv3d", 3, ConvLayout::ChannelsFirst, ConvChannels::Dense};
  r.add(direct_conv_kernel(
      f, "3-D convolution: x[B,C,D,H,W] * w[O,C,kd,kh,kw] (+bias[O]) -> y[B,O,P,Q,R]; stride, pad, dilation per axis",
      {
          // 630 outputs: a partial last work-group
          {"c2_o3_5x6x7_3x3x3_pad1_bias",
           {.B = 1, .C = 2, .O = 3, .size = {5, 6, 7}, .k = {3, 3, 3}, .pad = {1, 1, 1}, .bias = true}},
          {"k2x3x1_s2x1x2_p1x0x0_d1x2x1_batch2",
           {.B = 2,
            .C = 3,
            .O = 2,
            .size = {6, 5, 7},
            .k = {2, 3, 1},
            .stride = {2, 1, 2},
            .pad = {1, 0, 0},
            .dil = {1, 2, 1}}},
          {"1x1x1_batch3", {.B = 3, .C = 4, .O = 5, .size = {3, 4, 5}, .k = {1, 1, 1}}},
          {"k1x2x3_s1x3x2_p0x1x1_d1x1x2_bias",
           {.B = 1,
            .C = 1,
            .O = 2,
            .size = {4, 9, 6},
            .k = {1, 2, 3},
            .stride = {1, 3, 2},
            .pad = {0, 1, 1},
            .dil = {1, 1, 2},
            .bias = true}},
      },
      {
          {"N4_C64_K64_16x56x56_3x3x3",
           {.B = 4, .C = 64, .O = 64, .size = {16, 56, 56}, .k = {3, 3, 3}, .pad = {1, 1, 1}}},
      }));
}

}  // namespace ingot::kernels
