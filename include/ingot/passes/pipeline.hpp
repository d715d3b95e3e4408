// ingot/passes/pipeline.hpp — runs a straight list of passes, optionally dumping, timing and
// verifying after each one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ingot/ir.hpp"

namespace ingot::passes {

struct Pass {
  std::string name;
  std::function<ir::Kernel(const ir::Kernel&)> run;
};

struct PipelineOptions {
  bool verify_each = true;  // run the verifier on the input and after every pass
  bool record_ir = false;   // keep the printed IR after each pass in the report
};

struct PassRecord {
  std::string name;   // "input" for the traced kernel, then each pass
  double micros = 0;  // wall time of the pass
  std::string ir;     // printed IR after the pass (when record_ir)
};

struct PipelineResult {
  ir::Kernel kernel;
  std::vector<PassRecord> records;
};

// The standard list: simplify, dce.
[[nodiscard]] std::vector<Pass> default_passes();
// Runs `passes` in order. Throws ir::VerifyError naming the pass after which the IR broke.
[[nodiscard]] PipelineResult run_pipeline(ir::Kernel k, const std::vector<Pass>& passes,
                                          const PipelineOptions& options = {});
// Convenience: the default passes with verification.
[[nodiscard]] ir::Kernel optimize(ir::Kernel k);

}  // namespace ingot::passes
