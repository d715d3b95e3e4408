// examples/reference.hpp — CPU oracles and input generation for the example kernels.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <ingot/dtype.hpp>
#include <ingot/harness/harness.hpp>
#include <ingot/scalar_eval.hpp>

#include "conv/common.hpp"

#include "depthwise_conv1d.hpp"

namespace ingot::examples {

// Seeded uniform values in [lo, hi], rounded to dtype t: the library's generator.
inline std::vector<double> random_values(DType t, std::size_t n, std::uint64_t seed, double lo = -1.0,
                                         double hi = 1.0) {
  return kernels::random_values(t, n, seed, lo, hi);
}

// f64 oracle on inputs already rounded to the test dtype.
inline std::vector<double> depthwise_conv1d_reference(const Conv1dShape& s, std::uint32_t batch,
                                                      const std::vector<double>& x, const std::vector<double>& w) {
  const std::uint32_t O = s.out_len();
  std::vector<double> y(static_cast<std::size_t>(batch) * s.channels * O);
  for (std::uint32_t b = 0; b < batch; ++b) {
    for (std::uint32_t c = 0; c < s.channels; ++c) {
      for (std::uint32_t o = 0; o < O; ++o) {
        double acc = 0;
        for (std::uint32_t t = 0; t < s.ksize; ++t) {
          const std::int64_t pos =
              static_cast<std::int64_t>(o) * s.stride + static_cast<std::int64_t>(t) * s.dilation - s.pad;
          if (pos < 0 || pos >= s.length) continue;
          acc += x[(static_cast<std::size_t>(b) * s.channels + c) * s.length + static_cast<std::size_t>(pos)] *
                 w[static_cast<std::size_t>(c) * s.ksize + t];
        }
        y[(static_cast<std::size_t>(b) * s.channels + c) * O + o] = acc;
      }
    }
  }
  return y;
}

// Absolute + relative tolerance per output dtype for a reduction of `terms` products.
struct Tolerance {
  double abs = 0;
  double rel = 0;
};
inline Tolerance conv_tolerance(DType t, std::size_t terms) {
  const double scale = std::sqrt(static_cast<double>(terms) + 1.0);
  switch (t) {
    case DType::f16: return {1e-3 * scale, 1e-3};   // output rounding: 2^-11 relative
    case DType::bf16: return {8e-3 * scale, 8e-3};  // output rounding: 2^-8 relative
    default: return {1e-6 * scale, 1e-5};
  }
}

// First index where got differs from want beyond tolerance, by the harness's comparison rule
// (NaN or inf on one side always differs); -1 when all agree.
inline std::int64_t first_mismatch(const std::vector<double>& want, const std::vector<double>& got, Tolerance tol) {
  std::string why;
  return harness::compare(want, got, harness::Tolerance{tol.abs, tol.rel}, &why);
}

}  // namespace ingot::examples
