// ingot/dtype.hpp — element types of the IR and their host-side representation.
//
// Contract: f16 and bf16 are *storage* types. They are stored as 16 bits and converted to and
// from f32 with round-to-nearest-even; the conversions below are the single definition that
// the interpreter uses and that every printer reproduces bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ingot {

// Every element type the IR knows. Order is part of no ABI; names come from dtype_name().
enum class DType : std::uint8_t {
  f32,
  f16,
  bf16,
  i32,
  u32,
  i64,
  boolean,
  u8,
  i8,
  u16,
};

inline constexpr int kNumDTypes = 10;

[[nodiscard]] std::string_view dtype_name(DType t);
// Parses "f32", "f16", "bf16", "i32", "u32", "i64", "bool", "u8", "i8", "u16".
[[nodiscard]] std::optional<DType> parse_dtype(std::string_view s);
// Size in bytes of one element as stored in a buffer (bool is stored as one byte).
[[nodiscard]] constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32:
    case DType::i32:
    case DType::u32: return 4;
    case DType::f16:
    case DType::bf16:
    case DType::u16: return 2;
    case DType::i64: return 8;
    case DType::boolean:
    case DType::u8:
    case DType::i8: return 1;
  }
  return 0;
}
// f32, f16, bf16
[[nodiscard]] constexpr bool is_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }
// f16, bf16: storage only, computed in f32
[[nodiscard]] constexpr bool is_16bit_float(DType t) { return t == DType::f16 || t == DType::bf16; }
// i32 u32 i64 u8 i8 u16
[[nodiscard]] constexpr bool is_integer(DType t) {
  return t == DType::i32 || t == DType::u32 || t == DType::i64 || t == DType::u8 || t == DType::i8 || t == DType::u16;
}
[[nodiscard]] constexpr bool is_signed_integer(DType t) { return t == DType::i32 || t == DType::i64 || t == DType::i8; }
// Types arithmetic is defined on: f32, i32, u32, i64. Narrow and 16-bit types are
// converted (cast) to one of these before computing.
[[nodiscard]] constexpr bool is_compute_type(DType t) {
  return t == DType::f32 || t == DType::i32 || t == DType::u32 || t == DType::i64;
}
[[nodiscard]] int dtype_bits(DType t);

// Round-to-nearest-even conversions, identical on every backend. NaN stays NaN (quiet), an
// overflow rounds to infinity.
[[nodiscard]] std::uint16_t f32_to_f16_bits(float f);
[[nodiscard]] float f16_bits_to_f32(std::uint16_t h);
[[nodiscard]] std::uint16_t f32_to_bf16_bits(float f);
[[nodiscard]] float bf16_bits_to_f32(std::uint16_t h);

// Host-side tag types for the 16-bit floats. They hold the bits; arithmetic goes through f32.
struct f16 {
  std::uint16_t bits = 0;
  f16() = default;
  explicit f16(float f) : bits(f32_to_f16_bits(f)) {}
  static f16 from_bits(std::uint16_t b) {
    f16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return f16_bits_to_f32(bits); }
};
struct bf16 {
  std::uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float f) : bits(f32_to_bf16_bits(f)) {}
  static bf16 from_bits(std::uint16_t b) {
    bf16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return bf16_bits_to_f32(bits); }
};

// Short aliases used by kernels: Val<f32>, In<u32>, ...
using f32 = float;
using i32 = std::int32_t;
using u32 = std::uint32_t;
using i64 = std::int64_t;
using u8 = std::uint8_t;
using i8 = std::int8_t;
using u16 = std::uint16_t;

template <class T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::f32;
};
template <>
struct DTypeOf<f16> {
  static constexpr DType value = DType::f16;
};
template <>
struct DTypeOf<bf16> {
  static constexpr DType value = DType::bf16;
};
template <>
struct DTypeOf<std::int32_t> {
  static constexpr DType value = DType::i32;
};
template <>
struct DTypeOf<std::uint32_t> {
  static constexpr DType value = DType::u32;
};
template <>
struct DTypeOf<std::int64_t> {
  static constexpr DType value = DType::i64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::boolean;
};
template <>
struct DTypeOf<std::uint8_t> {
  static constexpr DType value = DType::u8;
};
template <>
struct DTypeOf<std::int8_t> {
  static constexpr DType value = DType::i8;
};
template <>
struct DTypeOf<std::uint16_t> {
  static constexpr DType value = DType::u16;
};

template <class T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

}  // namespace ingot
