// Must NOT compile: a symbolic condition steering a plain C++ `if`.
// With -DINGOT_CONTROL the offending line is left out and the file must compile.
#include <ingot/dsl.hpp>

void kernel(ingot::KernelBuilder& k) {
  using namespace ingot::dsl;
  auto n = k.scalar<ingot::u32>("n");
  auto i = k.program_id(0);
#ifndef INGOT_CONTROL
  if (i < n) {
  }
#else
  auto unused = if_(i < n, [] {});
  (void)unused;
#endif
}
