// kernels/norm/row_part.hpp — a thread's part of its row, as the row kernels of the norm family see it: which row
// (one team of plan.threads threads per row, RowPlan), which vectors of it, and the loads and stores of those vectors.
//
// Thread `lane` of a row holds vectors lane, lane + threads, lane + 2 * threads, ... (consecutive lanes read
// consecutive vectors: coalesced). Only the last of them can lie past the row, and only where the plan is ragged; such
// a vector reads the row's first vector instead (in range) and is masked out of every sum and store. Threads of rows
// past R (the last work-group's tail teams) read row R - 1 and store nothing, so they still reach every shuffle and
// barrier of the row reductions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ingot/dsl.hpp"
#include "norm/row_plan.hpp"

namespace ingot::kernels {

struct RowPart {
  RowPlan plan;
  dsl::Val<u32> tid;    // local_id(0)
  dsl::Val<u32> lane;   // the thread's index in its row's team
  dsl::Val<bool> live;  // the row exists (row < R): stores happen only where it does
  dsl::Val<u32> base;   // the first element of the row (row R - 1 for tail teams)
  // Per vector j of the thread: the element index of its first value, and whether it lies in the row (nullopt: it
  // always does).
  std::vector<dsl::Val<u32>> index;
  std::vector<std::optional<dsl::Val<bool>>> inside;
  // The column of vector j's first value, for the per-column buffers (weight, bias).
  std::vector<dsl::Val<u32>> column;

  // live, and vector j inside the row: where vector j is stored.
  [[nodiscard]] dsl::Val<bool> stores(std::size_t j) const { return inside[j] ? live && *inside[j] : live; }
  // v where vector j lies inside the row, else 0 (so that it adds nothing to a sum).
  [[nodiscard]] dsl::Val<f32> masked(std::size_t j, const dsl::Val<f32>& v) const {
    return inside[j] ? dsl::select(*inside[j], v, 0.0f) : v;
  }
};

// The part of this thread for `plan`, with R the run-time row count (R >= 1, a precondition of the kernels).
inline RowPart row_part(KernelBuilder& k, const RowPlan& plan, const dsl::Val<u32>& R) {
  using namespace ingot::dsl;
  RowPart p{plan, k.local_id(0), {}, {}, {}, {}, {}, {}};
  Val<u32> row = k.group_id(0);
  if (plan.rows > 1) {
    p.lane = k.let("lane_in_row", p.tid % plan.threads);
    row = k.let("row", row * plan.rows + p.tid / plan.threads);
  } else {
    p.lane = p.tid;
  }
  p.live = k.let("live", row < R);
  p.base = k.let("base", min(row, R - 1u) * plan.width);
  const std::uint32_t n = plan.per_thread();
  for (std::uint32_t j = 0; j < n; ++j) {
    Val<u32> chunk = j == 0 ? p.lane : k.let("chunk", p.lane + j * plan.threads);
    std::optional<Val<bool>> inside;
    if (j + 1 == n && plan.ragged()) {
      inside = k.let("inside", chunk < plan.chunks());
      chunk = select(*inside, chunk, 0u);
    }
    p.column.push_back(k.let("col", chunk * plan.vec));
    p.index.push_back(k.let("at", p.base + p.column.back()));
    p.inside.push_back(inside);
  }
  return p;
}

// The plan.vec values of buf at element `at` (a multiple of plan.vec), as f32.
template <class T, dsl::Access A>
std::vector<dsl::Val<f32>> load_part(KernelBuilder& k, const RowPlan& plan, const dsl::Buffer<T, A>& buf,
                                     const dsl::Val<u32>& at, const std::string& name) {
  using namespace ingot::dsl;
  std::vector<Val<f32>> out;
  if (plan.vec == 1) {
    out.push_back(k.let(name, cast<f32>(load(buf, at))));
  } else {
    for (const auto& v : load_vec(buf, at, plan.vec)) out.push_back(k.let(name, cast<f32>(v)));
  }
  return out;
}

// v rounded to T (nearest even) and back to f32: the value a store of v to a T buffer keeps.
template <class T>
dsl::Val<f32> rounded(const dsl::Val<f32>& v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    return dsl::cast<f32>(dsl::cast<T>(v));
  }
}

// Stores values (plan.vec of them, f32; rounded to nearest even for a 16-bit T) at buf[at ..].
template <class T, dsl::Access A>
void store_part(const RowPlan& plan, const dsl::Buffer<T, A>& buf, const dsl::Val<u32>& at,
                const std::vector<dsl::Val<f32>>& values) {
  if (plan.vec == 1) {
    dsl::store(buf, at, values[0]);
  } else {
    dsl::store_vec(buf, at, values);
  }
}

// Part j of this thread's row as the norm reads it: x, or with a residual (res set) h = x + res, rounded to T as it is
// stored to h (the norm reads the sum as the next layer will), h stored where the part stores.
template <class T>
std::vector<dsl::Val<f32>> load_row_part(KernelBuilder& k, const RowPlan& plan, const RowPart& part, std::size_t j,
                                         const dsl::In<T>& x, const dsl::In<T>* res, const dsl::Out<T>* h) {
  auto xs = load_part(k, plan, x, part.index[j], "x");
  if (res) {
    const auto rs = load_part(k, plan, *res, part.index[j], "r");
    for (std::size_t e = 0; e < xs.size(); ++e) xs[e] = k.let("h", rounded<T>(xs[e] + rs[e]));
    dsl::if_(part.stores(j), [&] { store_part(plan, *h, part.index[j], xs); });
  }
  return xs;
}

}  // namespace ingot::kernels
