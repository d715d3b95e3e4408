// ingot/passes/dce.hpp — dead-code elimination.
#pragma once

#include "ingot/ir.hpp"

namespace ingot::passes {

// Removes, until nothing changes: lets (loads included) whose variable is never read;
// mutable variables never read, with their assignments; the kept value of an atomic that is
// never read (the atomic stays); empty ifs, loops and blocks. Stores, atomics and barriers
// always stay. A removed load can no longer report an out-of-range index (ir.hpp allows it).
[[nodiscard]] ir::Kernel dce(const ir::Kernel& k);

}  // namespace ingot::passes
