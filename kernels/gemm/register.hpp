// kernels/gemm/register.hpp — the gemm family's registration functions.
#pragma once

#include "ingot/harness/registry.hpp"

namespace ingot::kernels {

void register_gemm_family(harness::Registry& r);  // every kernel below
void register_gemm(harness::Registry& r);

}  // namespace ingot::kernels
