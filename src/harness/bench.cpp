// The bench harness: ceilings, timed bench cases, reference merge, baselines and diffs.
#include "ingot/harness/bench.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>

#include "ingot/dsl.hpp"
#include "ingot/harness/harness.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/scalar_eval.hpp"

namespace ingot::harness {

namespace {

using nlohmann::json;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

bool selected(const KernelSpec& k, const std::string& filter) { return k.matches(filter); }

struct Job {
  const KernelSpec* k;
  DType t;
  BenchCase c;  // the registry's case, or a variant of it (BenchOptions::variants)
};

// "KEY=V,KEY=V" (a variant's name suffix).
std::string variant_suffix(const Params& overrides) {
  std::string s;
  for (const auto& [key, v] : overrides) s += (s.empty() ? "" : ",") + key + "=" + std::to_string(v);
  return s;
}

// The (kernel, dtype, case) triples the options select, in registry order.
std::vector<Job> bench_jobs(const Registry& reg, const BenchOptions& options) {
  if (options.variants_only && options.variants.empty()) {
    throw std::invalid_argument("only the variant rows were asked for (--variants-only), but no --variant was given");
  }
  std::optional<std::regex> cases;
  if (!options.cases.empty()) {
    try {
      cases.emplace(options.cases);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("the bench case filter (--cases) '" + options.cases +
                                  "' is not a valid regular expression: " + e.what());
    }
  }
  std::vector<Job> jobs;
  for (const auto& k : reg.kernels()) {
    if (!selected(k, options.filter)) continue;
    for (DType t : k.dtypes) {
      if (options.dtype && *options.dtype != t) continue;
      for (const auto& c : k.bench) {
        if (cases && !std::regex_search(c.name, *cases)) continue;
        if (!options.all_variants && !k.default_case(c.params)) continue;
        if (!options.variants_only) jobs.push_back({&k, t, c});
        for (const Params& v : options.variants) {
          jobs.push_back({&k, t, {c.name + "+" + variant_suffix(v), k.with_overrides(c.params, v)}});
        }
      }
    }
  }
  return jobs;
}

// f32 FMA chains: 8 independent accumulators per thread, 64 unrolled steps per loop trip.
ir::Kernel fma_kernel() {
  return trace("ingot_peak_fma_f32", [](KernelBuilder& k) {
    using namespace ingot::dsl;
    auto trips = k.scalar<u32>("trips");
    auto n = k.scalar<u32>("n");
    auto y = k.out<f32>("y", n);
    auto i = k.program_id(0);
    auto seed = cast<f32>(i % 7u) * 1e-3f;
    std::vector<Var<f32>> acc;
    acc.reserve(8);  // no reallocation: copying a Var would declare a new variable
    for (int j = 0; j < 8; ++j) acc.emplace_back(k, seed + static_cast<float>(j), "acc" + std::to_string(j));
    for_(0u, trips, [&](Val<u32>) {
      for (int s = 0; s < 64; ++s) {
        for (auto& a : acc) a = fma(a.get(), 0.999f, 1e-4f);
      }
    });
    Val<f32> sum = acc[0].get();
    for (int j = 1; j < 8; ++j) sum = sum + acc[j].get();
    if_(i < n, [&] { store(y, i, sum); });
  });
}

// ingot's copy kernel, 16 bytes per thread: the copy ceiling's own kernel, and the same-size copy a
// memory-bound kernel is compared with.
ir::Kernel copy16_kernel() {
  return trace("ingot_copy_u32x4", [](KernelBuilder& k) {
    using namespace ingot::dsl;
    auto n = k.scalar<u32>("n");  // elements, a multiple of 4
    auto x = k.in<u32>("x", n);
    auto y = k.out<u32>("y", n);
    auto i = k.let("i", k.program_id(0) * 4u);
    auto v = load_vec(x, select(i < n, i, 0u), 4);
    if_(i < n, [&] { store_vec(y, i, v); });
  });
}

// copy16_kernel over about `bytes` in total (half read, half written; rounded down to whole
// 16-byte vectors), rotating over `sets` buffer pairs: its median time, the bytes it moved and the
// timer. The source is not uploaded: what it holds does not change a copy's time.
struct CopyTiming {
  double median_s = 0, bytes = 0;
  std::string timer;
};
CopyTiming time_copy16(runtime::Backend& be, double bytes, int sets, const runtime::TimingOptions& timing) {
  const auto n = static_cast<std::uint32_t>(bytes / 2 / 16) * 4;
  const auto k = passes::optimize(copy16_kernel());
  std::vector<std::vector<runtime::Arg>> arg_sets;
  arg_sets.reserve(static_cast<std::size_t>(sets));
  for (int s = 0; s < sets; ++s) {
    arg_sets.push_back({runtime::scalar_arg<std::uint32_t>(n), be.allocate(DType::u32, n), be.allocate(DType::u32, n)});
  }
  const auto t = be.time_launches(k, runtime::grid_1d(n / 4, 256), arg_sets, timing);
  return {median(t.seconds), 2.0 * 4.0 * n, t.timer};
}

}  // namespace

Ceilings measure_ceilings(runtime::Backend& be, double copy_bytes) {
  Ceilings c;
  c.backend = be.name();
  if (be.name() == "interp") {
    c.copy_method = c.fma_method = "not measured: the interpreter is a checker, not a device";
    return c;
  }
  const bool gpu = be.name() == "cuda";
  if (!gpu) copy_bytes = std::min(copy_bytes, 64.0 * (1 << 20));  // CPU OpenCL: keep it short
  const runtime::TimingOptions timing{3, 20};
  if (auto s = be.time_copy(static_cast<std::size_t>(copy_bytes), timing)) {
    c.copy_bytes_per_s = 2 * copy_bytes / *s;
    c.copy_method = "driver device-to-device copy of " + std::to_string(static_cast<long long>(copy_bytes)) + " bytes";
  }
  {  // ingot's own copy kernel: the ceiling is the better of the two
    const CopyTiming t = time_copy16(be, 2 * copy_bytes, 1, timing);
    const double bw = t.bytes / t.median_s;
    if (bw > c.copy_bytes_per_s) {
      c.copy_bytes_per_s = bw;
      c.copy_method = "ingot copy kernel (16 bytes per thread), " + t.timer;
    }
  }
  {
    const std::uint32_t n = gpu ? 1u << 20 : 1u << 14;
    const std::uint32_t trips = gpu ? 32 : 4;
    const auto k = passes::optimize(fma_kernel());
    auto y = be.allocate(DType::f32, n);
    const std::vector<runtime::Arg> args{runtime::scalar_arg<std::uint32_t>(trips),
                                         runtime::scalar_arg<std::uint32_t>(n), y};
    const auto t = be.time_launches(k, runtime::grid_1d(n, 256), {args}, timing);
    c.f32_flops_per_s = 2.0 * 8 * 64 * trips * static_cast<double>(n) / median(t.seconds);
    c.fma_method =
        "ingot kernel: 8 independent f32 FMA chains per thread, " + std::to_string(n) + " threads, " + t.timer;
  }
  return c;
}

void check_bench_options(const Registry& reg, const BenchOptions& options) {
  runtime::check_timing_options(options.timing);
  // Each variant row is traced once here, so a value the kernel refuses is the caller's error before anything runs,
  // not a skipped row at the end of a long bench. (The registered rows are checked by the registry's tests.)
  for (const auto& [k, t, c] : bench_jobs(reg, options)) {
    if (c.name.find('+') == std::string::npos) continue;
    try {
      (void)k->build(t, c.params);
      (void)k->geometry(t, c.params);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--variant " + c.name.substr(c.name.find('+') + 1) + ": " + k->name + " " +
                                  std::string(dtype_name(t)) + " case " + c.name.substr(0, c.name.find('+')) +
                                  " refuses it: " + e.what());
    }
  }
}

