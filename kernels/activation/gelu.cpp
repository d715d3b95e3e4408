// The registration of GELU and the gated activations (gelu.hpp): their cases, inputs, f64 oracles, tolerances and
// bench arithmetic.
#include "activation/gelu.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "activation/register.hpp"
#include "support/inputs.hpp"
#include "support/trace.hpp"

namespace ingot::kernels {

namespace {

using harness::param;
using harness::Params;

double gelu_exact(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }
double gelu_tanh(double v) { return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))); }

// f32: a few ulp of erf, tanh or exp and the products; 16-bit: the output's rounding (half an ulp, room for one).
harness::Tolerance activation_tolerance(DType t) {
  switch (t) {
    case DType::f16: return {1e-6, 1e-3};
    case DType::bf16: return {1e-6, 8e-3};
    default: return {1e-6, 1e-5};
  }
}

}  // namespace

void register_gelu(harness::Registry& r) {
  harness::KernelSpec s;
  s.name = "gelu";
  s.family = "activation";
  s.description = "GELU: y[n] = x[n] * Phi(x[n]) (approx 0: erf, exact; 1: the tanh approximation), in f32";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.spec_params = {"approx"};
  s.value_names["approx"] = {"erf", "tanh"};
  s.runtime_params = {"n"};
  s.scalar_params = {{"n", "n"}};
  const auto c = [](std::int64_t n, std::int64_t approx) { return Params{{"n", n}, {"approx", approx}}; };
  s.tests = {
      {"n1", c(1, 0)},      {"n300_tail", c(300, 0)},        {"n4099_tail", c(4099, 0)},
      {"n1_tanh", c(1, 1)}, {"n4099_tail_tanh", c(4099, 1)},
  };
  s.bench = {{"n_64M", c(std::int64_t{1} << 26, 0)}, {"n_64M_tanh", c(std::int64_t{1} << 26, 1)}};
  s.build = [](DType t, const Params& p) {
    const auto n = static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "n"), 1));
    check_u32_elements("gelu", 1, n);
    const auto form = static_cast<GeluForm>(bounded_param(p, "approx", 0, 1, 0, "gelu"));
    return trace_typed(t, "gelu", p, [&](auto tag, KernelBuilder& k) { gelu<typename decltype(tag)::type>(k, form); });
  };
  s.geometry = [](DType, const Params& p) { return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "n")), 256); };
  s.shapes = [](DType, const Params& p) {
    const auto n = static_cast<std::uint64_t>(param(p, "n"));
    return std::map<std::string, std::vector<std::uint64_t>>{{"x", {n}}, {"y", {n}}};
  };
  // Inputs in [-8, 8]: both tails and the curved middle.
  s.inputs = [](DType t, const Params& p, std::uint64_t seed) {
    harness::HostData d;
    d.scalars["n"] = static_cast<double>(param(p, "n"));
    d.buffers["x"] = random_values(t, static_cast<std::size_t>(param(p, "n")), seed, -8.0, 8.0);
    return d;
  };
  s.oracle = [](DType, const Params& p, const harness::HostData& d) {
    const bool tanh_form = param(p, "approx") == 1;
    std::vector<double> y;
    for (double v : harness::buffer_values(d, "x", "gelu")) y.push_back(tanh_form ? gelu_tanh(v) : gelu_exact(v));
    return std::map<std::string, std::vector<double>>{{"y", y}};
  };
  s.tolerance = [](DType t, const Params&) { return activation_tolerance(t); };
  s.bytes = [](DType t, const Params& p) {
    return 2.0 * static_cast<double>(dtype_size(t)) * static_cast<double>(param(p, "n"));
  };
  s.flops = [](const Params& p) { return 8.0 * static_cast<double>(param(p, "n")); };
  r.add(std::move(s));
}

