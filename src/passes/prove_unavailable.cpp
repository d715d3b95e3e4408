// passes::prove in a build without Z3 (prove.hpp): every call is refused with what to install. The rest of ingot
// (tracing, the interpreter, the runtimes, the library) does not depend on the proof pass.
#include <stdexcept>

#include "ingot/passes/prove.hpp"

namespace ingot::passes {

ProofReport prove(const ir::Kernel& k, const ProveOptions&) {
  throw std::runtime_error("cannot prove kernel '" + k.name +
                           "': this ingot was built without Z3 (the proof pass's solver); install libz3-dev "
                           "(Debian) and configure again");
}

bool prover_available() { return false; }

}  // namespace ingot::passes
