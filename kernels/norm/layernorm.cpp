// The registration of LayerNorm (layernorm.hpp): its cases, inputs, f64 oracle, tolerance and bench arithmetic.
#include "norm/layernorm.hpp"

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
  bool bias = false, residual = false;
};

Params shape(std::int64_t R, std::int64_t D, Flags f = {}) {
  return {{"R", R}, {"D", D}, {"bias", f.bias}, {"residual", f.residual}, {"eps_nano", kDefaultEpsNano}};
}
Params with(Params p, const std::string& key, std::int64_t v) {
  p[key] = v;
  return p;
}

LayerNormSpec spec_of(DType t, const Params& p) {
  return LayerNormSpec{row_plan(p, static_cast<std::uint32_t>(dtype_size(t)), "layernorm"),
                       row_flag(p, "bias", "layernorm"), row_flag(p, "residual", "layernorm")};
}

// The offset of odd rows: their mean is about 500 times their spread, where E[x^2] - E[x]^2 in f32 would keep almost no
// digit of the variance (E[x^2] ~ 9e4, its ulp ~ 8e-3, against a variance of 1/3).
constexpr double kRowOffset = 300.0;

}  // namespace

void register_layernorm(harness::Registry& r) {
  harness::KernelSpec s;
  s.name = "layernorm";
  s.family = "norm";
  s.description =
      "LayerNorm of rows: y = (x - mean) * rsqrt(var + eps) * w (+ b); residual (h = x + res, y = "
      "norm(h)); f32 sums, two-pass variance";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  declare_row_params(s, {"bias", "residual"});
  const Flags bias{true, false}, res{false, true}, both{true, true};
  s.tests = {
      {"R1_D1", shape(1, 1, bias)},                // var = 0: y = b
      {"R3_D7", shape(3, 7)},                      // odd width: scalar accesses; row 1 offset
      {"R37_D36_bias", shape(37, 36, bias)},       // 4 rows per group, the last group's 3 tail rows
      {"R3_D129_residual", shape(3, 129, res)},    // 129 = 1 past a group of 128 vectors
      {"R2_D1000_both", shape(2, 1000, both)},     // vectors of 8 (16-bit) or 4, ragged last vector
      {"R1_D4099_bias", shape(1, 4099, bias)},     // 1024 threads, a ragged fifth value
      {"R3_D4099_residual", shape(3, 4099, res)},  //
      {"R3_D4096_both", shape(3, 4096, both)},     // the bench width
      {"R2_D65536_bias", shape(2, 65536, bias)},   // the widest row: 64 values per thread; row 1 offset
      // Tuning options (ingot test --all-variants): 3 warps per row, 2 rows per group, scalar accesses.
      {"R3_D4099_threads96", with(shape(3, 4099, both), "threads", 96)},
      {"R5_D1000_rows2", with(with(shape(5, 1000, bias), "rows", 2), "threads", 64)},
      {"R3_D128_vec1", with(shape(3, 128, both), "vec", 1)},
  };
  // A 7B-class decoder (hidden 4096) at 1, 64 and 256 tokens per step, and a prefill-sized 8192 that is memory-bound.
  for (const std::int64_t R : {1, 64, 256, 8192}) {
    const std::string name = "R" + std::to_string(R) + "_D4096";
    s.bench.push_back({name, shape(R, 4096)});
    if (R >= 256) {
      s.bench.push_back({name + "_bias", shape(R, 4096, bias)});
      s.bench.push_back({name + "_bias_residual", shape(R, 4096, both)});
    }
  }
  s.build = [](DType t, const Params& p) {
    const LayerNormSpec sp = spec_of(t, p);
    return trace_typed(t, "layernorm", p,
                       [&](auto tag, KernelBuilder& k) { layernorm<typename decltype(tag)::type>(k, sp); });
  };
  s.geometry = [](DType t, const Params& p) { return spec_of(t, p).plan.geometry(row_count(p, "layernorm")); };
  s.shapes = [](DType, const Params& p) {
    const auto R = static_cast<std::uint64_t>(param(p, "R"));
    const auto D = static_cast<std::uint64_t>(param(p, "D"));
    std::map<std::string, std::vector<std::uint64_t>> m{{"x", {R, D}}, {"w", {D}}, {"y", {R, D}}};
    if (row_flag(p, "bias", "layernorm")) m["b"] = {D};
    if (row_flag(p, "residual", "layernorm")) m["res"] = m["h"] = {R, D};
    return m;
  };
  // x in [-1, 1], odd rows shifted by kRowOffset; res in [-1, 1]; w in [0.5, 1.5]; b in [-1, 1].
  s.inputs = [](DType t, const Params& p, std::uint64_t seed) {
    const std::uint64_t R = row_count(p, "layernorm");
    const auto D = static_cast<std::uint64_t>(param(p, "D"));
    harness::HostData d;
    d.scalars["R"] = static_cast<double>(R);
    d.scalars["eps"] = row_eps(p);
    d.buffers["x"] = row_values(t, R, D, seed, -1.0, 1.0, kRowOffset);
    d.buffers["w"] = row_values(t, 1, D, seed + 1, 0.5, 1.5);
    if (row_flag(p, "bias", "layernorm")) d.buffers["b"] = row_values(t, 1, D, seed + 2, -1.0, 1.0);
    if (row_flag(p, "residual", "layernorm")) d.buffers["res"] = row_values(t, R, D, seed + 3, -1.0, 1.0);
    return d;
  };
  s.oracle = [](DType t, const Params& p, const harness::HostData& d) {
    const bool bias = row_flag(p, "bias", "layernorm");
    const bool residual = row_flag(p, "residual", "layernorm");
    const auto D = static_cast<std::size_t>(param(p, "D"));
    const double eps = harness::scalar_value(d, "eps", "layernorm");
    const auto& x = harness::buffer_values(d, "x", "layernorm");
    const auto& w = harness::buffer_values(d, "w", "layernorm");
    std::vector<double> h = x;
    if (residual) {
      const auto& res = harness::buffer_values(d, "res", "layernorm");
      for (std::size_t i = 0; i < h.size(); ++i) h[i] = round_to(t, x[i] + res[i]);
    }
    std::vector<double> y(h.size());
    for (std::size_t r = 0; r * D < h.size(); ++r) {
      double sum = 0;
      for (std::size_t c = 0; c < D; ++c) sum += h[r * D + c];
      const double mean = sum / static_cast<double>(D);
      double squares = 0;
      for (std::size_t c = 0; c < D; ++c) squares += (h[r * D + c] - mean) * (h[r * D + c] - mean);
      const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(D) + eps);
      for (std::size_t c = 0; c < D; ++c) {
        const std::size_t i = r * D + c;
        y[i] = (h[i] - mean) * rstd * w[c] + (bias ? harness::buffer_values(d, "b", "layernorm")[c] : 0.0);
      }
    }
    std::map<std::string, std::vector<double>> out{{"y", y}};
    if (residual) out["h"] = h;
    return out;
  };
  // (x - mean) * rstd * w is a product with a relative error (row_tolerance); adding b can cancel it, so the absolute
  // term is that relative error on the largest such product (|x - mean| * rstd <= sqrt(D), w < 1.5 on these inputs;
  // in practice a few units).
  s.tolerance = [](DType t, const Params&) { return row_tolerance(t, 1e-4); };
  s.bytes = [](DType t, const Params& p) {
    const double n = static_cast<double>(param(p, "R")) * static_cast<double>(param(p, "D"));
    const double streams = 2.0 + 2.0 * row_flag(p, "residual", "layernorm");
    const double columns = (1.0 + row_flag(p, "bias", "layernorm")) * static_cast<double>(param(p, "D"));
    return static_cast<double>(dtype_size(t)) * (streams * n + columns);
  };
  // Per element: the shift and its sum, the centring, its square and sum, two products (rstd, w); bias and residual
  // add one each.
  s.flops = [](const Params& p) {
    const double n = static_cast<double>(param(p, "R")) * static_cast<double>(param(p, "D"));
    return n * (6.0 + row_flag(p, "bias", "layernorm") + row_flag(p, "residual", "layernorm"));
  };
  r.add(std::move(s));
}

}  // namespace ingot::kernels
