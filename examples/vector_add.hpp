// examples/vector_add.hpp — the smallest useful kernel: z = x + y, tail-guarded.
#pragma once

#include <ingot/dsl.hpp>

namespace ingot::examples {

// One thread per element; n is a run-time scalar, so one compiled variant serves every size.
template <class T>
void vector_add(dsl::KernelBuilder& k) {
  using namespace ingot::dsl;
  auto n = k.scalar<u32>("n");
  auto x = k.in<T>("x", n);
  auto y = k.in<T>("y", n);
  auto z = k.out<T>("z", n);
  auto i = k.program_id(0);
  if_(i < n, [&] { store(z, i, load(x, i) + load(y, i)); });
}

}  // namespace ingot::examples
