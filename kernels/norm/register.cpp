// The norm family: one explicit call per kernel.
#include "norm/register.hpp"

namespace ingot::kernels {

void register_norm(harness::Registry& r) {
  register_rmsnorm(r);
  register_layernorm(r);
  register_softmax(r);
}

}  // namespace ingot::kernels
