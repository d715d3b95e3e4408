// Host codecs of E4M3, E2M1, E8M0 and int4 (contracts in element_codecs.hpp).
#include "element_codecs.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace ingot::kernels::quant {

namespace {

// Nearest of the non-negative finite codes 0..max_code (magnitudes increasing with the code),
// ties to the even code; beyond the largest magnitude, the largest (saturation).
template <class Decode>
std::uint32_t nearest_magnitude_code(double a, std::uint32_t max_code, Decode decode) {
  if (a >= decode(max_code)) return max_code;
  std::uint32_t lo = 0;  // largest code with decode(lo) <= a
  while (lo + 1 <= max_code && static_cast<double>(decode(lo + 1)) <= a) ++lo;
  if (static_cast<double>(decode(lo)) == a) return lo;
  const double below = a - decode(lo), above = static_cast<double>(decode(lo + 1)) - a;
  if (below < above) return lo;
  if (above < below) return lo + 1;
  return (lo % 2 == 0) ? lo : lo + 1;
}

}  // namespace

float e4m3_to_float(std::uint32_t code) {
  const bool neg = (code & 0x80u) != 0;
  const std::uint32_t e = (code >> 3) & 15u, m = code & 7u;
  if ((code & 0x7fu) == 0x7fu)
    return neg ? -std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::quiet_NaN();
  const float mag = e == 0 ? std::ldexp(static_cast<float>(m), -9)
                           : std::ldexp(1.0f + static_cast<float>(m) / 8.0f, static_cast<int>(e) - 7);
  return neg ? -mag : mag;
}

std::uint8_t float_to_e4m3(double v) {
  if (std::isnan(v)) return 0x7f;
  const std::uint32_t mag = nearest_magnitude_code(std::fabs(v), 0x7e, e4m3_to_float);
  return static_cast<std::uint8_t>(mag == 0 ? 0 : (std::signbit(v) ? 0x80u : 0u) | mag);
}

float e2m1_to_float(std::uint32_t code) {
  const bool neg = (code & 8u) != 0;
  const std::uint32_t e = (code >> 1) & 3u, m = code & 1u;
  const float mag =
      e == 0 ? 0.5f * static_cast<float>(m) : std::ldexp(1.0f + 0.5f * static_cast<float>(m), static_cast<int>(e) - 1);
  return neg ? -mag : mag;
}

std::uint8_t float_to_e2m1(double v) {
  if (std::isnan(v)) return 0;  // E2M1 has no NaN; the quantiser never passes one (checked there)
  const std::uint32_t mag = nearest_magnitude_code(std::fabs(v), 7, e2m1_to_float);
  return static_cast<std::uint8_t>(mag == 0 ? 0 : (std::signbit(v) ? 8u : 0u) | mag);
}

float e8m0_to_float(std::uint32_t code) {
  if (code == 255) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(code) - 127);
}

std::int32_t int4_value(std::uint32_t nibble) {
  const auto n = static_cast<std::int32_t>(nibble & 15u);
  return n >= 8 ? n - 16 : n;
}

}  // namespace ingot::kernels::quant