std::vector<BenchRow> run_bench(const Registry& reg, runtime::Backend& be, const std::string& backend_name,
                                const Ceilings& ceilings, const BenchOptions& options) {
  runtime::check_timing_options(options.timing);  // a bad option is the caller's error, not every row's skip
  const std::vector<Job> jobs = bench_jobs(reg, options);
  std::vector<BenchRow> rows;
  const auto add = [&](BenchRow r) {
    rows.push_back(std::move(r));
    if (options.on_rows) options.on_rows(rows);
  };
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& [k, t, c] = jobs[j];
    BenchRow r;
    r.kernel = k->name;
    r.dtype = std::string(dtype_name(t));
    r.case_name = c.name;
    r.params = format_params(c.params);
    if (options.on_progress) options.on_progress(j, jobs.size(), r.key());
    try {
      r.bytes = k->bytes ? k->bytes(t, c.params) : 0;
      r.flops = k->flops ? k->flops(c.params) : 0;
      const ir::Kernel kern = passes::optimize(k->build(t, c.params));
      if (options.skip_reason) {
        if (std::string why = options.skip_reason(kern); !why.empty()) {
          r.skipped = why;
          add(r);
          continue;
        }
      }
      // Refuse early (before generating inputs) from the registry's byte count.
      const int est_sets = std::clamp(static_cast<int>(std::ceil(2 * options.cache_bytes / std::max(r.bytes, 1.0))) + 1,
                                      1, options.max_rotation_sets);
      if (r.bytes * est_sets > options.max_bytes) {
        r.skipped = "needs about " + std::to_string(static_cast<long long>(r.bytes * est_sets)) +
                    " bytes of rotating buffers (limit " + std::to_string(static_cast<long long>(options.max_bytes)) +
                    ")";
        add(r);
        continue;
      }
      const HostData in = k->inputs(t, c.params, options.seed);
      // Scalars first, so extents can be evaluated.
      std::vector<runtime::Arg> proto(kern.params.size());
      double set_bytes = 0;
      for (std::size_t i = 0; i < kern.params.size(); ++i) {
        const auto& p = kern.params[i];
        if (ir::is_buffer(p.kind)) {
          proto[i] = runtime::BufferPtr{};
        } else {
          proto[i] = runtime::ScalarArg{p.type, ir::bits_of_double(p.type, scalar_value(in, p.name, k->name))};
        }
      }
      for (std::size_t i = 0; i < kern.params.size(); ++i) {
        if (ir::is_buffer(kern.params[i].kind)) {
          set_bytes += static_cast<double>(runtime::required_extent(kern, i, proto) * dtype_size(kern.params[i].type));
        }
      }
      const int sets = std::clamp(static_cast<int>(std::ceil(2 * options.cache_bytes / std::max(set_bytes, 1.0))) + 1,
                                  1, options.max_rotation_sets);
      r.rotation_sets = sets;
      if (set_bytes * sets > options.max_bytes) {
        r.skipped = "needs " + std::to_string(static_cast<long long>(set_bytes * sets)) + " bytes of buffers (limit " +
                    std::to_string(static_cast<long long>(options.max_bytes)) + ")";
        add(r);
        continue;
      }
      std::vector<std::vector<runtime::Arg>> arg_sets(static_cast<std::size_t>(sets), proto);
      for (std::size_t i = 0; i < kern.params.size(); ++i) {
        const auto& p = kern.params[i];
        if (!ir::is_buffer(p.kind)) continue;
        const auto need = runtime::required_extent(kern, i, proto);
        std::vector<std::uint8_t> bytes;
        if (p.kind != ir::ParamKind::Out) bytes = runtime::pack(p.type, buffer_values(in, p.name, k->name));
        for (auto& set : arg_sets) {
          auto buf = be.allocate(p.type, need);
          if (!bytes.empty()) be.upload(*buf, bytes.data(), bytes.size());
          set[i] = buf;
        }
      }
      const runtime::LaunchGeometry geometry = k->geometry(t, c.params);
      const auto timing = be.time_launches(kern, geometry, arg_sets, options.timing);
      r.work_groups = geometry.total_groups();
      std::optional<runtime::Residency> res;
      try {
        res = be.residency(kern, geometry);
      } catch (const std::exception& e) {  // (a diagnostic: where the backend cannot answer, the row's time stands)
        r.waves_note = std::string("residency query failed: ") + e.what();
      }
      if (res && res->groups_per_unit > 0 && res->units > 0) {
        r.groups_per_unit = res->groups_per_unit;
        r.compute_units = res->units;
        r.registers = res->registers;
        r.waves = static_cast<double>(r.work_groups) / (static_cast<double>(res->groups_per_unit) * res->units);
      }
      r.timer = timing.timer;
      r.reps = static_cast<int>(timing.seconds.size());
      r.median_s = median(timing.seconds);
      r.min_s = *std::min_element(timing.seconds.begin(), timing.seconds.end());
      r.max_s = *std::max_element(timing.seconds.begin(), timing.seconds.end());
      r.gbytes_per_s = r.bytes / r.median_s / 1e9;
      r.tflops = r.flops / r.median_s / 1e12;
      if (ceilings.copy_bytes_per_s > 0) r.frac_copy = r.bytes / r.median_s / ceilings.copy_bytes_per_s;
      if (ceilings.f32_flops_per_s > 0) r.frac_fma = r.flops / r.median_s / ceilings.f32_flops_per_s;
      if (be.name() != "interp" && r.bytes >= 32 && r.bytes / 2 < 4.0 * 0xffffffffu &&
          r.bytes * sets <= options.max_bytes) {
        arg_sets.clear();  // free the kernel's buffers first
        try {              // a failed copy leaves the kernel's measurement standing (same_copy_s = 0)
          r.same_copy_s = time_copy16(be, r.bytes, sets, options.timing).median_s;
          r.frac_same_copy = r.same_copy_s / r.median_s;
        } catch (const std::exception& e) {
          r.same_copy_s = r.frac_same_copy = 0;
          r.same_copy_note = std::string("same-size copy failed: ") + e.what();
        }
      }
      if (options.check) {
        arg_sets.clear();  // (the kernel's timing buffers are freed before the check allocates its own)
        const BackendSlot slot{backend_name, std::shared_ptr<runtime::Backend>(&be, [](runtime::Backend*) {}), "",
                               nullptr, nullptr};  // (the row passed skip_reason above)
        const CaseResult cr = run_case(*k, t, TestCase{c.name, c.params}, slot, options.seed);
        r.check = cr.status == Status::Pass ? "passed" : "FAILED: " + cr.message;
      }
    } catch (const std::exception& e) {
      r.skipped = std::string("error: ") + e.what();
    }
    add(r);
  }
  if (options.on_progress) options.on_progress(jobs.size(), jobs.size(), "done");
  return rows;
}

