// The pass runner.
#include "ingot/passes/pipeline.hpp"

#include <chrono>

#include "ingot/ir_print.hpp"
#include "ingot/passes/dce.hpp"
#include "ingot/passes/simplify.hpp"
#include "ingot/verify.hpp"

namespace ingot::passes {

std::vector<Pass> default_passes() {
  return {Pass{"simplify", [](const ir::Kernel& k) { return simplify(k); }},
          Pass{"dce", [](const ir::Kernel& k) { return dce(k); }}};
}

PipelineResult run_pipeline(ir::Kernel k, const std::vector<Pass>& passes, const PipelineOptions& options) {
  PipelineResult r;
  if (options.verify_each) ir::verify_or_throw(k, "trace");
  r.records.push_back(PassRecord{"input", 0, options.record_ir ? ir::print_kernel(k) : std::string()});
  for (const Pass& p : passes) {
    const auto t0 = std::chrono::steady_clock::now();
    k = p.run(k);
    const auto t1 = std::chrono::steady_clock::now();
    if (options.verify_each) ir::verify_or_throw(k, "pass '" + p.name + "'");
    r.records.push_back(PassRecord{p.name, std::chrono::duration<double, std::micro>(t1 - t0).count(),
                                   options.record_ir ? ir::print_kernel(k) : std::string()});
  }
  r.kernel = std::move(k);
  return r;
}

ir::Kernel optimize(ir::Kernel k) { return run_pipeline(std::move(k), default_passes()).kernel; }

}  // namespace ingot::passes
