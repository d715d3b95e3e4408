// kernels/quant/element_codecs.hpp — host encoders and decoders of the narrow number formats the
// block-scaled weights use: E4M3 (OCP FP8, "fn" variant), E2M1 (OCP FP4), E8M0 (OCP MX scale)
// and two's-complement int4. These are the definitions the DSL decoders (decode.hpp) must
// reproduce bit for bit; the unit tests check every code.
//
//   E4M3  s.eeee.mmm, bias 7. e=0: (-1)^s * m/8 * 2^-6 (subnormal); e>0: (-1)^s * (1+m/8) * 2^(e-7).
//         No infinity; S.1111.111 (0x7F, 0xFF) is NaN; largest finite 448 (0x7E).
//   E2M1  s.ee.m, bias 1: magnitudes {0, 0.5, 1, 1.5, 2, 3, 4, 6} for codes 0..7; bit 3 = sign.
//   E8M0  unsigned exponent: 2^(e-127) for e in 0..254; 0xFF is NaN. No sign, no zero.
//   int4  4-bit two's complement: 0..7 -> 0..7, 8..15 -> -8..-1.
//
// Encoders round to nearest, ties to the even code (the code whose lowest bit is 0), and
// saturate: a magnitude beyond the largest finite value becomes that value. A value that rounds
// to zero is encoded as +0 (code 0), whatever its sign. NaN encodes as the format's NaN.
#pragma once

#include <cstdint>

namespace ingot::kernels::quant {

[[nodiscard]] float e4m3_to_float(std::uint32_t code);  // code in [0, 255]
[[nodiscard]] std::uint8_t float_to_e4m3(double v);
[[nodiscard]] float e2m1_to_float(std::uint32_t code);  // code in [0, 15]
[[nodiscard]] std::uint8_t float_to_e2m1(double v);
[[nodiscard]] float e8m0_to_float(std::uint32_t code);        // code in [0, 255]; code 0 is 2^-127 (an f32 subnormal)
[[nodiscard]] std::int32_t int4_value(std::uint32_t nibble);  // nibble in [0, 15]

inline constexpr double kE4M3Max = 448.0;
inline constexpr double kE2M1Max = 6.0;
inline constexpr int kE4M3Emax = 8;  // exponent of the largest E4M3 binade (448 = 1.75 * 2^8)
inline constexpr int kE2M1Emax = 2;  // exponent of the largest E2M1 binade (6 = 1.5 * 2^2)

}  // namespace ingot::kernels::quant
