// The registration of RMSNorm (rmsnorm.hpp): its cases, inputs, f64 oracle, tolerance and bench arithmetic.
#include "norm/rmsnorm.hpp"

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

struct Flags {
  bool residual = false, gated = false;
};

Params shape(std::int64_t R, std::int64_t D, Flags f = {}) {
  return {{"R", R}, {"D", D}, {"residual", f.residual}, {"gated", f.gated}, {"eps_nano", kDefaultEpsNano}};
}
Params with(Params p, const std::string& key, std::int64_t v) {
  p[key] = v;
  return p;
}

RmsNormSpec spec_of(DType t, const Params& p) {
  return RmsNormSpec{row_plan(p, static_cast<std::uint32_t>(dtype_size(t)), "rmsnorm"),
                     row_flag(p, "residual", "rmsnorm"), row_flag(p, "gated", "rmsnorm")};
}

}  // namespace

void register_rmsnorm(harness::Registry& r) {
  harness::KernelSpec s;
  s.name = "rmsnorm";
  s.family = "norm";
  s.description =
      "RMSNorm of rows: y = x * rsqrt(mean(x^2) + eps) * w; residual (h = x + res, y = norm(h)), gated "
      "(y = norm(x) * w * silu(z)); f32 sums";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  declare_row_params(s, {"residual", "gated"});
  const Flags res{true, false}, gate{false, true}, both{true, true};
  s.tests = {
      {"R1_D1", shape(1, 1)},                      // one value: 31 idle lanes, 3 tail rows of the group
      {"R3_D7", shape(3, 7)},                      // odd width: scalar accesses
      {"R37_D36", shape(37, 36)},                  // 4 rows per group, the last group's 3 tail rows
      {"R3_D129_residual", shape(3, 129, res)},    // 129 = 1 past a group of 128 vectors
      {"R3_D129_gated", shape(3, 129, gate)},      //
      {"R2_D1000_both", shape(2, 1000, both)},     // vectors of 8 (16-bit) or 4, ragged last vector
      {"R1_D4099", shape(1, 4099)},                // 1024 threads, a ragged fifth value
      {"R3_D4099_residual", shape(3, 4099, res)},  //
      {"R3_D4096_gated", shape(3, 4096, gate)},    // the bench width
      {"R1_D65536", shape(1, 65536)},              // the widest row: 64 values per thread
      // Tuning options (ingot test --all-variants): 3 warps per row, 2 rows per group, scalar accesses.
      {"R3_D4099_threads96", with(shape(3, 4099, res), "threads", 96)},
      {"R5_D1000_rows2", with(with(shape(5, 1000, gate), "rows", 2), "threads", 64)},
      {"R3_D128_vec1", with(shape(3, 128, both), "vec", 1)},
  };
  // A 7B-class decoder (hidden 4096) at 1, 64 and 256 tokens per step, and a prefill-sized 8192 that is memory-bound.
  for (const std::int64_t R : {1, 64, 256, 8192}) {
    const std::string name = "R" + std::to_string(R) + "_D4096";
    s.bench.push_back({name, shape(R, 4096)});
    if (R >= 256) {
      s.bench.push_back({name + "_residual", shape(R, 4096, res)});
      s.bench.push_back({name + "_gated", shape(R, 4096, gate)});
    }
  }
  s.build = [](DType t, const Params& p) {
    const RmsNormSpec sp = spec_of(t, p);
    return trace_typed(t, "rmsnorm", p,
                       [&](auto tag, KernelBuilder& k) { rmsnorm<typename decltype(tag)::type>(k, sp); });
  };
  s.geometry = [](DType t, const Params& p) { return spec_of(t, p).plan.geometry(row_count(p, "rmsnorm")); };
  s.shapes = [](DType, const Params& p) {
    const auto R = static_cast<std::uint64_t>(param(p, "R"));
    const auto D = static_cast<std::uint64_t>(param(p, "D"));
    std::map<std::string, std::vector<std::uint64_t>> m{{"x", {R, D}}, {"w", {D}}, {"y", {R, D}}};
    if (row_flag(p, "residual", "rmsnorm")) m["res"] = m["h"] = {R, D};
    if (row_flag(p, "gated", "rmsnorm")) m["z"] = {R, D};
    return m;
  };
  // x and res in [-1, 1], w in [0.5, 1.5], z in [-6, 6] (both tails of the gate's sigmoid).
  s.inputs = [](DType t, const Params& p, std::uint64_t seed) {
    const std::uint64_t R = row_count(p, "rmsnorm");
    const auto D = static_cast<std::uint64_t>(param(p, "D"));
    harness::HostData d;
    d.scalars["R"] = static_cast<double>(R);
    d.scalars["eps"] = row_eps(p);
    d.buffers["x"] = row_values(t, R, D, seed, -1.0, 1.0);
    d.buffers["w"] = row_values(t, 1, D, seed + 1, 0.5, 1.5);
    if (row_flag(p, "residual", "rmsnorm")) d.buffers["res"] = row_values(t, R, D, seed + 2, -1.0, 1.0);
    if (row_flag(p, "gated", "rmsnorm")) d.buffers["z"] = row_values(t, R, D, seed + 3, -6.0, 6.0);
    return d;
  };
  s.oracle = [](DType t, const Params& p, const harness::HostData& d) {
    const bool residual = row_flag(p, "residual", "rmsnorm");
    const bool gated = row_flag(p, "gated", "rmsnorm");
    const auto D = static_cast<std::size_t>(param(p, "D"));
    const double eps = harness::scalar_value(d, "eps", "rmsnorm");
    const auto& x = harness::buffer_values(d, "x", "rmsnorm");
    const auto& w = harness::buffer_values(d, "w", "rmsnorm");
    std::vector<double> h = x;
    if (residual) {
      const auto& res = harness::buffer_values(d, "res", "rmsnorm");
      for (std::size_t i = 0; i < h.size(); ++i) h[i] = round_to(t, x[i] + res[i]);
    }
    std::vector<double> y(h.size());
    for (std::size_t r = 0; r * D < h.size(); ++r) {
      double squares = 0;
      for (std::size_t c = 0; c < D; ++c) squares += h[r * D + c] * h[r * D + c];
      const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(D) + eps);
      for (std::size_t c = 0; c < D; ++c) {
        const std::size_t i = r * D + c;
        y[i] = h[i] * rstd * w[c];
        if (gated) {
          const double z = harness::buffer_values(d, "z", "rmsnorm")[i];
          y[i] *= z / (1.0 + std::exp(-z));
        }
      }
    }
    std::map<std::string, std::vector<double>> out{{"y", y}};
    if (residual) out["h"] = h;
    return out;
  };
  // Products of the row's values and its statistics: no cancellation, so the relative term holds; the absolute term is
  // for 16-bit subnormal outputs.
  s.tolerance = [](DType t, const Params&) { return row_tolerance(t, 1e-6); };
  s.bytes = [](DType t, const Params& p) {
    const double n = static_cast<double>(param(p, "R")) * static_cast<double>(param(p, "D"));
    const double streams = 2.0 + 2.0 * row_flag(p, "residual", "rmsnorm") + row_flag(p, "gated", "rmsnorm");
    return static_cast<double>(dtype_size(t)) * (streams * n + static_cast<double>(param(p, "D")));
  };
  // Per element: the square and its sum, two products (rstd, w); the residual's add; the gate's SiLU and product.
  s.flops = [](const Params& p) {
    const double n = static_cast<double>(param(p, "R")) * static_cast<double>(param(p, "D"));
    return n * (4.0 + row_flag(p, "residual", "rmsnorm") + 5.0 * row_flag(p, "gated", "rmsnorm"));
  };
  r.add(std::move(s));
}

}  // namespace ingot::kernels
