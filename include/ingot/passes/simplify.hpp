// ingot/passes/simplify.hpp — constant folding and algebraic simplification.
#pragma once

#include "ingot/ir.hpp"

namespace ingot::passes {

// Rebuilds the kernel with:
//  - constant folding of every op whose operands are constants, using the same evaluator as
//    the interpreter (ops that would be a run-time error, e.g. x / 0, are left in place);
//  - identities that hold for every value, NaN and signed zero included: x+0 and x*0 (integers
//    only; for f32 x+(-0.0) and x*1), x-0, x-x and x^x (integers), x/1, x&0, x|0, shifts by 0, b&&true, b||false,
//    !!b, select on a constant condition or with equal arms, casts to the same type, min/max
//    of a value with itself, unsigned x<0 (false) and x>=0 (true);
//  - select(c, f32(x), +0.0f) of a 16-bit float x (either arm order) as f32(select(c, x, +0)): the
//    select of raw 16-bit values, then one unconditional conversion;
//  - if with a constant condition replaced by the taken branch (as a nested block), and for
//    loops with a constant empty range removed.
// Variable ids, parameters and statement order are preserved.
[[nodiscard]] ir::Kernel simplify(const ir::Kernel& k);

}  // namespace ingot::passes
