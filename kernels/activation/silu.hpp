// kernels/activation/silu.hpp — SiLU, y = x * sigmoid(x) = x / (1 + exp(-x)), elementwise over n values.
//
// One thread per element, computed in f32 whatever the stored type (16-bit values are converted on load and rounded
// once, to nearest even, on store). n is a run-time scalar: one compiled variant serves every length below 2^32, and
// the 64-bit form (I = i64, blocks/index_width.hpp) every longer one. The launch is rounded up to whole work-groups,
// so threads past n exist: they skip both the load and the store.
#pragma once

#include "blocks/index_width.hpp"
#include "ingot/dsl.hpp"

namespace ingot::kernels {

template <class T, blocks::IndexType I = u32>
void silu(dsl::KernelBuilder& k) {
  using namespace ingot::dsl;
  auto n = k.scalar<I>("n");
  auto x = k.in<T>("x", n);
  auto y = k.out<T>("y", n);
  auto i = k.program_id<I>(0);
  if_(i < n, [&] {
    auto v = k.let("v", cast<f32>(load(x, i)));
    store(y, i, cast<T>(v / (1.0f + exp(-v))));
  });
}

}  // namespace ingot::kernels
