// `ingot prove`: every selected (kernel, dtype, case) through passes::prove.
#include "prove.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "ingot/passes/pipeline.hpp"
#include "ingot/passes/prove.hpp"
#include "ingot/runtime/cache.hpp"
#include "ingot/runtime/interp.hpp"
#include "ingot/scalar_eval.hpp"
#include "tools.hpp"

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

// ------------------------------------------------------------------ the result cache
// A proof's result is determined by the kernel's IR as the prover sees it (the fingerprint of the optimized kernel,
// which covers its parameters, extents, preconditions and statements), the options of the proof (launch geometry,
// fixed scalars, overflow checking, solver timeout) and the prover itself (passes::kProverVersion). The entries live
// in runtime::DiskCache's folder (INGOT_CACHE_DIR, ...) under prove/, in its format: the whole key is stored in the
// entry and compared on load, and a checksum covers key and payload, so an entry of another key, a truncated or a
// corrupt one is a miss (the case is proved again and the entry rewritten), never a result taken on trust. (The
// fingerprint is a 128-bit digest of the IR: two kernels share an entry only if their digests collide.)
//
// Only proved results are stored. A proof is a fact about its key that no later run can change, so replaying it from
// disk loses nothing; a result not proved is not: its witness, its detail and --replay must come from the prover that
// runs now (a fixed prover bug must not be hidden behind a stored refutation), and an "unknown" that a solver timeout
// gave may be proved by the next run on a less loaded machine.
struct CachedProof {
  std::size_t obligations = 0, by_intervals = 0, smt_queries = 0;
  double seconds = 0;  // how long the proof took when it ran
};

class ProofCache {
 public:
  explicit ProofCache(bool enabled) : enabled_(enabled), disk_(runtime::DiskCache::default_dir() / "prove") {}

  [[nodiscard]] static runtime::CacheKey key(const ir::Kernel& k, const passes::ProveOptions& o) {
    std::string opt = "group_size=" + std::to_string(o.group_size[0]) + "," + std::to_string(o.group_size[1]) + "," +
                      std::to_string(o.group_size[2]) + " groups=";
    opt += o.groups ? std::to_string((*o.groups)[0]) + "," + std::to_string((*o.groups)[1]) + "," +
                          std::to_string((*o.groups)[2])
                    : std::string("any");
    opt += " check_overflow=" + std::to_string(o.check_overflow ? 1 : 0) +
           " smt_timeout_ms=" + std::to_string(o.smt_timeout_ms) + " scalars=";
    // Length-prefixed like CacheKey::text, so that no scalar name can make two option sets print alike.
    for (const auto& [name, bits] : o.scalars)
      opt += std::to_string(name.size()) + ":" + name + "=" + std::to_string(bits) + ";";
    return {ir::fingerprint(k), std::string("prove-") + passes::kProverVersion, opt};
  }

  [[nodiscard]] std::optional<CachedProof> get(const runtime::CacheKey& key) const {
    if (!enabled_) return std::nullopt;
    const auto data = disk_.get(key);
    if (!data) return std::nullopt;
    std::istringstream in(std::string(data->begin(), data->end()));
    std::string status, f1, f2, f3, f4, rest;
    CachedProof c;
    // A payload this prover did not write (or cannot read) is a miss like a corrupt entry.
    if (!(in >> status >> f1 >> c.obligations >> f2 >> c.by_intervals >> f3 >> c.smt_queries >> f4 >> c.seconds) ||
        (in >> rest) || status != "proved" || f1 != "obligations" || f2 != "by_intervals" || f3 != "smt_queries" ||
        f4 != "seconds" || c.by_intervals > c.obligations || !std::isfinite(c.seconds) || c.seconds < 0) {
      return std::nullopt;
    }
    return c;
  }

  // Stores a proved result (a failure to write is no error: the cache only saves time).
  void put(const runtime::CacheKey& key, const passes::ProofReport& r, double seconds) const {
    if (!enabled_ || !r.proved()) return;
    char buf[160];
    std::snprintf(buf, sizeof buf, "proved obligations %zu by_intervals %zu smt_queries %zu seconds %.6f\n",
                  r.obligations, r.by_intervals, r.smt_queries, seconds);
    const std::string text = buf;
    (void)disk_.put(key, std::vector<std::uint8_t>(text.begin(), text.end()));
  }

