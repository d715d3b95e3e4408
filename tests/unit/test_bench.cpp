// The bench harness on the interpreter (timings are meaningless there; the plumbing is not):
// rows, rates, reference merge, baselines and diffs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "ingot/harness/bench.hpp"
#include "ingot/library.hpp"
#include "ingot/runtime/interp.hpp"

using namespace ingot;
using namespace ingot::harness;

namespace {
Registry tiny_registry() {
  Registry r;
  KernelSpec s = *builtin_registry().find("depthwise_conv1d");
  s.bench = {{"tiny", s.default_test().params}};
  r.add(s);
  return r;
}
// f32 rows, one timed launch, no warm-up.
BenchOptions one_launch_f32() {
  BenchOptions opt;
  opt.dtype = DType::f32;
  opt.timing = {0, 1};
  return opt;
}
// Ceilings of 1 GB/s and 1 GFLOP/s: a row's fractions are its rates in those units.
Ceilings unit_ceilings() {
  Ceilings c;
  c.copy_bytes_per_s = 1e9;
  c.f32_flops_per_s = 1e9;
  return c;
}
}  // namespace

TEST(Bench, RowsCarryTimesRatesAndRotation) {
  runtime::Interpreter be;
  const Registry reg = tiny_registry();
  const Ceilings c = unit_ceilings();
  BenchOptions opt;
  opt.dtype = DType::f32;
  opt.timing = {1, 3};
  opt.cache_bytes = 1000;  // small "L2": several rotating input sets
  const auto rows = run_bench(reg, be, "interp", c, opt);
  ASSERT_EQ(rows.size(), 1u);
  const auto& r = rows[0];
  EXPECT_TRUE(r.skipped.empty()) << r.skipped;
  EXPECT_EQ(r.reps, 3);
  EXPECT_EQ(r.timer, "host clock");
  EXPECT_GT(r.rotation_sets, 1);
  EXPECT_GT(r.median_s, 0);
  EXPECT_LE(r.min_s, r.median_s);
  EXPECT_GE(r.max_s, r.median_s);
  EXPECT_NEAR(r.gbytes_per_s, r.bytes / r.median_s / 1e9, 1e-9);
  EXPECT_NEAR(r.frac_copy, r.bytes / r.median_s / 1e9, 1e-9);
  EXPECT_GT(r.flops, 0);
  EXPECT_EQ(r.same_copy_s, 0);  // no same-size copy on the interpreter (a checker, not a device)
  EXPECT_EQ(r.frac_same_copy, 0);
}

