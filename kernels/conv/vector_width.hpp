// kernels/conv/vector_width.hpp — how many elements the convolution kernels move per vector
// access: along a row (the channels-first kernels) and along channels (the channels-last ones).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ingot::kernels {

// The widest vector width W in {8, 4, 2} elements (16, 8 or 4 bytes of `elem_bytes`-byte
// elements) that divides both V (outputs per thread) and L (the row length); 1 (scalar loads and
// stores) when none does.
inline std::uint32_t row_vector_width(std::uint32_t elem_bytes, std::uint32_t V, std::uint32_t L) {
  for (const std::uint32_t bytes : {16u, 8u, 4u}) {
    const std::uint32_t w = bytes / elem_bytes;
    if (w >= 2 && V % w == 0 && L % w == 0) return w;
  }
  return 1;
}

// The channels per thread a channels-last kernel uses for `channels` when VC is requested: the
// largest power of two w <= VC that divides the channel count (1 when it is odd). Throws
// std::invalid_argument, naming `kernel`, for a VC that is not a power of two in [1, 16].
inline std::uint32_t channel_vector_width(const std::string& kernel, std::uint32_t channels, std::uint32_t requested) {
  if (requested < 1 || requested > 16 || (requested & (requested - 1)) != 0) {
    throw std::invalid_argument(kernel + ": VC = " + std::to_string(requested) +
                                " must be a power of two in [1, 16] (channels per thread)");
  }
  std::uint32_t w = requested;
  while (channels % w != 0) w /= 2;
  return w;
}

}  // namespace ingot::kernels
