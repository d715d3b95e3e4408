// kernels/rope/register.hpp — the rope family's registration functions.
#pragma once

#include "ingot/harness/registry.hpp"

namespace ingot::kernels {

void register_rope_family(harness::Registry& r);  // every kernel below
void register_rope(harness::Registry& r);

}  // namespace ingot::kernels
