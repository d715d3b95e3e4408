// ingot/harness/harness.hpp — runs kernel x dtype x case x backend against the CPU oracles.
//
// For each combination: seeded random inputs, outputs poisoned before the launch, every
// element compared afterwards (an unwritten element fails), a clear line per failure, skips
// counted by exact reason. No fail-fast unless asked.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingot/harness/registry.hpp"
#include "ingot/runtime/backend.hpp"

namespace ingot::harness {

// A backend to test on: present (backend set) or absent (why says so).
struct BackendSlot {
  std::string name;
  std::shared_ptr<runtime::Backend> backend;
  std::string why_absent;
  // Where the backend cannot execute but can compile (CUDA without a GPU): compiles the kernel
  // and throws on a compile error. Cases then count as skipped "compiled only".
  std::function<void(const ir::Kernel&)> compile_only;
  // Where set and non-empty for a kernel, the case is skipped with this reason instead of run (a
  // CPU OpenCL device and a source it would take minutes to compile: open_backend).
  std::function<std::string(const ir::Kernel&)> skip_reason;
};

enum class Status { Pass, Fail, Skip };

struct CaseResult {
  std::string kernel;
  DType dtype = DType::f32;
  std::string case_name;
  std::string params;
  std::string backend;
  Status status = Status::Pass;
  std::string message;  // failure detail or skip reason
  double seconds = 0;
};

struct HarnessOptions {
  std::string filter;          // substring of the kernel name ("" = all)
  std::optional<DType> dtype;  // only this dtype
  bool fail_fast = false;
  // false: the cases of the library's default variants only (KernelSpec::default_case); true: every case, each tuning
  // option set the registry lists included.
  bool all_variants = false;
  std::uint64_t seed = 0x1a2b3c4d;
  // Called before each combination with (done, total, label): progress reporting.
  std::function<void(std::size_t, std::size_t, const std::string&)> on_progress;
};

struct HarnessReport {
  std::vector<CaseResult> results;
  std::size_t passed = 0, failed = 0, skipped = 0;
  std::map<std::string, std::size_t> skip_reasons;                // exact reason -> count
  std::map<std::string, std::array<std::size_t, 3>> per_backend;  // pass, fail, skip
  [[nodiscard]] bool ok() const { return failed == 0 && passed > 0; }
};

[[nodiscard]] HarnessReport run_harness(const Registry& reg, const std::vector<BackendSlot>& backends,
                                        const HarnessOptions& options);

// Compares got with want under tol; returns the first bad index or -1. Sets *why.
[[nodiscard]] std::int64_t compare(const std::vector<double>& want, const std::vector<double>& got, Tolerance tol,
                                   std::string* why);

// Runs one case on one backend and returns its result (used by run_harness and `ingot run`).
[[nodiscard]] CaseResult run_case(const KernelSpec& spec, DType t, const TestCase& c, const BackendSlot& be,
                                  std::uint64_t seed);

}  // namespace ingot::harness
