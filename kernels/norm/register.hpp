// kernels/norm/register.hpp — the norm family's registration functions.
#pragma once

#include "ingot/harness/registry.hpp"

namespace ingot::kernels {

void register_norm(harness::Registry& r);  // every kernel below
void register_rmsnorm(harness::Registry& r);
void register_layernorm(harness::Registry& r);
void register_softmax(harness::Registry& r);

}  // namespace ingot::kernels
