// Element-type facts and the 16-bit float conversions every backend reproduces.
#include "ingot/dtype.hpp"

#include <bit>
#include <cmath>
#include <cstring>

namespace ingot {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::u32: return "u32";
    case DType::i64: return "i64";
    case DType::boolean: return "bool";
    case DType::u8: return "u8";
    case DType::i8: return "i8";
    case DType::u16: return "u16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (int i = 0; i < kNumDTypes; ++i) {
    auto t = static_cast<DType>(i);
    if (dtype_name(t) == s) return t;
  }
  return std::nullopt;
}

int dtype_bits(DType t) { return t == DType::boolean ? 1 : static_cast<int>(dtype_size(t) * 8); }

// f32 -> f16, round to nearest even. Written with integer operations only, exactly as the
// printers emit it for backends, so that every backend rounds identically.
std::uint16_t f32_to_f16_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or NaN
    return static_cast<std::uint16_t>(sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u));
  }
  if (absx >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (absx < 0x38800000u) {                                                    // result is subnormal or zero
    if (absx < 0x33000000u) return static_cast<std::uint16_t>(sign);           // below half the least
    const std::uint32_t e = absx >> 23;                                        // 102..112
    const std::uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - e;  // 14..24
    std::uint32_t r = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<std::uint16_t>(sign | r);
  }
  // normal: rebias exponent 127 -> 15, keep 10 mantissa bits, round to nearest even
  std::uint32_t r = (absx - 0x38000000u) >> 13;
  const std::uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<std::uint16_t>(sign | r);
}

float f16_bits_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu;
  std::uint32_t m = h & 0x3ffu;
  std::uint32_t out = 0;
  if (e == 0x1f) {
    out = sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u);
  } else if (e == 0) {
    if (m == 0) {
      out = sign;
    } else {  // subnormal: normalise
      std::uint32_t exp = 113;
      while ((m & 0x400u) == 0) {
        m <<= 1;
        --exp;
      }
      out = sign | (exp << 23) | ((m & 0x3ffu) << 13);
    }
  } else {
    out = sign | ((e + 112u) << 23) | (m << 13);
  }
  return std::bit_cast<float>(out);
}

std::uint16_t f32_to_bf16_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

float bf16_bits_to_f32(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

}  // namespace ingot
