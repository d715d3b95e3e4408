// kernels/quant/quantise.hpp — the host quantiser and dequantiser of block-scaled weights.
//
// quantise() turns a dense row-major [rows, cols] matrix into exactly the buffers a kernel
// reads (layouts: format.hpp and docs/block-scaled-formats.md); dequantise() turns them back
// into f32 weights computed exactly as the DSL loader (weights.hpp) computes them, so the two
// agree bit for bit.
//
// Scale rule, per block of `block` consecutive weights of a row, amax = max |w| over the block's
// real (unpadded) weights:
//   int8 / int4 (qmax = 127 / 7): s = amax / qmax rounded to the scale type (f32 or f16, RNE;
//       an f16 overflow is clamped to 65504); q = clamp(rne(w / s), -qmax, qmax). A zero scale
//       gives all-zero codes. The codes -128 / -8 decode but are never produced.
//   mxfp8 / mxfp4 (OCP MX v1.0): E8M0 scale X = 2^(floor(log2(amax)) - emax_elem), emax_elem = 8
//       (E4M3) or 2 (E2M1), the exponent clamped to [-127, 127]; codes = rne(w / X), saturating
//       at +-448 / +-6. A block with amax = 0 gets X = 1 (code 127) and zero codes.
//   nvfp4: one global f32 scale g = amax_tensor / (448 * 6) (1 when the tensor is all zeros);
//       block scale sb = E4M3(rne(amax / (6 * g))), saturating at 448; codes = rne(w / (sb * g)),
//       saturating at +-6; a block whose sb rounds to 0 gets zero codes.
//   Weights decode as value(code) * scale (* g, for nvfp4), in f32, in that order.
// Non-finite weights are rejected (std::invalid_argument).
#pragma once

#include <cstdint>
#include <vector>

#include "format.hpp"

namespace ingot::kernels::quant {

// A quantised matrix, as the values of the kernel's buffers (the harness's HostData form: each
// element as a double in its buffer's dtype: i8 code values, u8 codes, u32 words, f32 or f16
// scale values).
struct QuantisedMatrix {
  BlockLayout layout;
  std::vector<double> codes;   // layout.code_elements() values of layout.info().codes_type
  std::vector<double> scales;  // layout.scale_elements() values of layout.info().scales_type
  float global_scale = 1.0f;   // nvfp4; 1 for the other formats
};

[[nodiscard]] QuantisedMatrix quantise(BlockFormat f, std::uint64_t rows, std::uint64_t cols,
                                       const std::vector<double>& w);

// The f32 weights [rows, cols] (padding dropped). Throws std::invalid_argument when the buffers
// do not have the layout's sizes.
[[nodiscard]] std::vector<float> dequantise(const QuantisedMatrix& q);

// The code of element (row, col) (col may lie in the padding): an i8 value, a byte, or a nibble.
[[nodiscard]] std::uint32_t code_at(const QuantisedMatrix& q, std::uint64_t row, std::uint64_t col);
// value(code) of one code of format f, as f32 (int codes are given as their stored bits: an i8
// byte or a nibble).
[[nodiscard]] float element_value(BlockFormat f, std::uint32_t code);
// The f32 block scale of one stored scale element (an f32/f16 value or a u8 code).
[[nodiscard]] float scale_value(BlockFormat f, double stored);

}  // namespace ingot::kernels::quant
