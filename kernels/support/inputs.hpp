// kernels/support/inputs.hpp — seeded inputs and tolerances every family's registration shares: random values
// rounded to the case's dtype (never all zeros), and the tolerance of an f32 dot product rounded once to its dtype.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "ingot/dtype.hpp"
#include "ingot/harness/registry.hpp"
#include "ingot/scalar_eval.hpp"

namespace ingot::kernels {

// Seeded uniform values in [lo, hi], rounded to dtype t; never all zeros.
inline std::vector<double> random_values(DType t, std::size_t n, std::uint64_t seed, double lo = -1.0,
                                         double hi = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  bool nonzero = false;
  for (auto& x : v) {
    x = ir::double_of_bits(t, ir::bits_of_double(t, dist(rng)));
    nonzero = nonzero || x != 0.0;
  }
  if (!nonzero && !v.empty()) v[0] = 0.5;
  return v;
}

// Tolerance of a dot product of `terms` products of values in [-1, 1], computed in f32 and
// rounded once to the output dtype: the output rounding is relative (half an ulp of the
// dtype, with room for one ulp when f32 summation order moves a value across a rounding
// boundary); the f32 accumulation error is absolute and grows with the number of terms.
inline harness::Tolerance dot_tolerance(DType t, std::int64_t terms) {
  const double n = static_cast<double>(terms < 1 ? 1 : terms);
  switch (t) {
    case DType::f16: return {2e-5 * n, 1e-3};
    case DType::bf16: return {2e-4 * n, 8e-3};
    default: return {1e-6 * n, 1e-5};
  }
}

}  // namespace ingot::kernels
