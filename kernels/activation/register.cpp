// The activation family: one explicit call per kernel.
#include "activation/register.hpp"

namespace ingot::kernels {

void register_activation(harness::Registry& r) {
  register_silu(r);
  register_gelu(r);
  register_glu(r);
}

}  // namespace ingot::kernels