std::string bench_cases_json(const Registry& reg, const BenchOptions& options) {
  json j = json::array();
  for (const Job& job : bench_jobs(reg, options)) {
    BenchRow r;
    r.kernel = job.k->name;
    r.dtype = std::string(dtype_name(job.t));
    r.case_name = job.c.name;
    j.push_back(
        {{"key", r.key()}, {"kernel", r.kernel}, {"dtype", r.dtype}, {"case", r.case_name}, {"params", job.c.params}});
  }
  return j.dump(2);
}

void merge_reference(std::vector<BenchRow>& rows, const std::string& reference_json) {
  const json ref = json::parse(reference_json);
  for (auto& r : rows) {
    if (!ref.contains(r.key())) {
      r.reference_note = "no reference for this case";
      continue;
    }
    const auto& e = ref.at(r.key());
    if (e.contains("ms") && e.at("ms").is_number()) r.reference_s = e.at("ms").get<double>() * 1e-3;
    if (e.contains("note")) r.reference_note = e.at("note").get<std::string>();
  }
}

std::string baseline_json(const std::vector<BenchRow>& rows, const Ceilings& c, const std::string& device,
                          const std::string& commit, const std::string& date) {
  json j;
  j["device"] = device;
  j["commit"] = commit;
  j["date"] = date;
  j["ceilings"] = {{"backend", c.backend},
                   {"copy_bytes_per_s", c.copy_bytes_per_s},
                   {"copy_method", c.copy_method},
                   {"f32_flops_per_s", c.f32_flops_per_s},
                   {"fma_method", c.fma_method}};
  j["rows"] = json::array();
  for (const auto& r : rows) {
    json row = {{"key", r.key()},
                {"kernel", r.kernel},
                {"dtype", r.dtype},
                {"case", r.case_name},
                {"params", r.params},
                {"timer", r.timer},
                {"median_s", r.median_s},
                {"min_s", r.min_s},
                {"max_s", r.max_s},
                {"reps", r.reps},
                {"rotation_sets", r.rotation_sets},
                {"bytes", r.bytes},
                {"flops", r.flops},
                {"gbytes_per_s", r.gbytes_per_s},
                {"tflops", r.tflops},
                {"frac_copy", r.frac_copy},
                {"frac_fma", r.frac_fma},
                {"same_copy_s", r.same_copy_s},
                {"frac_same_copy", r.frac_same_copy},
                {"same_copy_note", r.same_copy_note},
                {"waves_note", r.waves_note},
                {"skipped", r.skipped},
                {"reference_note", r.reference_note}};
    if (!r.check.empty()) row["check"] = r.check;
    if (r.work_groups > 0) row["work_groups"] = r.work_groups;
    if (r.waves > 0) {
      row["groups_per_unit"] = r.groups_per_unit;
      row["compute_units"] = r.compute_units;
      row["registers"] = r.registers;
      row["waves"] = r.waves;
    }
    if (r.reference_s) {
      row["reference_s"] = *r.reference_s;
      row["ratio_reference_over_ingot"] = *r.reference_s / r.median_s;
    }
    j["rows"].push_back(row);
  }
  return j.dump(2);
}

