// kernels/quant/decode.hpp — DSL decoders of the narrow number formats: each builds the f32 (or
// i32) value of a code from integer operations, shifts, masks, select and bitcast, with no
// lookup table. They reproduce the host codecs (element_codecs.hpp) bit for bit, NaN payload
// included; the unit tests check every code on the interpreter and on OpenCL.
//
// Every decoder takes the code zero-extended to u32 and requires it to be in range (a byte for
// E4M3 / E8M0, a nibble for E2M1 / int4). None depends on the device's handling of subnormal
// f32 values except decode_e8m0(0) = 2^-127, which is an f32 subnormal and may read as 0 on a
// device that flushes subnormals (the quantiser only emits it for blocks with amax < 2^-119).
#pragma once

#include "ingot/dsl.hpp"

namespace ingot::kernels::quant {

inline constexpr std::uint32_t kF32QuietNaN = 0x7fc00000u;

// E4M3 s.eeee.mmm (bias 7, no infinity, S.1111.111 = NaN).
inline dsl::Val<f32> decode_e4m3(const dsl::Val<u32>& code) {
  using namespace ingot::dsl;
  const auto sign = (code & 0x80u) << 24;
  const auto e = (code >> 3) & 15u;
  const auto m = code & 7u;
  const auto normal = ((e + 120u) << 23) | (m << 20);                // rebias 7 -> 127
  const auto subnormal = bitcast<u32>(cast<f32>(m) * 0.001953125f);  // m * 2^-9, exact and normal in f32
  const auto mag = select((code & 0x7fu) == 0x7fu, kF32QuietNaN, select(e == 0u, subnormal, normal));
  return bitcast<f32>(mag | sign);
}

// E2M1 s.ee.m (bias 1): magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6.
inline dsl::Val<f32> decode_e2m1(const dsl::Val<u32>& code) {
  using namespace ingot::dsl;
  const auto sign = (code & 8u) << 28;
  const auto e = (code >> 1) & 3u;
  const auto m = code & 1u;
  const auto normal = ((e + 126u) << 23) | (m << 22);         // rebias 1 -> 127
  const auto mag = select(e == 0u, m * 0x3f000000u, normal);  // e = 0: 0 or 0.5 (0x3f000000)
  return bitcast<f32>(mag | sign);
}

// E8M0: 2^(code - 127); 0xFF = NaN; code 0 = 2^-127 (f32 subnormal 0x00400000).
inline dsl::Val<f32> decode_e8m0(const dsl::Val<u32>& code) {
  using namespace ingot::dsl;
  return bitcast<f32>(select(code == 0u, 0x00400000u, select(code == 255u, kF32QuietNaN, code << 23)));
}

// Two's-complement int4 (nibble in [0, 15]) to i32: arithmetic shift of the nibble placed in
// the top four bits.
inline dsl::Val<i32> sign_extend_int4(const dsl::Val<u32>& nibble) {
  using namespace ingot::dsl;
  return bitcast<i32>(nibble << 28) >> 28;
}

// Nibble `index mod 8` of a u32 word; nibble 0 is the least significant (bits 3:0).
inline dsl::Val<u32> nibble_of(const dsl::Val<u32>& word, const dsl::Val<u32>& index) {
  using namespace ingot::dsl;
  return (word >> ((index & 7u) * 4u)) & 15u;
}

}  // namespace ingot::kernels::quant
