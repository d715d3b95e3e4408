// tools/ingot/prove.hpp — `ingot prove`: the proof pass (passes::prove) over the library's cases.
#pragma once

#include <string>
#include <vector>

#include "ingot/harness/registry.hpp"

namespace ingot::tools {

struct ProveArgs {
  std::string kernel;             // one kernel (empty: every kernel)
  std::string dtype;              // one dtype (empty: every dtype of each kernel)
  std::vector<std::string> sets;  // NAME=VALUE overrides of every case's parameters
  bool all_variants = false;      // every test case, not only the default variants'
  bool replay = false;            // run each case not proved on the checked interpreter and show what it reports
  bool no_cache = false;          // neither read nor write the result cache (every case proved now)
  std::string json_path;          // also write every result to this JSON file (empty: none)
  std::size_t jobs = 1;           // proofs run at once (each on its own thread and Z3 context)
};

// Proves every (kernel, dtype, case) selected: the kernel as the harness runs it (passes::optimize), the case's launch
// geometry with symbolic work-group and thread ids, its run-time scalars fixed to the case's values. Prints one line
// per case (proved, or each obligation not proven with its witness) and a summary; returns 0 when every case is
// proved, 1 otherwise. Proved results are cached on disk (see ProofCache in prove.cpp) unless `no_cache`. With a
// json_path, also writes every result there (refusing an unwritable path before anything is proved). Throws
// std::invalid_argument for an unknown kernel or dtype or a bad --set.
int cmd_prove(const harness::Registry& reg, const ProveArgs& a);

}  // namespace ingot::tools
