// The rope family: one explicit call per kernel.
#include "rope/register.hpp"

namespace ingot::kernels {

void register_rope_family(harness::Registry& r) { register_rope(r); }

}  // namespace ingot::kernels
