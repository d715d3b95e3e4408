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
#include "support/inputs.hpp"

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

inline std::string dtype_list(const std::vector<DType>& ts) {
  std::string s;
  for (auto t : ts) s += (s.empty() ? "" : ",") + std::string(dtype_name(t));
  return s;
}

}  // namespace ingot::kernels
