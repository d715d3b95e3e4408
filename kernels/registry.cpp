// ingot's kernel library: every family registered by explicit calls (nothing a linker can drop).
#include "conv/register.hpp"
#include "ingot/library.hpp"

namespace ingot::harness {

Registry builtin_registry() {
  Registry r;
  kernels::register_conv(r);
  return r;
}

}  // namespace ingot::harness