void register_glu(harness::Registry& r) {
  harness::KernelSpec s;
  s.name = "glu";
  s.family = "activation";
  s.description =
      "gated activation on a concatenated gate-up tensor gu[rows, 2D]: y[rows, D] = act(gate) * up; act 0 SiLU "
      "(SwiGLU), 1 GELU (GeGLU), 2 GELU-tanh";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.spec_params = {"act"};
  s.value_names["act"] = {"swiglu", "geglu", "geglu_tanh"};
  s.runtime_params = {"rows", "D"};
  s.scalar_params = {{"rows", "rows"}, {"D", "D"}};
  const auto c = [](std::int64_t rows, std::int64_t D, std::int64_t act) {
    return Params{{"rows", rows}, {"D", D}, {"act", act}};
  };
  s.tests = {
      {"rows1_d1", c(1, 1, 0)},
      {"rows3_d7", c(3, 7, 0)},
      {"rows5_d129", c(5, 129, 0)},
      {"rows2_d4099", c(2, 4099, 0)},
      {"rows3_d7_geglu", c(3, 7, 1)},
      {"rows2_d4099_geglu", c(2, 4099, 1)},
      {"rows1_d1_geglu_tanh", c(1, 1, 2)},
      {"rows5_d129_geglu_tanh", c(5, 129, 2)},
  };
  // A 7B-class feed-forward (intermediate 11008) at 256 and 8192 tokens.
  s.bench = {{"rows256_d11008", c(256, 11008, 0)},
             {"rows8192_d11008", c(8192, 11008, 0)},
             {"rows8192_d11008_geglu", c(8192, 11008, 1)}};
  const auto sizes = [](const Params& p) {
    const auto rows = static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "rows"), 1));
    const auto D = static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "D"), 1));
    check_u32_elements("glu", rows, 2 * D);
    return std::pair{rows, D};
  };
  s.build = [sizes](DType t, const Params& p) {
    (void)sizes(p);
    const auto act = static_cast<GluAct>(bounded_param(p, "act", 0, kGluActs - 1, 0, "glu"));
    return trace_typed(t, "glu", p, [&](auto tag, KernelBuilder& k) { glu<typename decltype(tag)::type>(k, act); });
  };
  s.geometry = [sizes](DType, const Params& p) {
    const auto [rows, D] = sizes(p);
    return runtime::grid_1d(rows * D, 256);
  };
  s.shapes = [sizes](DType, const Params& p) {
    const auto [rows, D] = sizes(p);
    return std::map<std::string, std::vector<std::uint64_t>>{{"gu", {rows, 2 * D}}, {"y", {rows, D}}};
  };
  // Gates in [-8, 8] (both tails of the activation), up projections in [-2, 2].
  s.inputs = [sizes](DType t, const Params& p, std::uint64_t seed) {
    const auto [rows, D] = sizes(p);
    harness::HostData d;
    d.scalars["rows"] = static_cast<double>(rows);
    d.scalars["D"] = static_cast<double>(D);
    const auto gates = random_values(t, rows * D, seed, -8.0, 8.0);
    const auto ups = random_values(t, rows * D, seed + 1, -2.0, 2.0);
    std::vector<double> gu(2 * rows * D);
    for (std::uint64_t r = 0; r < rows; ++r) {
      for (std::uint64_t i = 0; i < D; ++i) {
        gu[2 * r * D + i] = gates[r * D + i];
        gu[2 * r * D + D + i] = ups[r * D + i];
      }
    }
    d.buffers["gu"] = gu;
    return d;
  };
  s.oracle = [sizes](DType, const Params& p, const harness::HostData& d) {
    const auto [rows, D] = sizes(p);
    const auto act = param(p, "act");
    const auto& gu = harness::buffer_values(d, "gu", "glu");
    std::vector<double> y(rows * D);
    for (std::uint64_t r = 0; r < rows; ++r) {
      for (std::uint64_t i = 0; i < D; ++i) {
        const double g = gu[2 * r * D + i], u = gu[2 * r * D + D + i];
        const double a = act == 0 ? g / (1.0 + std::exp(-g)) : act == 1 ? gelu_exact(g) : gelu_tanh(g);
        y[r * D + i] = a * u;
      }
    }
    return std::map<std::string, std::vector<double>>{{"y", y}};
  };
  s.tolerance = [](DType t, const Params&) { return activation_tolerance(t); };
  s.bytes = [](DType t, const Params& p) {
    return 3.0 * static_cast<double>(dtype_size(t)) * static_cast<double>(param(p, "rows")) *
           static_cast<double>(param(p, "D"));
  };
  s.flops = [](const Params& p) {
    return 8.0 * static_cast<double>(param(p, "rows")) * static_cast<double>(param(p, "D"));
  };
  r.add(std::move(s));
}

}  // namespace ingot::kernels
