// kernels/norm/row_cases.hpp — what the registrations of the norm family's row kernels (rmsnorm.cpp, layernorm.cpp)
// share: the case parameters (R rows of width D, eps carried as an integer count of 1e-9), the row count's refusal,
// seeded row inputs with an offset on chosen rows, and the tolerance of a normalised row.
#pragma once

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingot/dtype.hpp"
#include "ingot/harness/registry.hpp"
#include "ingot/scalar_eval.hpp"
#include "norm/row_plan.hpp"

namespace ingot::kernels {

// eps of a case: the integer case parameter eps_nano counts units of 1e-9 (KernelSpec::scalar_units); 1e-5 (PyTorch's
// LayerNorm default) where a case does not name it.
inline constexpr double kEpsUnit = 1e-9;
inline constexpr std::int64_t kDefaultEpsNano = 10000;

// Declares the row kernels' common parameters and scalars on s: run-time R and eps, specialisation D, the tuning
// options (row_plan.hpp) and the flags (0/1 specialisation parameters that choose what the kernel computes, so every
// case states them and the default test run covers each).
inline void declare_row_params(harness::KernelSpec& s, const std::vector<std::string>& flags) {
  s.runtime_params = {"R", "eps_nano"};
  s.spec_params = {"D"};
  for (const auto& f : flags) s.spec_params.push_back(f);
  for (const auto& o : row_plan_options()) s.add_option(o);
  s.scalar_params = {{"R", "R"}, {"eps", "eps_nano"}};
  s.scalar_units = {{"eps", kEpsUnit}};
}

// A flag (0 or 1) of case p; 0 where the case does not name it.
inline bool row_flag(const harness::Params& p, const std::string& key, const std::string& kernel) {
  if (!p.count(key)) return false;
  const std::int64_t v = harness::param(p, key);
  if (v != 0 && v != 1) {
    throw std::invalid_argument(kernel + ": " + key + " = " + std::to_string(v) + " must be 0 or 1");
  }
  return v == 1;
}

// The row count of case p: refuses R < 1 and R x D past 32-bit indexes with what to change (the kernels' launch
// preconditions say the same to a caller with its own buffers).
inline std::uint64_t row_count(const harness::Params& p, const std::string& kernel) {
  const std::int64_t R = harness::param(p, "R");
  const std::int64_t D = harness::param(p, "D");
  if (R < 1) throw std::invalid_argument(kernel + ": R = " + std::to_string(R) + " must be >= 1 (rows)");
  if (D >= 1 && R > static_cast<std::int64_t>(0xffffffffu / static_cast<std::uint64_t>(D))) {
    throw std::invalid_argument(kernel + ": R x D = " + std::to_string(R) + " x " + std::to_string(D) +
                                " elements does not fit 32-bit indexes: split the rows into several launches");
  }
  return static_cast<std::uint64_t>(R);
}

// eps of case p as the kernel receives it (rounded to f32).
inline double row_eps(const harness::Params& p) {
  const std::int64_t nano = p.count("eps_nano") ? harness::param(p, "eps_nano") : kDefaultEpsNano;
  return ir::double_of_bits(DType::f32, ir::bits_of_double(DType::f32, static_cast<double>(nano) * kEpsUnit));
}

// Seeded uniform values in [lo, hi] for R rows of D, row r shifted by `offset` where r is odd, rounded to dtype t;
// never all zeros.
inline std::vector<double> row_values(DType t, std::uint64_t R, std::uint64_t D, std::uint64_t seed, double lo,
                                      double hi, double offset = 0.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(R * D);
  bool nonzero = false;
  for (std::uint64_t r = 0; r < R; ++r) {
    for (std::uint64_t c = 0; c < D; ++c) {
      const double u = dist(rng) + (r % 2 == 1 ? offset : 0.0);
      v[r * D + c] = ir::double_of_bits(t, ir::bits_of_double(t, u));
      nonzero = nonzero || v[r * D + c] != 0.0;
    }
  }
  if (!nonzero && !v.empty()) v[0] = 0.5;
  return v;
}

// v rounded to dtype t (the value a store keeps).
inline double round_to(DType t, double v) { return ir::double_of_bits(t, ir::bits_of_double(t, v)); }

// The tolerance of a normalised row: the f32 sums err by a few ulp of the row's statistics (a relative error of the
// output, growing with the values a thread sums: D / threads, at most 64, plus the tree), the output is then rounded
// once to its dtype (half an ulp, with room for one where f32 lands next to a rounding boundary), and `abs` covers
// outputs that cancel (y = n * w + b near zero).
inline harness::Tolerance row_tolerance(DType t, double abs) {
  switch (t) {
    case DType::f16: return {abs, 1e-3};
    case DType::bf16: return {abs, 8e-3};
    default: return {abs, 2e-5};
  }
}

}  // namespace ingot::kernels
