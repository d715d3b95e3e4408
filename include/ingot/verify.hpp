// ingot/verify.hpp — the IR verifier: type rules (from ops.def), scoping, memory references.
//
// Runs after every pass in tests and debug pipelines. A kernel that passes it is well-typed,
// refers only to declared variables in scope, loads only from readable buffers and stores only
// to writable ones; whether accesses are in range is a run-time (interpreter) matter.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ingot/ir.hpp"

namespace ingot::ir {

// Every problem found, each naming the statement (#loc) or expression involved. Empty = valid.
[[nodiscard]] std::vector<std::string> verify(const Kernel& k);

struct VerifyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Throws VerifyError listing every problem, prefixed by `context` (e.g. the pass just run).
void verify_or_throw(const Kernel& k, const std::string& context = "");

}  // namespace ingot::ir
