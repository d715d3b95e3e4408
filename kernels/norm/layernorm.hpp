// kernels/norm/layernorm.hpp — LayerNorm over the last dimension: y[r, :] = (x[r, :] - mean) * rsqrt(var + eps) * w[:]
// (+ b[:] with bias) for R rows of width D, var the population variance of the row; with residual, h = x + res is
// stored (rounded to T) and normalised, as in rmsnorm.hpp.
//
// The variance is computed from the row held in registers, in two passes over those registers, never as
// E[x^2] - E[x]^2 (which loses every digit to cancellation on rows whose mean is large against their spread). The
// first pass also subtracts a shift, the row's first element x0, before summing: x - x0 is exact wherever x is within a
// factor of two of x0 (Sterbenz), so a large common offset cancels before any rounding and the mean of the shifted
// values, and every x - mean after it, keep f32's precision relative to the row's spread rather than to its offset.
// Sums in f32 whatever T (team_sum.hpp); launch and preconditions as rmsnorm.hpp (R >= 1, R x D within 32-bit indexes).
#pragma once

#include <cstdint>
#include <vector>

#include "ingot/dsl.hpp"
#include "norm/row_part.hpp"
#include "norm/row_plan.hpp"
#include "norm/team_sum.hpp"

namespace ingot::kernels {

struct LayerNormSpec {
  RowPlan plan;
  bool bias = false;
  bool residual = false;
};

template <class T>
void layernorm(KernelBuilder& k, const LayerNormSpec& s) {
  using namespace ingot::dsl;
  const RowPlan& plan = s.plan;
  auto R = k.scalar<u32>("R");
  auto eps = k.scalar<f32>("eps");
  k.require(R >= 1u);
  k.require(R <= 0xffffffffu / plan.width);
  const auto n = R * plan.width;
  auto x = k.in<T>("x", n);
  In<T> res;
  if (s.residual) res = k.in<T>("res", n);
  auto w = k.in<T>("w", plan.width);
  In<T> b;
  if (s.bias) b = k.in<T>("b", plan.width);
  auto y = k.out<T>("y", n);
  Out<T> h;
  if (s.residual) h = k.out<T>("h", n);
  k.launch_bounds(plan.group());

  const RowPart part = row_part(k, plan, R);
  // The shift: the row's first element (h's, with residual), the same value for every thread of the row.
  Val<f32> x0 = cast<f32>(load(x, part.base));
  if (s.residual) x0 = rounded<T>(x0 + cast<f32>(load(res, part.base)));
  x0 = k.let("x0", x0);
  std::vector<std::vector<Val<f32>>> d;  // this thread's values of the row, less x0
  Val<f32> sum = 0.0f;
  for (std::size_t j = 0; j < part.index.size(); ++j) {
    auto xs = load_row_part(k, plan, part, j, x, s.residual ? &res : nullptr, s.residual ? &h : nullptr);
    std::vector<Val<f32>> ds;
    for (const auto& e : xs) {
      ds.push_back(k.let("d", e - x0));
      sum = k.let("sum", sum + part.masked(j, ds.back()));
    }
    d.push_back(std::move(ds));
  }
  const auto width = static_cast<float>(plan.width);
  const auto mean = k.let("mean_d", team_sum(k, sum, part.tid, plan.threads, plan.rows, "sum") / width);
  Val<f32> squares = 0.0f;
  for (std::size_t j = 0; j < d.size(); ++j) {
    for (auto& e : d[j]) {
      e = k.let("c", e - mean);  // x - mean
      squares = k.let("sq", fma(part.masked(j, e), part.masked(j, e), squares));
    }
  }
  const auto var = team_sum(k, squares, part.tid, plan.threads, plan.rows, "sumsq") / width;
  const auto rstd = k.let("rstd", rsqrt(var + eps));
  for (std::size_t j = 0; j < d.size(); ++j) {
    const auto ws = load_part(k, plan, w, part.column[j], "w");
    std::vector<Val<f32>> out;
    if (s.bias) {
      const auto bs = load_part(k, plan, b, part.column[j], "b");
      for (std::size_t e = 0; e < ws.size(); ++e) out.push_back(k.let("y", fma(d[j][e] * rstd, ws[e], bs[e])));
    } else {
      for (std::size_t e = 0; e < ws.size(); ++e) out.push_back(k.let("y", d[j][e] * rstd * ws[e]));
    }
    if_(part.stores(j), [&] { store_part(plan, y, part.index[j], out); });
  }
}

}  // namespace ingot::kernels
