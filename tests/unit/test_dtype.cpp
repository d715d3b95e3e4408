// 16-bit float conversions: exact known values, round-to-nearest-even, and agreement with the
// compiler's own _Float16 conversion (an independent oracle) over many inputs.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "ingot/dtype.hpp"

using namespace ingot;

TEST(DType, NamesRoundTrip) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto t = static_cast<DType>(i);
    EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  }
  EXPECT_FALSE(parse_dtype("f64").has_value());
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::i64), 8u);
  EXPECT_TRUE(is_16bit_float(DType::f16));
  EXPECT_FALSE(is_compute_type(DType::u8));
}

TEST(DType, F16KnownValues) {
  EXPECT_EQ(f32_to_f16_bits(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16_bits(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16_bits(65519.0f), 0x7bff);               // below the rounding midpoint
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7c00);               // ties to even: rounds to infinity
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000);  // tie to even -> 0
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(f32_to_f16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie, even stays
  EXPECT_EQ(f32_to_f16_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie, odd rounds up
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(f16_bits_to_f32(f32_to_f16_bits(std::nanf("")))));
  EXPECT_EQ(f16_bits_to_f32(0x3555), 0.333251953125f);
}

TEST(DType, F16AllPatternsRoundTrip) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_bits_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16_bits(f), h) << "pattern " << h;
  }
}

TEST(DType, F16MatchesCompilerConversion) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 2000000; ++i) {
    const float f = std::bit_cast<float>(bits(rng));
    if (std::isnan(f)) continue;
    const _Float16 h = static_cast<_Float16>(f);
    ASSERT_EQ(f32_to_f16_bits(f), std::bit_cast<std::uint16_t>(h)) << "f = " << f;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(f16_bits_to_f32(std::bit_cast<std::uint16_t>(h))),
              std::bit_cast<std::uint32_t>(static_cast<float>(h)));
  }
}

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16_bits(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even
  EXPECT_EQ(f32_to_bf16_bits(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, odd up
  EXPECT_EQ(f32_to_bf16_bits(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_EQ(f32_to_bf16_bits(std::bit_cast<float>(0x7f7fffffu)), 0x7f80);  // overflow -> inf
  EXPECT_TRUE(std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(std::nanf("")))));
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = bf16_bits_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_bf16_bits(f), h);
  }
}
