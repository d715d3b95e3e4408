// ingot's kernel library: every family registered by explicit calls (nothing a linker can drop).
#include "activation/register.hpp"
#include "conv/register.hpp"
#include "gemm/register.hpp"
#include "ingot/library.hpp"
#include "norm/register.hpp"
#include "rope/register.hpp"

namespace ingot::harness {

Registry builtin_registry() {
  Registry r;
  kernels::register_conv(r);
  kernels::register_activation(r);
  kernels::register_gemm_family(r);
  kernels::register_norm(r);
  kernels::register_rope_family(r);
  return r;
}

}  // namespace ingot::harness
