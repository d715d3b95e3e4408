// The convolution family: one explicit call per kernel.
#include "register.hpp"

namespace ingot::kernels {

void register_conv(harness::Registry& r) {
  register_depthwise_conv1d(r);
  register_conv2d(r);
  register_conv2d_grouped(r);
  register_conv3d(r);
  register_conv3d_grouped(r);
  register_depthwise_conv2d(r);
  register_depthwise_conv2d_nhwc(r);
  register_winograd_conv2d(r);
  register_causal_conv1d(r);
  register_blockscaled_conv(r);
}

}  // namespace ingot::kernels
