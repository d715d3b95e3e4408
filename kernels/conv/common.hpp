// kernels/conv/common.hpp — helpers shared by the convolution family's registrations:
// output-size arithmetic, seeded inputs rounded to the test dtype, tolerances.
#pragma once

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingot/dtype.hpp"
#include "ingot/harness/registry.hpp"
#include "ingot/scalar_eval.hpp"

namespace ingot::kernels {

// Output length of a convolution axis; throws std::invalid_argument for impossible shapes.
inline std::int64_t conv_out_len(std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t pad_lo,
                                 std::int64_t pad_hi, std::int64_t dilation, const std::string& what) {
  if (in < 1 || k < 1 || stride < 1 || dilation < 1 || pad_lo < 0 || pad_hi < 0) {
    throw std::invalid_argument(what + ": sizes, stride and dilation must be >= 1 and padding >= 0");
  }
  const std::int64_t span = dilation * (k - 1) + 1;
  if (in + pad_lo + pad_hi < span) throw std::invalid_argument(what + ": the kernel is wider than the padded input");
  return (in + pad_lo + pad_hi - span) / stride + 1;
}

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

inline std::string dtype_list(const std::vector<DType>& ts) {
  std::string s;
  for (auto t : ts) s += (s.empty() ? "" : ",") + std::string(dtype_name(t));
  return s;
}

}  // namespace ingot::kernels
