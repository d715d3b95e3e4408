// The gemm family: one explicit call per kernel.
#include "gemm/register.hpp"

namespace ingot::kernels {

void register_gemm_family(harness::Registry& r) { register_gemm(r); }

}  // namespace ingot::kernels
