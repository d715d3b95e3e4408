// kernels/norm/row_plan.hpp — how the row kernels of the norm family (rmsnorm.hpp, layernorm.hpp) cut their work:
// a team of `threads` consecutive threads per row, `rows` teams per work-group, each thread holding per_thread()
// vectors of `vec` elements of its row in registers between the row's reductions and its normalisation.
//
// The row width D is a specialisation constant, not a run-time scalar: a model has one or two hidden widths, and a
// constant width lets each thread keep its part of the row in registers (a trace-time count of values), so x is read
// from memory once, and fixes the vector width and which accesses need a tail guard at trace time. The row count R
// (tokens per step) changes from call to call and is a run-time scalar. The plan is the one place that gives both the
// kernel's shape and its launch, and refuses what cannot run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingot/harness/registry.hpp"
#include "ingot/runtime/launch.hpp"

namespace ingot::kernels {

// The widest row the family takes: 1024 threads then hold 64 values each (16 vectors of 4 f32 or 8 of 8 16-bit
// values), what fits in registers beside the kernel's own state.
inline constexpr std::uint32_t kMaxNormWidth = 65536;

struct RowPlan {
  std::uint32_t width = 1;     // D, elements of a row
  std::uint32_t vec = 1;       // elements per access (4, 8 or 16 bytes; 1: scalar accesses)
  std::uint32_t threads = 32;  // per row: a multiple of 32 (the reductions shuffle within warps)
  std::uint32_t rows = 1;      // rows per work-group

  [[nodiscard]] std::uint32_t chunks() const { return width / vec; }  // vectors of a row
  [[nodiscard]] std::uint32_t per_thread() const { return (chunks() + threads - 1) / threads; }
  // Whether the last vector of a thread may lie past the row (the only access that needs a guard).
  [[nodiscard]] bool ragged() const { return chunks() % threads != 0; }
  [[nodiscard]] std::uint32_t group() const { return threads * rows; }
  // One team per row: ceil(R / rows) work-groups of group() threads.
  [[nodiscard]] runtime::LaunchGeometry geometry(std::uint64_t row_count) const {
    return runtime::grid_1d(((row_count + rows - 1) / rows) * group(), group());
  }
};

// The tuning options of the row kernels, declared once (ingot list --options).
inline const std::vector<harness::OptionSpec>& row_plan_options() {
  static const std::vector<harness::OptionSpec> options{
      {"vec", 1, 8,
       "elements per access: 1, or 4/8/16 bytes of elements dividing D; default the widest that divides D"},
      {"threads", 32, 1024,
       "threads per row, a multiple of 32; default enough for two vectors each (32 at least, 1024 at most)"},
      {"rows", 1, 32, "rows per work-group; default 128 / threads where a row takes fewer than 128 threads, else 1"}};
  return options;
}

// The plan of a case: D from the case (1..kMaxNormWidth), the options where the case names them, else the defaults.
// Throws std::invalid_argument, naming the kernel, for a width or an option combination that cannot run.
inline RowPlan row_plan(const harness::Params& p, std::uint32_t elem_bytes, const std::string& kernel) {
  const std::int64_t d = harness::param(p, "D");
  if (d < 1 || d > kMaxNormWidth) {
    throw std::invalid_argument(kernel + ": D = " + std::to_string(d) + " must be in [1, " +
                                std::to_string(kMaxNormWidth) + "] (the row width)");
  }
  RowPlan plan;
  plan.width = static_cast<std::uint32_t>(d);
  const auto& options = row_plan_options();
  plan.vec = 1;
  for (const std::uint32_t bytes : {16u, 8u, 4u}) {
    const std::uint32_t w = bytes / elem_bytes;
    if (w >= 2 && plan.width % w == 0) {
      plan.vec = w;
      break;
    }
  }
  plan.vec = harness::option_value(options, p, "vec", plan.vec, kernel);
  const std::uint32_t bytes = plan.vec * elem_bytes;
  if (plan.vec != 1 && bytes != 4 && bytes != 8 && bytes != 16) {
    throw std::invalid_argument(kernel + ": vec = " + std::to_string(plan.vec) + " elements of " +
                                std::to_string(elem_bytes) + " bytes is not a 4-, 8- or 16-byte access");
  }
  if (plan.width % plan.vec != 0) {
    throw std::invalid_argument(kernel + ": vec = " + std::to_string(plan.vec) + " does not divide D = " +
                                std::to_string(plan.width) + " (rows start on whole vectors)");
  }
  const std::uint32_t half = (plan.chunks() + 1) / 2;
  const std::uint32_t threads = std::min<std::uint32_t>(1024, std::max<std::uint32_t>(32, (half + 31) / 32 * 32));
  plan.threads = harness::option_value(options, p, "threads", threads, kernel);
  if (plan.threads % 32 != 0) {
    throw std::invalid_argument(kernel + ": threads = " + std::to_string(plan.threads) +
                                " must be a multiple of 32 (whole warps per row)");
  }
  plan.rows = harness::option_value(options, p, "rows", plan.threads < 128 ? 128 / plan.threads : 1, kernel);
  if (plan.per_thread() * plan.vec > 64) {
    throw std::invalid_argument(kernel + ": D = " + std::to_string(plan.width) + " over " +
                                std::to_string(plan.threads) + " threads is " +
                                std::to_string(plan.per_thread() * plan.vec) +
                                " values per thread, more than the 64 a thread holds: use more threads");
  }
  if (plan.group() > 1024) {
    throw std::invalid_argument(kernel + ": threads x rows = " + std::to_string(plan.group()) +
                                " must be at most 1024 threads per work-group");
  }
  return plan;
}

}  // namespace ingot::kernels
