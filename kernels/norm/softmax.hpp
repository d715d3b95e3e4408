// kernels/norm/softmax.hpp — softmax of rows: y[r, :] = exp(x[r, :] - max_r) / sum(exp(x[r, :] - max_r)), R rows of
// width D, in f32 whatever T.
//
// The row's maximum is subtracted before the exponential (no overflow for any finite row, and the largest term is
// exactly 1, so the sum is at least 1); the row is held in registers between its two reductions (row_plan.hpp: D a
// specialisation constant, R a run-time scalar), so x is read once and y written once. A tail vector's values past the
// row take part as -FLT_MAX in the maximum and as 0 in the sum. Preconditions: R >= 1, R x D within 32-bit indexes.
#pragma once

#include <vector>

#include "ingot/dsl.hpp"
#include "norm/row_part.hpp"
#include "norm/row_plan.hpp"
#include "norm/team_sum.hpp"

namespace ingot::kernels {

template <class T>
void softmax(KernelBuilder& k, const RowPlan& plan) {
  using namespace ingot::dsl;
  auto R = k.scalar<u32>("R");
  k.require(R >= 1u);
  k.require(R <= 0xffffffffu / plan.width);
  const auto n = R * plan.width;
  auto x = k.in<T>("x", n);
  auto y = k.out<T>("y", n);
  k.launch_bounds(plan.group());

  const RowPart part = row_part(k, plan, R);
  const auto lowest = k.constant<f32>(-3.40282347e38f);
  std::vector<std::vector<Val<f32>>> v;  // this thread's values of the row
  Val<f32> top = lowest;
  for (std::size_t j = 0; j < part.index.size(); ++j) {
    auto xs = load_part(k, plan, x, part.index[j], "x");
    for (const auto& e : xs) top = k.let("top", max(top, part.inside[j] ? select(*part.inside[j], e, lowest) : e));
    v.push_back(std::move(xs));
  }
  const auto row_max = team_reduce(k, top, part.tid, plan.threads, plan.rows, "rowmax", TeamOp::max);
  Val<f32> sum = 0.0f;
  for (std::size_t j = 0; j < v.size(); ++j) {
    for (auto& e : v[j]) {
      e = k.let("e", exp(e - row_max));
      sum = k.let("sum", sum + part.masked(j, e));
    }
  }
  const auto inv = k.let("inv", 1.0f / team_sum(k, sum, part.tid, plan.threads, plan.rows, "rowsum"));
  for (std::size_t j = 0; j < v.size(); ++j) {
    std::vector<Val<f32>> out;
    for (const auto& e : v[j]) out.push_back(k.let("y", e * inv));
    if_(part.stores(j), [&] { store_part(plan, y, part.index[j], out); });
  }
}

}  // namespace ingot::kernels
