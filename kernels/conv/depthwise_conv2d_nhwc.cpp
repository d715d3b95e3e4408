// depthwise_conv2d_nhwc: depthwise 2-D convolution, NHWC in and out, weight [C, kh, kw],
// optional bias; kh != kw allowed; stride, padding and dilation per axis. Consecutive threads
// take consecutive channels, so reads and writes are contiguous. A thin registration of
// direct_conv.hpp (channels-last layout).
#include "depthwise_conv2d.hpp"
#include "register.hpp"

namespace ingot::kernels {

void register_depthwise_conv2d_nhwc(harness::Registry& r) {
  const ConvForm f{"depthwise_conv2d_nhwc", 2, ConvLayout::ChannelsLast, ConvChannels::Depthwise};
  r.add(direct_conv_kernel(
      f,
      "depthwise 2-D convolution, NHWC: x[B,H,W,C] * w[C,kh,kw] (+bias[C]) -> y[B,P,Q,C]; stride, "
      "pad, dilation per axis",
      [] {
        auto cases = depthwise_conv2d_cases();
        // the 7x7 window of the NHWC bench case
        cases.push_back(
            {"7x7_pad3_bias", {.B = 1, .C = 4, .size = {16, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true}});
        return cases;
      }(),
      {
          {"N32_C384_56x56_3x3", {.B = 32, .C = 384, .size = {56, 56}, .k = {3, 3}, .pad = {1, 1}}},
          {"N32_C384_56x56_7x7", {.B = 32, .C = 384, .size = {56, 56}, .k = {7, 7}, .pad = {3, 3}}},
      }));
}

}  // namespace ingot::kernels
