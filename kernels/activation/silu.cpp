// The registration of SiLU (silu.hpp): its cases, inputs, f64 oracle, tolerance and bench arithmetic.
#include "activation/silu.hpp"

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

harness::Params elements(std::int64_t n) { return {{"n", n}}; }
harness::Params wide(harness::Params p) {
  p["i64"] = 1;
  return p;
}

}  // namespace

void register_silu(harness::Registry& r) {
  using harness::param;
  harness::KernelSpec s;
  s.name = "silu";
  s.family = "activation";
  s.description = "SiLU: y[n] = x[n] * sigmoid(x[n]), computed in f32";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.runtime_params = {"n"};  // one variant per dtype and index width
  s.add_option(index_width_option());
  s.value_names["i64"] = {"u32index", "i64index"};
  s.scalar_params = {{"n", "n"}};
  s.tests = {
      {"n1", elements(1)},             // a single element: 255 tail threads
      {"n300_tail", elements(300)},    // a whole work-group and 44 of the next
      {"n4099_tail", elements(4099)},  // many groups, 3 past the last whole one
      {"n4099_tail_i64", wide(elements(4099))},
  };
  s.bench = {{"n_64M", elements(std::int64_t{1} << 26)}};  // 8192 tokens x 8192 features
  s.build = [](DType t, const harness::Params& p) {
    const auto n = static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "n"), 1));
    const bool i64_index = wide_index_param(p, n, "silu");
    if (i64_index) {
      check_i64_elements("silu", 1, n);
      return trace_typed(t, "silu_i64", p,
                         [](auto tag, KernelBuilder& k) { silu<typename decltype(tag)::type, i64>(k); });
    }
    check_u32_elements("silu", 1, n);
    return trace_typed(t, "silu", p, [](auto tag, KernelBuilder& k) { silu<typename decltype(tag)::type>(k); });
  };
  s.geometry = [](DType, const harness::Params& p) {
    return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "n")), 256);
  };
  s.shapes = [](DType, const harness::Params& p) {
    const auto n = static_cast<std::uint64_t>(param(p, "n"));
    return std::map<std::string, std::vector<std::uint64_t>>{{"x", {n}}, {"y", {n}}};
  };
  // Inputs in [-8, 8]: both tails of the sigmoid and its middle.
  s.inputs = [](DType t, const harness::Params& p, std::uint64_t seed) {
    harness::HostData d;
    d.scalars["n"] = static_cast<double>(param(p, "n"));
    d.buffers["x"] = random_values(t, static_cast<std::size_t>(param(p, "n")), seed, -8.0, 8.0);
    return d;
  };
  s.oracle = [](DType, const harness::Params&, const harness::HostData& d) {
    std::vector<double> y;
    for (double v : harness::buffer_values(d, "x", "silu")) y.push_back(v / (1.0 + std::exp(-v)));
    return std::map<std::string, std::vector<double>>{{"y", y}};
  };
  // f32: a few ulp of exp and the division; 16-bit: the output's rounding (half an ulp, with room for one).
  s.tolerance = [](DType t, const harness::Params&) {
    switch (t) {
      case DType::f16: return harness::Tolerance{1e-6, 1e-3};
      case DType::bf16: return harness::Tolerance{1e-6, 8e-3};
      default: return harness::Tolerance{1e-7, 4e-6};
    }
  };
  s.bytes = [](DType t, const harness::Params& p) {
    return 2.0 * static_cast<double>(dtype_size(t)) * static_cast<double>(param(p, "n"));
  };
  s.flops = [](const harness::Params& p) { return 4.0 * static_cast<double>(param(p, "n")); };
  r.add(std::move(s));
}

}  // namespace ingot::kernels
