// ingot/harness/bench.hpp — timing the library's bench cases against measured ceilings.
//
// Each kernel x dtype x bench case: warm-up launches, then timed launches (device timers where
// the backend has them) rotating over enough input sets to exceed twice the L2 cache, median
// taken; bytes and FLOPs from the registry give GB/s and TFLOP/s and the fraction of the
// device's measured copy bandwidth and f32 FMA rate. A reference time (cuDNN through PyTorch,
// measured by bench/reference_torch.py in the same run) can be merged in as a ratio.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ingot/harness/registry.hpp"
#include "ingot/runtime/backend.hpp"

namespace ingot::harness {

struct Ceilings {
  std::string backend;
  double copy_bytes_per_s = 0;  // bytes read + written per second, device-to-device copy
  std::string copy_method;
  double f32_flops_per_s = 0;  // 2 x FMAs per second, f32
  std::string fma_method;
};

struct BenchRow;

struct BenchOptions {
  std::string filter;  // substring of kernel name or family
  std::string cases;   // ECMAScript regex searched in the case name ("" = every case)
  std::optional<DType> dtype;
  // Each selected case runs as registered, then once per entry here with those parameters replaced or added
  // (KernelSpec::with_overrides: a tiling swept without a registry change), named "<case>+KEY=V,KEY=V".
  std::vector<Params> variants;
  // Only the variant rows, not the registered case itself (e.g. one variant under a profiler that counts launches);
  // refused without variants.
  bool variants_only = false;
  // false: the rows of the library's default variants (KernelSpec::default_case); true: the registered tuning sweeps
  // too (rows that name options).
  bool all_variants = false;
  // Each row also runs once through the correctness harness at its own size (run_case: outputs poisoned, every
  // element against the CPU oracle in f64, the kernel's tolerance): the timed kernel checked at production size, where
  // the test cases are small. Costs the oracle's CPU time per row (seconds at the bench sizes).
  bool check = false;
  // The backend's refusals (BackendSlot::skip_reason from open_backend: shared memory over the device's, OpenCL C
  // too large for a CPU device to compile in reasonable time): a non-empty reason skips the row with it.
  std::function<std::string(const ir::Kernel&)> skip_reason;
  runtime::TimingOptions timing{5, 30};
  double cache_bytes = 50e6;  // L2 size: input sets rotate over more than twice this
  int max_rotation_sets = 8;
  double max_bytes = 60e9;  // skip cases whose buffers (all sets) would need more
  std::uint64_t seed = 7;
  std::function<void(std::size_t, std::size_t, const std::string&)> on_progress;
  // After each case, the rows so far (e.g. to save partial results of a run that may be cut short).
  std::function<void(const std::vector<BenchRow>&)> on_rows;
};

struct BenchRow {
  std::string kernel, dtype, case_name, params, timer;
  double median_s = 0, min_s = 0, max_s = 0;
  int reps = 0, rotation_sets = 0;
  double bytes = 0, flops = 0;
  double gbytes_per_s = 0, tflops = 0, frac_copy = 0, frac_fma = 0;
  // A copy of the same bytes (bytes/2 read, bytes/2 written by ingot's 16-byte copy kernel), timed
  // the same way over the same number of rotating buffer sets: what a kernel this size can reach
  // (launch and ramp included). 0 where not measured (the interpreter, fewer than 32 bytes, more
  // than 16 GiB per buffer or than max_bytes in all sets, or the copy failed).
  double same_copy_s = 0, frac_same_copy = 0;
  // The launch's work-groups and, where the backend can tell (runtime::Backend::residency: CUDA), how many the device
  // holds at once: waves = work_groups / (groups_per_unit * compute_units). A last wave part-full leaves the rest of
  // the device idle (1.45 waves, were the work-groups in lockstep: 55% of it during the second). 0 where not known.
  std::uint64_t work_groups = 0;
  int groups_per_unit = 0, compute_units = 0, registers = 0;
  double waves = 0;
  std::string same_copy_note;         // why the same-size copy failed (where it did)
  std::string waves_note;             // why the backend's residency query failed (where it did: no waves then)
  std::optional<double> reference_s;  // the reference's median time for the same case
  std::string reference_note;         // what the reference ran (or why there is none)
  std::string skipped;                // non-empty: why this case did not run
  // BenchOptions::check: "" not checked, "passed", or "FAILED: <the harness's message>".
  std::string check;
  [[nodiscard]] bool check_failed() const { return check.rfind("FAILED", 0) == 0; }
  [[nodiscard]] std::string key() const { return kernel + "|" + dtype + "|" + case_name; }
};

// Measures the backend's ceilings: the better of the driver's device-to-device copy (where it
// has one) and an ingot copy kernel over `copy_bytes` (at most 64 MiB off the GPU), and an f32
// FMA-chain kernel. The interpreter has no ceilings (zeros, said in the methods).
[[nodiscard]] Ceilings measure_ceilings(runtime::Backend& be, double copy_bytes = 1 << 30);

// Throws std::invalid_argument for options no row could run with (bad timing, a bad --cases expression, a variant
// key a selected kernel does not have): checked before anything is measured.
void check_bench_options(const Registry& reg, const BenchOptions& options);

[[nodiscard]] std::vector<BenchRow> run_bench(const Registry& reg, runtime::Backend& be,
                                              const std::string& backend_name, const Ceilings& ceilings,
                                              const BenchOptions& options);

// The bench cases as JSON for bench/reference_torch.py: [{key, kernel, dtype, case, params}].
[[nodiscard]] std::string bench_cases_json(const Registry& reg, const BenchOptions& options);
// Merges reference times ({"<key>": {"ms": 1.23, "note": "..."}}) into rows.
void merge_reference(std::vector<BenchRow>& rows, const std::string& reference_json);

// A baseline document: device, commit, date, ceilings, rows.
[[nodiscard]] std::string baseline_json(const std::vector<BenchRow>& rows, const Ceilings& c, const std::string& device,
                                        const std::string& commit, const std::string& date);
struct DiffLine {
  std::string key;
  double before_s = 0, after_s = 0;
  double change = 0;  // after/before - 1 (positive = slower)
};
struct Diff {
  std::vector<DiffLine> regressions, gains, unchanged;
  std::vector<std::string> only_before, only_after;
};
// Compares two baselines' medians; |change| <= threshold counts as unchanged. The threshold must be finite and in
// [0, 10); each document must parse, hold a "rows" array, name each row's key once and give each timed row a finite,
// positive median: otherwise std::invalid_argument names the document (`before_name`, `after_name`: its file) and
// what is wrong, before anything is compared.
[[nodiscard]] Diff diff_baselines(const std::string& before_json, const std::string& after_json, double threshold,
                                  const std::string& before_name = "before", const std::string& after_name = "after");

}  // namespace ingot::harness