// Back to back on the host clock: each window runs N launches (rotating over the sets) and reports its time / N.
TEST(Bench, BackToBackWindowsHoldNLaunches) {
  struct Counting : runtime::Backend {  // the interpreter, counting launches
    runtime::Interpreter in;
    int launches = 0;
    [[nodiscard]] std::string name() const override { return in.name(); }
    runtime::BufferPtr allocate(DType t, std::size_t n) override { return in.allocate(t, n); }
    void upload(runtime::DeviceBuffer& d, const void* s, std::size_t n) override { in.upload(d, s, n); }
    void download(const runtime::DeviceBuffer& s, void* d, std::size_t n) override { in.download(s, d, n); }
    void launch(const ir::Kernel& k, const runtime::LaunchGeometry& g, const std::vector<runtime::Arg>& a) override {
      ++launches;
      in.launch(k, g, a);
    }
  } be;
  const Registry reg = tiny_registry();
  const Ceilings c = unit_ceilings();
  BenchOptions opt;
  opt.dtype = DType::f32;
  opt.timing = {.warmup = 1, .reps = 3, .back_to_back = 4};
  const auto rows = run_bench(reg, be, "interp", c, opt);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].skipped.empty()) << rows[0].skipped;
  EXPECT_EQ(rows[0].timer, "host clock, 4 launches back to back per window");
  EXPECT_EQ(rows[0].reps, 3);
  EXPECT_EQ(be.launches, 1 + 3 * 4);
  opt.timing.back_to_back = 0;
  try {
    (void)run_bench(reg, be, "interp", c, opt);
    FAIL();
  } catch (const runtime::ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("back_to_back = 0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(be.launches, 1 + 3 * 4);
}

// Work-groups and waves: every row counts its launch's work-groups; where the backend tells how many it holds at once
// (runtime::Backend::residency), the row has waves = work-groups / (per unit x units), in the baseline JSON too.
TEST(Bench, RowsCarryWorkGroupsAndWaves) {
  struct Resident : runtime::Backend {  // the interpreter, holding 3 work-groups on each of 10 units
    runtime::Interpreter in;
    bool fail = false;  // residency throws
    [[nodiscard]] std::string name() const override { return in.name(); }
    runtime::BufferPtr allocate(DType t, std::size_t n) override { return in.allocate(t, n); }
    void upload(runtime::DeviceBuffer& d, const void* s, std::size_t n) override { in.upload(d, s, n); }
    void download(const runtime::DeviceBuffer& s, void* d, std::size_t n) override { in.download(s, d, n); }
    void launch(const ir::Kernel& k, const runtime::LaunchGeometry& g, const std::vector<runtime::Arg>& a) override {
      in.launch(k, g, a);
    }
    std::optional<runtime::Residency> residency(const ir::Kernel&, const runtime::LaunchGeometry&) override {
      if (fail) throw std::runtime_error("occupancy query failed");
      return runtime::Residency{3, 10, 40};
    }
  } be;
  const Registry reg = tiny_registry();
  const KernelSpec& k = *reg.find("depthwise_conv1d");
  const runtime::LaunchGeometry g = k.geometry(DType::f32, k.bench.front().params);
  // (spelled out, so that total_groups is checked too)
  const std::uint64_t groups = std::uint64_t{g.groups[0]} * g.groups[1] * g.groups[2];
  EXPECT_EQ(g.total_groups(), groups);
  const auto rows = run_bench(reg, be, "interp", unit_ceilings(), one_launch_f32());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].work_groups, groups);
  EXPECT_EQ(rows[0].groups_per_unit, 3);
  EXPECT_EQ(rows[0].compute_units, 10);
  EXPECT_EQ(rows[0].registers, 40);
  EXPECT_DOUBLE_EQ(rows[0].waves, static_cast<double>(groups) / 30);
  const auto j = nlohmann::json::parse(baseline_json(rows, unit_ceilings(), "d", "c", "t"));
  EXPECT_EQ(j["rows"][0]["work_groups"].get<std::uint64_t>(), groups);
  EXPECT_DOUBLE_EQ(j["rows"][0]["waves"].get<double>(), static_cast<double>(groups) / 30);
  EXPECT_EQ(j["rows"][0]["groups_per_unit"].get<int>(), 3);

  be.fail = true;  // a residency query that fails: the row keeps its time, without waves
  const auto failed_rows = run_bench(reg, be, "interp", unit_ceilings(), one_launch_f32());
  ASSERT_EQ(failed_rows.size(), 1u);
  EXPECT_TRUE(failed_rows[0].skipped.empty()) << failed_rows[0].skipped;
  EXPECT_GT(failed_rows[0].median_s, 0);
  EXPECT_EQ(failed_rows[0].waves, 0);
  EXPECT_EQ(failed_rows[0].waves_note, "residency query failed: occupancy query failed");  // (said, not dropped)
  EXPECT_EQ(nlohmann::json::parse(baseline_json(failed_rows, unit_ceilings(), "d", "c", "t"))["rows"][0]["waves_note"],
            "residency query failed: occupancy query failed");
  EXPECT_TRUE(rows[0].waves_note.empty());

  runtime::Interpreter plain;  // no residency: the groups, no waves
  const auto plain_rows = run_bench(reg, plain, "interp", unit_ceilings(), one_launch_f32());
  ASSERT_EQ(plain_rows.size(), 1u);
  EXPECT_EQ(plain_rows[0].work_groups, groups);
  EXPECT_EQ(plain_rows[0].waves, 0);
  EXPECT_FALSE(
      nlohmann::json::parse(baseline_json(plain_rows, unit_ceilings(), "d", "c", "t"))["rows"][0].contains("waves"));
}

