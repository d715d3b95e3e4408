// ingot/passes/legalise.hpp — rewrites ops a dialect cannot print into ops it can.
#pragma once

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include "ingot/ir.hpp"

namespace ingot::passes {

struct LegaliseOptions {
  std::string dialect_name;        // for error messages
  std::set<ir::Op> unsupported;    // ops the dialect cannot print
  bool native_shuffle = true;      // false: Shuffle statements are exchanged through shared memory
  bool native_mma = true;          // false: Mma statements are exchanged through shared memory
  bool native_async_copy = true;   // false: CopyAsync statements copy at once, commits and waits go
  bool native_load_matrix = true;  // false: LoadMatrix statements become shuffles and pair loads
  // Shared memory (bytes) a work-group may count on where the kernel runs (0: no limit): where the mma exchange's
  // f32 slots would take the kernel over it, they hold the 16-bit operands instead (half the bytes).
  std::uint64_t shared_budget = 0;
};

struct LegaliseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Decomposes unsupported ops:
//   Erf  -> sign(x) * (1 - poly(t) * exp(-x*x)), t = 1/(1 + 0.3275911|x|)
//           (Abramowitz & Stegun 7.1.26, absolute error <= 1.5e-7 plus f32 rounding);
// and throws LegaliseError naming the op and dialect when an unsupported op has no
// decomposition. Without native_shuffle, each Shuffle `v = shuffle(a, b)` over L lanes becomes
//   barrier; scratch[lid] = bits(a); barrier; v = value(scratch[(lid & ~(L-1)) + b])
// with lid the linear local id and scratch a u32 shared array of max_group_threads elements
// (the verifier requires launch bounds on kernels with shuffles; the first barrier keeps a
// previous exchange's reads ahead of this one's writes). Without native_mma, each Mma becomes
//   barrier; mma[lid*12 + i] = round(a_i) (i < 8), mma[lid*12 + 8 + i] = round(b_i) (i < 4);
//   barrier; d_i = c_i + sum over k < 16 of A[row][k] * B[k][col] (f32 fma, k in order)
// (each step k reading the lane's two A and two B values once; the linear local id is a let at the kernel's top)
// with round() to the Mma's f16/bf16 and A, B read from the owning lanes' slots (the fragment
// layout of ir.hpp) in an f32 shared array of 12 * max_group_threads elements; where that array would take the
// kernel's shared memory over options.shared_budget (and every Mma has one elem), the array holds the rounded values
// in the elem type instead: each lane's slots 2j, 2j + 1 (steps k, k + 1) stored and read as one pair, every value
// read converted to f32 (exact), the same products added in the same order. Without
// native_async_copy, each CopyAsync `shared[a..] <- mem[b..] x W if c` becomes
//   (v_0 .. v_W-1) = load_vec mem[b]; store_vec shared[a] = (select(c, v_j, 0) ...)
// (a copy completed at once, which ir.hpp's rules allow) and AsyncCommit/AsyncWait statements
// are removed. Without native_load_matrix, each LoadMatrix `(v0..v7) = load_matrix(shared[a])`
// becomes, for i < 4 (lane = lid % 32),
//   r_i = shuffle(a, lane 8i + lane/4 of 32); (v_2i, v_2i+1) = load_vec shared[r_i + 2 (lane % 4)]
// and where the dialect has no shuffles either, the four rows share one exchange through a u32
// shared array of max_group_threads elements:
//   barrier; scratch[lid] = a; barrier; r_i = scratch[(lid & ~31) + 8i + lane/4]; (v_2i, v_2i+1) = ...
// A transposed LoadMatrix (load_matrix_trans) takes two rows per matrix, those of lanes 8i + 2(lane%4) + j (j < 2),
// and loads element lane/4 of each as v_2i+j (by shuffles, or from the one exchange).
// Other statements are unchanged.
[[nodiscard]] ir::Kernel legalise(const ir::Kernel& k, const LegaliseOptions& options);

}  // namespace ingot::passes