 private:
  bool enabled_;
  runtime::DiskCache disk_;
};

// ------------------------------------------------------------------ --json
using nlohmann::json;

json axes(const std::array<std::uint32_t, 3>& v) { return json::array({v[0], v[1], v[2]}); }

// A witness with its scalars as values of their parameters' types (integers exact, floats as numbers).
json witness_json(const ir::Kernel& k, const passes::Witness& w) {
  json scalars = json::object();
  for (const auto& [name, bits] : w.scalars) {
    const auto it = std::find_if(k.params.begin(), k.params.end(), [&](const ir::Param& q) { return q.name == name; });
    if (it == k.params.end() || !(is_integer(it->type) || it->type == DType::boolean)) {
      scalars[name] = it == k.params.end() ? json(bits) : json(ir::double_of_bits(it->type, bits));
    } else {
      scalars[name] = ir::int_of_bits(it->type, bits);
    }
  }
  return {{"groups", axes(w.groups)},
          {"group_id", axes(w.group_id)},
          {"local_id", axes(w.local_id)},
          {"scalars", scalars},
          {"index", w.index},
          {"extent", w.extent}};
}

json issue_json(const ir::Kernel& k, const passes::ProofIssue& is) {
  return {{"kind", passes::obligation_name(is.kind)},
          {"status", is.status == passes::ProofStatus::Refuted ? "refuted" : "unknown"},
          {"loc", is.loc},
          {"statement", is.stmt},
          {"buffer", is.buffer},
          {"expression", is.expr},
          {"detail", is.detail},
          {"witness", is.witness ? witness_json(k, *is.witness) : json(nullptr)}};
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
  // Refused before anything is proved (a whole-library run is minutes of work to lose at the end).
  if (!a.json_path.empty()) require_writable_file(a.json_path, "--json");
  if (!passes::prover_available()) {
    throw std::runtime_error(
        "this ingot was built without Z3 (the proof pass's solver): install libz3-dev (Debian) and configure again");
  }
  const ProofCache cache(!a.no_cache);
  const auto t_all = std::chrono::steady_clock::now();
  // Every selected (kernel, dtype, case), in the order they are reported.
  struct Job {
    const harness::KernelSpec* spec;
    DType t;
    const harness::TestCase* c;
    harness::Params p;
  };
  std::vector<Job> jobs;
  for (const auto& spec : reg.kernels()) {
    if (!a.kernel.empty() && spec.name != a.kernel) continue;
    for (const DType t : spec.dtypes) {
      if (only && *only != t) continue;
      for (const auto& c : spec.tests) {
        if (!a.all_variants && !spec.default_case(c.params)) continue;
        jobs.push_back({&spec, t, &c, spec.with_overrides(c.params, overrides)});
      }
    }
  }
  // What one proof gives: computed by any worker, reported by this thread in the jobs' order.
  struct Outcome {
    std::string error;
    passes::ProofReport r;
    std::optional<CachedProof> hit;
    json issues = json::array();
    std::string replayed;  // --replay's report where the case is not proved
    double seconds = 0;
  };
  const auto run_job = [&](const Job& j) {
    Outcome o;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const ir::Kernel k = passes::optimize(j.spec->build(j.t, j.p));
      const passes::ProveOptions po = case_options(*j.spec, k, j.t, j.p);
      const runtime::CacheKey key = ProofCache::key(k, po);
      o.hit = cache.get(key);
      if (o.hit) {
        o.r.obligations = o.hit->obligations;
        o.r.by_intervals = o.hit->by_intervals;
        o.r.smt_queries = o.hit->smt_queries;
      } else {
        o.r = passes::prove(k, po);
        for (const auto& is : o.r.issues) o.issues.push_back(issue_json(k, is));
        cache.put(key, o.r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (a.replay && !o.r.proved()) o.replayed = replay(*j.spec, k, j.t, j.p);
      }
    } catch (const std::exception& e) {
      o.error = e.what();
    }
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return o;
  };
  // Proofs are independent (each its own Z3 context and trace), so `jobs` workers take them in turn; the report
  // stays in order and streams as the next case in order completes.
  std::vector<std::optional<Outcome>> done(jobs.size());
  std::mutex m;
  std::condition_variable ready;
  std::atomic<std::size_t> next{0};
  const std::size_t workers = std::max<std::size_t>(1, std::min<std::size_t>(a.jobs, jobs.size()));
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < workers; ++w) {
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < jobs.size(); i = next++) {
        Outcome o = run_job(jobs[i]);
        const std::lock_guard<std::mutex> lock(m);
        done[i] = std::move(o);
        ready.notify_all();
      }
    });
  }
  std::size_t proved = 0, failed = 0, obligations = 0, queries = 0, queries_run = 0, from_cache = 0;
  json results = json::array();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    Outcome o;
    {
      std::unique_lock<std::mutex> lock(m);
      ready.wait(lock, [&] { return done[i].has_value(); });
      o = std::move(*done[i]);
      done[i].reset();
    }
    const Job& j = jobs[i];
    const std::string label = j.spec->name + " " + std::string(dtype_name(j.t)) + " " + j.c->name;
    const passes::ProofReport& r = o.r;
    obligations += r.obligations;
    queries += r.smt_queries;
    if (!o.hit) queries_run += r.smt_queries;
    json row = {{"kernel", j.spec->name},
                {"dtype", dtype_name(j.t)},
                {"case", j.c->name},
                {"status", !o.error.empty() ? "error"
                           : r.proved()     ? "proved"
                                            : "not proved"},
                {"obligations", r.obligations},
                {"by_intervals", r.by_intervals},
                {"smt_queries", r.smt_queries},
                {"seconds", o.seconds},
                {"cached", o.hit.has_value()},
                {"issues", std::move(o.issues)}};
    if (o.hit) row["proved_in_seconds"] = o.hit->seconds;
    if (!o.error.empty()) row["error"] = o.error;
    if (o.error.empty() && r.proved()) {
      ++proved;
      if (o.hit) {
        ++from_cache;
        std::printf(
            "proved      %s (%zu obligations: %zu by intervals, %zu solver queries; cached, proved in %.2f s)\n",
            label.c_str(), r.obligations, r.by_intervals, r.smt_queries, o.hit->seconds);
      } else {
        std::printf("proved      %s (%zu obligations: %zu by intervals, %zu solver queries; %.2f s)\n", label.c_str(),
                    r.obligations, r.by_intervals, r.smt_queries, o.seconds);
      }
    } else {
      ++failed;
      std::printf("NOT PROVED  %s (%.2f s)\n", label.c_str(), o.seconds);
      if (!o.error.empty()) std::printf("  error: %s\n", o.error.c_str());
      for (const auto& is : r.issues) std::printf("  %s\n", passes::describe(is).c_str());
      if (a.replay && o.error.empty()) {
        std::printf("  replay on the interpreter: %s\n",
                    o.replayed.empty() ? "ran clean (the witness is spurious: a prover bug)" : o.replayed.c_str());
        row["replay"] = o.replayed;
      }
    }
    results.push_back(std::move(row));
    std::fflush(stdout);
  }
  for (auto& t : pool) t.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count();
  // The obligations and queries are those of the proofs, cached ones included; the queries run now are this run's.
  std::printf(
      "%zu proved (%zu from the cache), %zu not proved (%zu obligations, %zu solver queries, %zu run now; %.1f s)\n",
      proved, from_cache, failed, obligations, queries, queries_run, s);
  if (!a.json_path.empty()) {
    const json j = {{"prover_version", passes::kProverVersion},
                    {"proved", proved},
                    {"not_proved", failed},
                    {"from_cache", from_cache},
                    {"obligations", obligations},
                    {"smt_queries", queries},
                    {"smt_queries_run", queries_run},
                    {"seconds", s},
                    {"results", std::move(results)}};
    write_file(a.json_path, j.dump(2) + "\n");
  }
  if (proved + failed == 0) {
    std::printf("nothing selected\n");
    return 1;
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace ingot::tools