Diff diff_baselines(const std::string& before_json, const std::string& after_json, double threshold,
                    const std::string& before_name, const std::string& after_name) {
  if (!std::isfinite(threshold) || threshold < 0 || threshold >= 10) {
    throw std::invalid_argument("the threshold must be a finite relative change in [0, 10) (e.g. 0.05 for 5%), not " +
                                std::to_string(threshold));
  }
  auto times = [](const std::string& text, const std::string& name) {
    std::map<std::string, double> m;
    json j;
    try {
      j = json::parse(text);
    } catch (const json::exception& e) {
      throw std::invalid_argument(name + " is not valid JSON: " + e.what());
    }
    if (!j.is_object() || !j.contains("rows") || !j.at("rows").is_array())
      throw std::invalid_argument(name + " is not a baseline: it has no \"rows\" array");
    std::set<std::string> seen;
    std::size_t index = 0;
    for (const auto& r : j.at("rows")) {
      const std::string where = name + ", row " + std::to_string(index++);
      if (!r.is_object() || !r.contains("key") || !r.at("key").is_string())
        throw std::invalid_argument(where + ": no string \"key\"");
      const std::string key = r.at("key").get<std::string>();
      if (!seen.insert(key).second) throw std::invalid_argument(name + ": row key '" + key + "' appears twice");
      if (r.contains("skipped") && r.at("skipped").is_string() && !r.at("skipped").get<std::string>().empty()) {
        continue;
      }
      if (!r.contains("median_s") || !r.at("median_s").is_number())
        throw std::invalid_argument(where + " (" + key + "): no numeric \"median_s\"");
      const double t = r.at("median_s").get<double>();
      if (!std::isfinite(t) || t <= 0) {
        throw std::invalid_argument(where + " (" + key + "): median_s must be finite and positive, not " +
                                    std::to_string(t));
      }
      m[key] = t;
    }
    return m;
  };
  const auto a = times(before_json, before_name);
  const auto b = times(after_json, after_name);
  Diff d;
  for (const auto& [key, t0] : a) {
    auto it = b.find(key);
    if (it == b.end()) {
      d.only_before.push_back(key);
      continue;
    }
    DiffLine l{key, t0, it->second, it->second / t0 - 1.0};
    if (l.change > threshold) {
      d.regressions.push_back(l);
    } else if (l.change < -threshold) {
      d.gains.push_back(l);
    } else {
      d.unchanged.push_back(l);
    }
  }
  for (const auto& [key, t] : b) {
    if (!a.count(key)) d.only_after.push_back(key);
  }
  return d;
}

}  // namespace ingot::harness
