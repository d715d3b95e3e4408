// The registration of the row softmax (softmax.hpp): its cases, inputs, f64 oracle, tolerance and bench arithmetic.
#include "norm/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "norm/register.hpp"
#include "norm/row_cases.hpp"
#include "support/trace.hpp"

namespace ingot::kernels {

namespace {

using harness::param;
using harness::Params;

Params shape(std::int64_t R, std::int64_t D) { return {{"R", R}, {"D", D}}; }
Params with(Params p, const std::string& key, std::int64_t v) {
  p[key] = v;
  return p;
}

RowPlan plan_of(DType t, const Params& p) { return row_plan(p, static_cast<std::uint32_t>(dtype_size(t)), "softmax"); }

}  // namespace

void register_softmax(harness::Registry& r) {
  harness::KernelSpec s;
  s.name = "softmax";
  s.family = "norm";
  s.description = "softmax of rows: y = exp(x - max) / sum(exp(x - max)) over the last dimension; f32 arithmetic";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.runtime_params = {"R"};
  s.spec_params = {"D"};
  for (const auto& o : row_plan_options()) s.add_option(o);
  s.scalar_params = {{"R", "R"}};
  s.tests = {
      {"R1_D1", shape(1, 1)},          // one value: y = 1
      {"R3_D7", shape(3, 7)},          // odd width: scalar accesses
      {"R37_D36", shape(37, 36)},      // several rows per group, a partial last group
      {"R3_D129", shape(3, 129)},      // 1 past a group of vectors
      {"R2_D1000", shape(2, 1000)},    // ragged last vector
      {"R1_D4099", shape(1, 4099)},    // 1024 threads
      {"R1_D65536", shape(1, 65536)},  // the widest row
      // Tuning options (ingot test --all-variants): 3 warps per row, 2 rows per group, scalar accesses.
      {"R3_D4099_threads96", with(shape(3, 4099), "threads", 96)},
      {"R5_D1000_rows2", with(with(shape(5, 1000), "rows", 2), "threads", 64)},
      {"R3_D128_vec1", with(shape(3, 128), "vec", 1)},
  };
  // Attention scores of 32 heads: 256 query tokens over a 4096 context, and one token over 32768.
  s.bench = {{"R8192_D4096", shape(8192, 4096)}, {"R32_D32768", shape(32, 32768)}};
  s.build = [](DType t, const Params& p) {
    (void)row_count(p, "softmax");
    const RowPlan plan = plan_of(t, p);
    return trace_typed(t, "softmax", p,
                       [&](auto tag, KernelBuilder& k) { softmax<typename decltype(tag)::type>(k, plan); });
  };
  s.geometry = [](DType t, const Params& p) { return plan_of(t, p).geometry(row_count(p, "softmax")); };
  s.shapes = [](DType, const Params& p) {
    const auto R = static_cast<std::uint64_t>(param(p, "R"));
    const auto D = static_cast<std::uint64_t>(param(p, "D"));
    return std::map<std::string, std::vector<std::uint64_t>>{{"x", {R, D}}, {"y", {R, D}}};
  };
  // x in [-8, 8], odd rows shifted by +300: the maximum's subtraction is what keeps exp finite there.
  s.inputs = [](DType t, const Params& p, std::uint64_t seed) {
    const std::uint64_t R = row_count(p, "softmax");
    const auto D = static_cast<std::uint64_t>(param(p, "D"));
    harness::HostData d;
    d.scalars["R"] = static_cast<double>(R);
    d.buffers["x"] = row_values(t, R, D, seed, -8.0, 8.0, 300.0);
    return d;
  };
  s.oracle = [](DType, const Params& p, const harness::HostData& d) {
    const auto D = static_cast<std::size_t>(param(p, "D"));
    const auto& x = harness::buffer_values(d, "x", "softmax");
    std::vector<double> y(x.size());
    for (std::size_t r = 0; r * D < x.size(); ++r) {
      const double top = *std::max_element(x.begin() + static_cast<std::ptrdiff_t>(r * D),
                                           x.begin() + static_cast<std::ptrdiff_t>((r + 1) * D));
      double sum = 0;
      for (std::size_t c = 0; c < D; ++c) sum += std::exp(x[r * D + c] - top);
      for (std::size_t c = 0; c < D; ++c) y[r * D + c] = std::exp(x[r * D + c] - top) / sum;
    }
    return std::map<std::string, std::vector<double>>{{"y", y}};
  };
  // Each output is a product of exp (a few ulp) and the reciprocal of the f32 sum: relative; the absolute term covers
  // outputs that underflow (e^-16 of a row's largest value and below, in 16-bit).
  s.tolerance = [](DType t, const Params&) { return row_tolerance(t, 1e-7); };
  s.bytes = [](DType t, const Params& p) {
    return 2.0 * static_cast<double>(dtype_size(t)) * static_cast<double>(param(p, "R")) *
           static_cast<double>(param(p, "D"));
  };
  // Per element: the maximum, the subtraction, exp (counted as one), the sum and the product.
  s.flops = [](const Params& p) {
    return 5.0 * static_cast<double>(param(p, "R")) * static_cast<double>(param(p, "D"));
  };
  r.add(std::move(s));
}

}  // namespace ingot::kernels
