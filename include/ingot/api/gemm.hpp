// ingot/api/gemm.hpp — the matrix product as a plain function over the caller's tensors: parameters from the tensors'
// shapes, then api::call (ingot/api/call.hpp), which checks everything before launching; errors are api::Error.
#pragma once

#include <cstdint>

#include "ingot/api/call.hpp"

namespace ingot::linalg {

enum class Activation : std::int64_t { none = 0, relu = 1, silu = 2, gelu = 3 };

struct GemmOptions {
  bool a_transposed = false;  // a is [K, M] ([batch, K, M]) instead of [M, K]
  bool b_weight = false;      // b is [N, K] (a weight matrix, as F.linear takes it) instead of [K, N]
  bool accumulate = false;    // c += a b instead of c = a b (c is read)
  Activation activation = Activation::none;
};

// c[M, N] = act(a b (+ c) (+ bias[N])), each matrix dense row-major, products summed in f32 and rounded once to c's
// dtype (f16 and bf16 on tensor cores where the backend has them; f32 exact). c is of a's dtype, or f32 with 16-bit
// a and b (the f32 sums kept). With a leading batch dimension on a, b
// and c ([batch, M, K] ...), one product per batch entry; a and b must both carry it or both not.
void gemm(api::Context& ctx, const api::TensorView& a, const api::TensorView& b, const api::TensorView& c,
          const GemmOptions& options = {}, const api::TensorView* bias = nullptr);

}  // namespace ingot::linalg
