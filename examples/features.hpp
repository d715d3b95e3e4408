// examples/features.hpp — one small kernel touching every construct the printers must handle:
// shared memory and a barrier, a run-time loop, a mutable variable, if/else, atomics (integer
// and f32), math functions (erf included: MSL lacks it, legalise decomposes it), 16-bit
// conversions and signed arithmetic.
#pragma once

#include <ingot/dsl.hpp>

namespace ingot::examples {

inline void features(dsl::KernelBuilder& k) {
  using namespace ingot::dsl;
  auto n = k.scalar<u32>("n");
  auto scale = k.scalar<f32>("scale");
  auto x = k.in<f16>("x", n);
  auto y = k.out<bf16>("y", n);
  auto counts = k.inout<i32>("counts", 5);
  auto total = k.inout<f32>("total", 1);
  auto tile = k.shared<f32>("tile", 64);

  auto i = k.program_id(0);
  auto l = k.local_id(0);
  auto j = k.let("j", select(i < n, i, 0u));
  store(tile, l, load(x, j) * scale);
  k.barrier();
  Var<f32> acc(k, 0.0f, "acc");
  for_(0u, min(l + 1u, 64u), [&](Val<u32> t) { acc += load(tile, t); });
  if_(i < n, [&] {
    auto v = acc.get();
    store(y, i, erf(v) + tanh(v) * exp(-abs(v)) + sqrt(abs(v)) * rsqrt(abs(v) + 1.0f));
    auto bucket = cast<i32>(i % 4u) - 2 * cast<i32>(i % 2u);
    (void)atomic_add(counts, cast<u32>(bucket + 2) % 3u, 1);  // counts[0..2]
    (void)atomic_max(counts, 3u, bucket);                     // counts[3] alone: no race
    (void)atomic_add(total, 0u, v);
  }).else_([&] { (void)atomic_min(counts, 4u, -1); });  // counts[4]: tail threads only
}

}  // namespace ingot::examples