TEST(Bench, OversizedCasesAreSkippedWithTheReason) {
  runtime::Interpreter be;
  BenchOptions opt;
  opt.filter = "depthwise_conv1d";
  opt.dtype = DType::bf16;
  opt.max_bytes = 1e6;
  const auto rows = run_bench(builtin_registry(), be, "interp", Ceilings{}, opt);
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) EXPECT_NE(r.skipped.find("bytes of rotating buffers"), std::string::npos) << r.skipped;
}

// on_rows sees the rows so far after every case (what ingot bench/snap save as they go).
TEST(Bench, RowsAreReportedAfterEveryCase) {
  runtime::Interpreter be;
  BenchOptions opt;
  opt.filter = "depthwise_conv1d";
  opt.dtype = DType::bf16;
  opt.max_bytes = 1e6;  // every case skipped: fast
  std::vector<std::size_t> sizes;
  opt.on_rows = [&](const std::vector<BenchRow>& rows) { sizes.push_back(rows.size()); };
  const auto rows = run_bench(builtin_registry(), be, "interp", Ceilings{}, opt);
  ASSERT_EQ(sizes.size(), rows.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(sizes[i], i + 1);
}

TEST(Bench, ReferenceMergeBaselineAndDiff) {
  BenchRow a;
  a.kernel = "k";
  a.dtype = "f32";
  a.case_name = "c";
  a.median_s = 2e-3;
  BenchRow b = a;
  b.case_name = "d";
  b.median_s = 1e-3;
  std::vector<BenchRow> rows{a, b};
  merge_reference(rows, R"({"k|f32|c": {"ms": 4.0, "note": "cudnn via torch"}})");
  ASSERT_TRUE(rows[0].reference_s.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].reference_s, 4e-3);
  EXPECT_EQ(rows[0].reference_note, "cudnn via torch");
  EXPECT_FALSE(rows[1].reference_s.has_value());
  const std::string before = baseline_json(rows, Ceilings{}, "dev", "abc", "2026-11-30T00:00:00Z");
  const auto j = nlohmann::json::parse(before);
  EXPECT_EQ(j["commit"], "abc");
  EXPECT_EQ(j["rows"][0]["ratio_reference_over_ingot"], 2.0);
  rows[0].median_s = 3e-3;     // 50% slower
  rows[1].median_s = 0.99e-3;  // within threshold
  const std::string after = baseline_json(rows, Ceilings{}, "dev", "def", "2026-11-30T01:00:00Z");
  const auto d = diff_baselines(before, after, 0.05);
  ASSERT_EQ(d.regressions.size(), 1u);
  EXPECT_EQ(d.regressions[0].key, "k|f32|c");
  EXPECT_NEAR(d.regressions[0].change, 0.5, 1e-9);
  EXPECT_EQ(d.unchanged.size(), 1u);
  EXPECT_TRUE(d.gains.empty());
}

