// kernels/activation/register.hpp — the activation family's registration functions.
#pragma once

#include "ingot/harness/registry.hpp"

namespace ingot::kernels {

void register_activation(harness::Registry& r);  // every kernel below
void register_silu(harness::Registry& r);
void register_gelu(harness::Registry& r);
void register_glu(harness::Registry& r);

}  // namespace ingot::kernels
