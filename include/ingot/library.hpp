// ingot/library.hpp — ingot's kernel library (the ingot_library target): every family's kernels registered.
//
// Registration is explicit: builtin_registry() calls each family's register function, so no linker can drop a kernel
// the way it drops an unreferenced static initialiser. The committed manifest (kernels/MANIFEST.txt) must list
// exactly the registered names (harness::check_manifest). The registry's types (KernelSpec, Registry) are in
// ingot/harness/registry.hpp; the harness and the bench run over any Registry, this one or a caller's.
#pragma once

#include "ingot/harness/registry.hpp"

namespace ingot::harness {

// Every kernel of ingot's library.
[[nodiscard]] Registry builtin_registry();

}  // namespace ingot::harness