// diff refuses what it cannot compare honestly, naming the file: a threshold that is not a finite relative change,
// JSON that does not parse, a key twice, a median that is not a positive time.
TEST(Bench, DiffRefusesBadThresholdsAndDocuments) {
  const std::string ok = R"({"rows": [{"key": "k|f32|c", "median_s": 0.001}]})";
  for (double t : {std::nan(""), std::numeric_limits<double>::infinity(), -0.1, 10.0}) {
    EXPECT_THROW((void)diff_baselines(ok, ok, t), std::invalid_argument) << t;
  }
  EXPECT_NO_THROW((void)diff_baselines(ok, ok, 0.0));
  const auto refusal = [&](const std::string& after) {
    try {
      (void)diff_baselines(ok, after, 0.05, "old.json", "new.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refusal("{\"rows\": [").find("new.json"), std::string::npos);
  EXPECT_NE(refusal("[1, 2]").find("new.json"), std::string::npos);
  EXPECT_NE(refusal(R"({"rows": [{"key": "a", "median_s": 1e-3}, {"key": "a", "median_s": 2e-3}]})").find("'a'"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"rows": [{"key": "a", "median_s": -1e-3}]})").find("new.json"), std::string::npos);
  EXPECT_NE(refusal(R"({"rows": [{"key": "a", "median_s": 0}]})").find("new.json"), std::string::npos);
  EXPECT_NE(refusal(R"({"rows": [{"key": "a"}]})").find("new.json"), std::string::npos);
  // a skipped row has no median and is not compared
  EXPECT_EQ(refusal(R"({"rows": [{"key": "a", "skipped": "absent"}]})"), "");
}

// --variant: each selected case runs as registered, then once per variant with its parameters replaced (rows named
// "<case>+KEY=V,..."); a key the kernel does not have is an error naming the kernel's parameters.
TEST(Bench, VariantsRunEachCaseWithItsParametersReplaced) {
  runtime::Interpreter be;
  const Registry reg = tiny_registry();
  BenchOptions opt = one_launch_f32();
  opt.variants = {{{"V", 2}}, {{"V", 4}, {"L", 33}}};
  const auto rows = run_bench(reg, be, "interp", unit_ceilings(), opt);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].case_name, "tiny");
  EXPECT_EQ(rows[1].case_name, "tiny+V=2");
  EXPECT_EQ(rows[2].case_name, "tiny+L=33,V=4");
  for (const auto& r : rows) EXPECT_TRUE(r.skipped.empty()) << r.case_name << ": " << r.skipped;
  EXPECT_EQ(rows[0].params.find("V="), std::string::npos) << rows[0].params;  // the default case names no V
  EXPECT_NE(rows[1].params.find("V=2"), std::string::npos) << rows[1].params;
  EXPECT_NE(rows[2].params.find("L=33"), std::string::npos) << rows[2].params;
  EXPECT_GT(rows[2].bytes, rows[0].bytes);  // a longer L moves more bytes: the override reached the case
  const auto cases = nlohmann::json::parse(bench_cases_json(reg, opt));
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[1].at("params").at("V"), 2);
  // --variants-only: the variant rows alone; refused without a variant
  opt.variants_only = true;
  const auto only = run_bench(reg, be, "interp", unit_ceilings(), opt);
  ASSERT_EQ(only.size(), 2u);
  EXPECT_EQ(only[0].case_name, "tiny+V=2");
  EXPECT_EQ(only[1].case_name, "tiny+L=33,V=4");
  const auto saved = opt.variants;
  opt.variants.clear();
  try {
    (void)run_bench(reg, be, "interp", unit_ceilings(), opt);
    FAIL() << "--variants-only without a variant ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("but no --variant was given"), std::string::npos) << e.what();
  }
  opt.variants = saved;
  opt.variants_only = false;
  opt.variants = {{{"VQ", 2}}};
  try {
    (void)run_bench(reg, be, "interp", unit_ceilings(), opt);
    FAIL() << "an unknown key ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'depthwise_conv1d' has no parameter 'VQ'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("shfl"), std::string::npos) << e.what();  // the options are named
  }
}

