// ingot/ir_print.hpp — a readable text form of the IR, for dumps, tests and error messages.
#pragma once

#include <string>

#include "ingot/ir.hpp"

namespace ingot::ir {

// The whole kernel: signature (parameters with kinds, types and extents), then statements,
// each prefixed by its location number "#N".
[[nodiscard]] std::string print_kernel(const Kernel& k);
// One expression, fully parenthesised.
[[nodiscard]] std::string print_expr(const Kernel& k, ExprId e);
// One statement header (no nested bodies), as used in error messages.
[[nodiscard]] std::string print_stmt_line(const Kernel& k, const Stmt& s);
// Printed name of a variable: "%<hint><id>".
[[nodiscard]] std::string var_name(const Kernel& k, VarId v);

}  // namespace ingot::ir
