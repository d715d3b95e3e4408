// `ingot prove`: every selected (kernel, dtype, case) through passes::prove.
#include "prove.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "ingot/passes/pipeline.hpp"
#include "ingot/passes/prove.hpp"
#include "ingot/runtime/interp.hpp"
#include "ingot/scalar_eval.hpp"

namespace ingot::tools {

namespace {

harness::Params parse_sets(const std::vector<std::string>& items) {
  harness::Params p;
  for (const auto& s : items) {
    const auto eq = s.find('=');
    std::size_t used = 0;
    long long v = 0;
    if (eq != std::string::npos && eq > 0) {
      try {
        v = std::stoll(s.substr(eq + 1), &used);
      } catch (const std::exception&) {
        used = 0;
      }
    }
    if (eq == std::string::npos || eq == 0 || used == 0 || used != s.size() - eq - 1)
      throw std::invalid_argument("bad --set '" + s + "': write NAME=VALUE with an integer value, e.g. --set B=4");
    p[s.substr(0, eq)] = v;
  }
  return p;
}

// The proof options of a case: its launch, its scalars fixed to the case's values.
passes::ProveOptions case_options(const harness::KernelSpec& spec, const ir::Kernel& k, DType t,
                                  const harness::Params& p) {
  const runtime::LaunchGeometry g = spec.geometry(t, p);
  passes::ProveOptions o;
  o.group_size = g.group_size;
  o.groups = g.groups;
  for (const auto& param : k.params) {
    if (param.kind != ir::ParamKind::Scalar) continue;
    o.scalars[param.name] = ir::bits_of_double(param.type, spec.scalar_value(param.name, p));
  }
  return o;
}

// Runs the case on the checked interpreter, as the harness would (its inputs, outputs poisoned), and returns the
// interpreter's report of the first failing access ("" when the launch ran clean: the witness was spurious).
std::string replay(const harness::KernelSpec& spec, const ir::Kernel& k, DType t, const harness::Params& p) {
  runtime::Interpreter be;
  const harness::HostData in = spec.inputs(t, p, 1);
  std::vector<runtime::Arg> args(k.params.size());
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const ir::Param& q = k.params[i];
    if (!ir::is_buffer(q.kind))
      args[i] = runtime::ScalarArg{q.type, ir::bits_of_double(q.type, spec.scalar_value(q.name, p))};
  }
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const ir::Param& q = k.params[i];
    if (!ir::is_buffer(q.kind)) continue;
    if (q.kind == ir::ParamKind::Out) {
      args[i] = be.allocate(q.type, runtime::required_extent(k, i, args));
    } else {
      args[i] = runtime::make_buffer(be, q.type, harness::buffer_values(in, q.name, spec.name));
    }
  }
  try {
    be.launch(k, spec.geometry(t, p), args);
  } catch (const runtime::LaunchError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

int cmd_prove(const harness::Registry& reg, const ProveArgs& a) {
  const harness::Params overrides = parse_sets(a.sets);
  std::optional<DType> only;
  if (!a.dtype.empty()) {
    only = parse_dtype(a.dtype);
    if (!only) throw std::invalid_argument("unknown dtype '" + a.dtype + "'");
  }
  if (!a.kernel.empty() && !reg.find(a.kernel))
    throw std::invalid_argument("unknown kernel '" + a.kernel + "' (see `ingot list`)");
  if (!passes::prover_available()) {
    throw std::runtime_error(
        "this ingot was built without Z3 (the proof pass's solver): install libz3-dev (Debian) and configure again");
  }
  const auto t_all = std::chrono::steady_clock::now();
  std::size_t proved = 0, failed = 0, obligations = 0, queries = 0;
  for (const auto& spec : reg.kernels()) {
    if (!a.kernel.empty() && spec.name != a.kernel) continue;
    for (const DType t : spec.dtypes) {
      if (only && *only != t) continue;
      for (const auto& c : spec.tests) {
        if (!a.all_variants && !spec.default_case(c.params)) continue;
        const harness::Params p = spec.with_overrides(c.params, overrides);
        const std::string label = spec.name + " " + std::string(dtype_name(t)) + " " + c.name;
        const auto t0 = std::chrono::steady_clock::now();
        std::string error;
        passes::ProofReport r;
        try {
          const ir::Kernel k = passes::optimize(spec.build(t, p));
          r = passes::prove(k, case_options(spec, k, t, p));
        } catch (const std::exception& e) {
          error = e.what();
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        obligations += r.obligations;
        queries += r.smt_queries;
        if (error.empty() && r.proved()) {
          ++proved;
          std::printf("proved      %s (%zu obligations: %zu by intervals, %zu solver queries; %.2f s)\n", label.c_str(),
                      r.obligations, r.by_intervals, r.smt_queries, s);
        } else {
          ++failed;
          std::printf("NOT PROVED  %s (%.2f s)\n", label.c_str(), s);
          if (!error.empty()) std::printf("  error: %s\n", error.c_str());
          for (const auto& is : r.issues) std::printf("  %s\n", passes::describe(is).c_str());
          if (a.replay && error.empty()) {
            const std::string ran = replay(spec, passes::optimize(spec.build(t, p)), t, p);
            std::printf("  replay on the interpreter: %s\n",
                        ran.empty() ? "ran clean (the witness is spurious: a prover bug)" : ran.c_str());
          }
        }
        std::fflush(stdout);
      }
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count();
  std::printf("%zu proved, %zu not proved (%zu obligations, %zu solver queries, %.1f s)\n", proved, failed, obligations,
              queries, s);
  if (proved + failed == 0) {
    std::printf("nothing selected\n");
    return 1;
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace ingot::tools
