// ingot/scalar_eval.hpp — the semantics of one op on concrete values.
//
// Used by the interpreter for every lane and by the simplify pass for constant folding, so
// that folding can never disagree with execution. Values travel as 64-bit patterns: the value's
// bits in its own type, zero-extended (an i32 -1 is 0x00000000ffffffff).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ingot/dtype.hpp"
#include "ingot/ir.hpp"

namespace ingot::ir {

// Evaluates a non-leaf, non-Load op. `operand_type` is the type of operand a; `result_type`
// the node's type. On a semantic error (zero divisor, shift out of range, float->int out of
// range) returns nullopt and writes a short reason to *error.
[[nodiscard]] std::optional<std::uint64_t> eval_op(Op op, DType result_type, DType operand_type, std::uint64_t a,
                                                   std::uint64_t b, std::uint64_t c, std::string* error);

// Converts between canonical bit patterns (same rules as Op::Cast).
[[nodiscard]] std::optional<std::uint64_t> convert_bits(DType from, DType to, std::uint64_t bits, std::string* error);

// Canonical bits of a host value, and back.
[[nodiscard]] std::uint64_t bits_of_double(DType t, double v);  // rounds/wraps as a cast would
[[nodiscard]] double double_of_bits(DType t, std::uint64_t bits);
[[nodiscard]] std::int64_t int_of_bits(DType t, std::uint64_t bits);  // integer/bool types
// Human-readable value (used by printers and error messages).
[[nodiscard]] std::string format_bits(DType t, std::uint64_t bits);

}  // namespace ingot::ir
