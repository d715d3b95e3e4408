// kernels/norm/rmsnorm.hpp — RMSNorm over the last dimension: y[r, :] = x[r, :] * rsqrt(mean(x[r, :]^2) + eps) * w[:]
// for R rows of width D, with two fused forms:
//   residual: h = x + res is stored (rounded to T, the stream the next layer adds to) and normalised: y = norm(h);
//   gated:    y = norm(x) * w * silu(z), the gate applied after the norm (Mamba-2's gated RMSNorm).
//
// One team of threads per row (row_plan.hpp: why D is a specialisation constant and R, eps run-time scalars); each
// thread keeps its vectors of the row in registers, so x (and res) are read once. Sums in f32 whatever T; the sum of
// squares of a team is team_sum.hpp's. Preconditions: R >= 1, and R x D elements fit 32-bit indexes.
#pragma once

#include <cstdint>
#include <vector>

#include "ingot/dsl.hpp"
#include "norm/row_part.hpp"
#include "norm/row_plan.hpp"
#include "norm/team_sum.hpp"

namespace ingot::kernels {

struct RmsNormSpec {
  RowPlan plan;
  bool residual = false;
  bool gated = false;
};

template <class T>
void rmsnorm(KernelBuilder& k, const RmsNormSpec& s) {
  using namespace ingot::dsl;
  const RowPlan& plan = s.plan;
  auto R = k.scalar<u32>("R");
  auto eps = k.scalar<f32>("eps");
  k.require(R >= 1u);
  k.require(R <= 0xffffffffu / plan.width);
  const auto n = R * plan.width;
  auto x = k.in<T>("x", n);
  In<T> res;
  In<T> z;
  if (s.residual) res = k.in<T>("res", n);
  if (s.gated) z = k.in<T>("z", n);
  auto w = k.in<T>("w", plan.width);
  auto y = k.out<T>("y", n);
  Out<T> h;
  if (s.residual) h = k.out<T>("h", n);
  k.launch_bounds(plan.group());

  const RowPart part = row_part(k, plan, R);
  std::vector<std::vector<Val<f32>>> v;  // this thread's values of the row
  Val<f32> squares = 0.0f;
  for (std::size_t j = 0; j < part.index.size(); ++j) {
    auto xs = load_row_part(k, plan, part, j, x, s.residual ? &res : nullptr, s.residual ? &h : nullptr);
    for (const auto& e : xs) squares = k.let("sq", fma(part.masked(j, e), part.masked(j, e), squares));
    v.push_back(std::move(xs));
  }
  const auto total = team_sum(k, squares, part.tid, plan.threads, plan.rows, "sumsq");
  const auto rstd = k.let("rstd", rsqrt(total / static_cast<float>(plan.width) + eps));
  for (std::size_t j = 0; j < v.size(); ++j) {
    const auto ws = load_part(k, plan, w, part.column[j], "w");
    std::vector<Val<f32>> out;
    if (s.gated) {
      const auto zs = load_part(k, plan, z, part.index[j], "z");
      for (std::size_t e = 0; e < ws.size(); ++e) {
        const auto gate = zs[e] / (1.0f + exp(-zs[e]));
        out.push_back(k.let("y", v[j][e] * rstd * ws[e] * gate));
      }
    } else {
      for (std::size_t e = 0; e < ws.size(); ++e) out.push_back(k.let("y", v[j][e] * rstd * ws[e]));
    }
    if_(part.stores(j), [&] { store_part(plan, y, part.index[j], out); });
  }
}

}  // namespace ingot::kernels