// --check: each row also runs through the correctness harness at its own size; a wrong result is reported as a failed
// check with the harness's message (here: an oracle off by one), and no row is checked without the option.
TEST(Bench, CheckRunsEachRowAgainstTheOracle) {
  runtime::Interpreter be;
  Registry reg = tiny_registry();
  BenchOptions opt = one_launch_f32();
  EXPECT_EQ(run_bench(reg, be, "interp", unit_ceilings(), opt).at(0).check, "");
  opt.check = true;
  opt.variants = {{{"V", 2}}};
  auto rows = run_bench(reg, be, "interp", unit_ceilings(), opt);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    EXPECT_EQ(r.check, "passed") << r.case_name;
    EXPECT_FALSE(r.check_failed());
  }
  EXPECT_EQ(nlohmann::json::parse(baseline_json(rows, unit_ceilings(), "interp", "c", "d"))["rows"][0]["check"],
            "passed");
  KernelSpec wrong = reg.kernels().front();
  wrong.name = "depthwise_conv1d_wrong_oracle";
  const auto oracle = wrong.oracle;
  wrong.oracle = [oracle](DType t, const Params& p, const HostData& in) {
    auto want = oracle(t, p, in);
    for (auto& [name, v] : want) v[0] += 1;
    return want;
  };
  Registry bad;
  bad.add(wrong);
  rows = run_bench(bad, be, "interp", unit_ceilings(), opt);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].check.rfind("FAILED: output 'y': first bad index 0", 0), 0u) << rows[0].check;
  EXPECT_TRUE(rows[0].check_failed());
}

// The backend's refusals (open_backend's skip_reason: a CPU OpenCL device and a huge source, shared memory over the
// device's) skip a row with their reason, as ingot test does, instead of compiling it.
TEST(Bench, BackendRefusalsSkipTheRow) {
  runtime::Interpreter be;
  const Registry reg = tiny_registry();
  BenchOptions opt = one_launch_f32();
  opt.check = true;
  int asked = 0;
  opt.skip_reason = [&](const ir::Kernel& k) {
    ++asked;
    return k.name.empty() ? std::string() : "refused by the backend: " + k.name;
  };
  const auto rows = run_bench(reg, be, "interp", unit_ceilings(), opt);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(rows[0].skipped, "refused by the backend: depthwise_conv1d_f32");
  EXPECT_EQ(rows[0].check, "");  // nothing ran, nothing checked
  EXPECT_EQ(rows[0].median_s, 0);
}

// The rows of the library's default variants by default; the registered tuning sweeps (rows naming options) only
// with all_variants.
TEST(Bench, DefaultRowsUnlessAllVariants) {
  const Registry reg = builtin_registry();
  BenchOptions o;
  const auto defaults = nlohmann::json::parse(bench_cases_json(reg, o));
  o.all_variants = true;
  const auto all = nlohmann::json::parse(bench_cases_json(reg, o));
  EXPECT_GT(all.size(), defaults.size());
  for (const auto& c : defaults) {
    const KernelSpec* k = reg.find(c.at("kernel").get<std::string>());
    ASSERT_NE(k, nullptr);
    Params p;
    for (const auto& [key, v] : c.at("params").items()) p[key] = v.get<std::int64_t>();
    EXPECT_TRUE(k->default_case(p)) << c.at("key");
  }
}

// --cases: a regular expression over the case names selects the cases of both the run and the
// emitted case list; a bad expression is an error that names it.
TEST(Bench, CaseFilterSelectsCasesByRegex) {
  const Registry reg = builtin_registry();
  BenchOptions o;
  o.filter = "conv2d_grouped";
  o.dtype = DType::bf16;
  o.all_variants = true;  // (the tuning sweeps too: more than one row)
  const auto all = nlohmann::json::parse(bench_cases_json(reg, o));
  o.cases = "_g32$";
  const auto some = nlohmann::json::parse(bench_cases_json(reg, o));
  ASSERT_EQ(some.size(), 1u);
  EXPECT_EQ(some[0].at("case"), "N32_C256_56x56_3x3_g32");
  EXPECT_GT(all.size(), some.size());
  o.cases = "(";
  try {
    (void)bench_cases_json(reg, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'(' is not a valid regular expression"), std::string::npos) << e.what();
  }
}
