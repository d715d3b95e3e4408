// ingot/api/activation.hpp — the activation family as plain functions over the caller's tensors (see api::call for
// the checks and errors).
#pragma once

#include "ingot/api/call.hpp"

namespace ingot::activation {

// y = x * sigmoid(x), element by element; x and y of one shape.
void silu(api::Context& ctx, const api::TensorView& x, const api::TensorView& y);

}  // namespace ingot::activation
