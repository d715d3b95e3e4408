// The correctness harness.
#include "ingot/harness/harness.hpp"

#include <chrono>
#include <cmath>
#include <optional>
#include <sstream>
#include <tuple>

#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/interp.hpp"
#include "ingot/scalar_eval.hpp"

namespace ingot::harness {

namespace {

std::uint64_t mix(std::uint64_t seed, const std::string& s) {
  std::uint64_t h = seed ^ 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string fmt(double v) {
  if (std::isnan(v)) return "nan (unwritten or NaN)";
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

}  // namespace

std::int64_t compare(const std::vector<double>& want, const std::vector<double>& got, Tolerance tol, std::string* why) {
  if (want.size() != got.size()) {
    *why = "expected " + std::to_string(want.size()) + " values, got " + std::to_string(got.size());
    return 0;
  }
  std::int64_t first = -1;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double a = want[i];
    const double b = got[i];
    bool ok = false;
    if (std::isnan(a) || std::isnan(b)) {
      ok = std::isnan(a) && std::isnan(b);
    } else if (std::isinf(a) || std::isinf(b)) {
      ok = a == b;
    } else {
      ok = std::fabs(a - b) <= tol.abs + tol.rel * std::fabs(a);
    }
    if (!ok) {
      if (first < 0) first = static_cast<std::int64_t>(i);
      ++bad;
    }
  }
  if (first >= 0) {
    *why = "first bad index " + std::to_string(first) + " of " + std::to_string(want.size()) + ": expected " +
           fmt(want[first]) + ", got " + fmt(got[first]) + " (" + std::to_string(bad) +
           " elements differ; tolerance abs " + fmt(tol.abs) + " rel " + fmt(tol.rel) + ")";
  }
  return first;
}

namespace {

// What every backend of one (kernel, dtype, case) shares: traced once, inputs drawn once.
struct Prepared {
  ir::Kernel kernel;
  HostData inputs;
  std::string error;  // tracing or input generation failed: every backend reports it
};

Prepared prepare(const KernelSpec& spec, DType t, const TestCase& c, std::uint64_t seed) {
  Prepared p;
  try {
    p.kernel = passes::optimize(spec.build(t, c.params));
    p.inputs = spec.inputs(t, c.params, mix(seed, spec.name + c.name + std::string(dtype_name(t))));
  } catch (const std::exception& e) {
    p.error = e.what();
  }
  return p;
}

CaseResult run_prepared(const KernelSpec& spec, DType t, const TestCase& c, const BackendSlot& be,
                        const Prepared& prep) {
  CaseResult r;
  r.kernel = spec.name;
  r.dtype = t;
  r.case_name = c.name;
  r.params = format_params(c.params);
  r.backend = be.name;
  const auto t0 = std::chrono::steady_clock::now();
  auto finish = [&](Status s, std::string msg) {
    r.status = s;
    r.message = std::move(msg);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  if (!prep.error.empty()) return finish(Status::Fail, prep.error);
  try {
    const ir::Kernel& k = prep.kernel;
    if (!be.backend) {
      if (be.compile_only) {
        be.compile_only(k);
        return finish(Status::Skip, be.why_absent);
      }
      return finish(Status::Skip, be.why_absent);
    }
    if (be.skip_reason) {
      if (std::string why = be.skip_reason(k); !why.empty()) return finish(Status::Skip, why);
    }
    const HostData& in = prep.inputs;
    runtime::Backend& dev = *be.backend;
    std::vector<runtime::Arg> args(k.params.size());
    for (std::size_t i = 0; i < k.params.size(); ++i) {
      const ir::Param& p = k.params[i];
      if (ir::is_buffer(p.kind)) {
        args[i] = runtime::BufferPtr{};
        continue;
      }
      auto it = in.scalars.find(p.name);
      if (it == in.scalars.end())
        return finish(Status::Fail, "the case's inputs give no value for scalar '" + p.name + "'");
      args[i] = runtime::ScalarArg{p.type, ir::bits_of_double(p.type, it->second)};
    }
    std::vector<std::string> outputs;
    for (std::size_t i = 0; i < k.params.size(); ++i) {
      const ir::Param& p = k.params[i];
      if (!ir::is_buffer(p.kind)) continue;
      const std::uint64_t need = runtime::required_extent(k, i, args);
      if (p.kind == ir::ParamKind::Out) {
        auto buf = dev.allocate(p.type, need);
        const auto poison = runtime::poison_bytes(p.type, need);  // poisoned before every launch
        dev.upload(*buf, poison.data(), poison.size());
        args[i] = buf;
        outputs.push_back(p.name);
      } else {
        auto it = in.buffers.find(p.name);
        if (it == in.buffers.end())
          return finish(Status::Fail, "the case's inputs give no data for buffer '" + p.name + "'");
        args[i] = runtime::make_buffer(dev, p.type, it->second);
        if (p.kind == ir::ParamKind::InOut) outputs.push_back(p.name);
      }
    }
    dev.launch(k, spec.geometry(t, c.params), args);
    const auto want = spec.oracle(t, c.params, in);
    const Tolerance tol = spec.tolerance(t, c.params);
    for (std::size_t i = 0; i < k.params.size(); ++i) {
      const ir::Param& p = k.params[i];
      if (p.kind != ir::ParamKind::Out && p.kind != ir::ParamKind::InOut) continue;
      auto w = want.find(p.name);
      if (w == want.end()) return finish(Status::Fail, "the oracle gives no values for output '" + p.name + "'");
      const auto got = runtime::read_buffer(dev, *std::get<runtime::BufferPtr>(args[i]));
      std::string why;
      if (compare(w->second, got, tol, &why) >= 0) return finish(Status::Fail, "output '" + p.name + "': " + why);
    }
    return finish(Status::Pass, "");
  } catch (const std::exception& e) {
    return finish(Status::Fail, e.what());
  }
}

}  // namespace

CaseResult run_case(const KernelSpec& spec, DType t, const TestCase& c, const BackendSlot& be, std::uint64_t seed) {
  return run_prepared(spec, t, c, be, prepare(spec, t, c, seed));
}

HarnessReport run_harness(const Registry& reg, const std::vector<BackendSlot>& backends,
                          const HarnessOptions& options) {
  struct Job {
    const KernelSpec* spec;
    DType t;
    const TestCase* c;
    const BackendSlot* be;
  };
  std::vector<Job> jobs;
  for (const auto& spec : reg.kernels()) {
    if (!spec.matches(options.filter)) {
      continue;
    }
    for (DType t : spec.dtypes) {
      if (options.dtype && *options.dtype != t) continue;
      for (const auto& c : spec.tests) {
        if (!options.all_variants && !spec.default_case(c.params)) continue;
        for (const auto& be : backends) jobs.push_back({&spec, t, &c, &be});
      }
    }
  }
  HarnessReport rep;
  std::optional<Prepared> prepared;
  std::tuple<const KernelSpec*, DType, const TestCase*> prepared_for{};
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const Job& job = jobs[j];
    const std::string label =
        job.spec->name + " " + std::string(dtype_name(job.t)) + " " + job.c->name + " @" + job.be->name;
    if (options.on_progress) options.on_progress(j, jobs.size(), label);
    if (!prepared || prepared_for != std::tuple(job.spec, job.t, job.c)) {  // backends are the inner loop
      prepared = prepare(*job.spec, job.t, *job.c, options.seed);
      prepared_for = std::tuple(job.spec, job.t, job.c);
    }
    CaseResult r = run_prepared(*job.spec, job.t, *job.c, *job.be, *prepared);
    auto& counts = rep.per_backend[r.backend];
    switch (r.status) {
      case Status::Pass:
        ++rep.passed;
        ++counts[0];
        break;
      case Status::Fail:
        ++rep.failed;
        ++counts[1];
        break;
      case Status::Skip:
        ++rep.skipped;
        ++counts[2];
        ++rep.skip_reasons[r.backend + ": " + r.message];
        break;
    }
    const bool stop = options.fail_fast && r.status == Status::Fail;
    rep.results.push_back(std::move(r));
    if (stop) break;
  }
  if (options.on_progress) options.on_progress(jobs.size(), jobs.size(), "done");
  return rep;
}

}  // namespace ingot::harness
