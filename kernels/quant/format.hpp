// kernels/quant/format.hpp — the block-scaled weight formats: their names, block sizes, and the
// dtypes of the buffers that hold their codes and scales (layouts: docs/block-scaled-formats.md).
//
// A weight tensor is viewed as a row-major matrix [rows, cols] (for a convolution filter:
// [out_ch, in_ch/groups * kh * kw (* kd)]) and quantised in blocks of `block` consecutive
// elements of a row. A row whose length is not a multiple of the block is padded with zero
// codes up to padded_cols (the padding decodes to 0 and takes no part in the scale choice).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ingot/dtype.hpp"

namespace ingot::kernels::quant {

enum class BlockFormat : std::uint8_t {
  int8_g32_f32,  // int8 codes, one f32 scale per 32 weights
  int8_g32_f16,  // int8 codes, one f16 scale per 32 weights
  int4_g32_f32,  // two's-complement int4 codes (8 per u32 word), one f32 scale per 32 weights
  int4_g32_f16,  // int4 codes, one f16 scale per 32 weights
  mxfp8,         // OCP MX: E4M3 codes (one byte each), one E8M0 scale per 32 weights
  mxfp4,         // OCP MX: E2M1 codes (8 per u32 word), one E8M0 scale per 32 weights
  nvfp4,         // E2M1 codes (8 per u32 word), one E4M3 scale per 16 weights, one f32 global scale
};
inline constexpr int kNumBlockFormats = 7;

// What a code means.
enum class ElementKind : std::uint8_t { int8, int4, e4m3, e2m1 };
// What a block scale is.
enum class ScaleKind : std::uint8_t { f32, f16, e8m0, e4m3 };

struct FormatInfo {
  std::string_view name;  // "int8_g32_f32", ..., "nvfp4": used in kernel and variant names
  std::uint32_t block;    // weights per block scale
  ElementKind element;
  ScaleKind scale;
  DType codes_type;   // buffer "wq": i8 (int8), u8 (E4M3) or u32 (eight 4-bit codes per word)
  DType scales_type;  // buffer "wscale": f32, f16, or u8 (E8M0 / E4M3 codes)
  bool global_scale;  // buffer "wgscale": one f32 (nvfp4)
  [[nodiscard]] std::uint32_t code_bits() const {
    return element == ElementKind::int4 || element == ElementKind::e2m1 ? 4 : 8;
  }
  [[nodiscard]] std::uint32_t codes_per_element() const { return code_bits() == 4 ? 8 : 1; }  // per buffer element
};

[[nodiscard]] inline const FormatInfo& format_info(BlockFormat f) {
  static const std::array<FormatInfo, kNumBlockFormats> table{{
      {"int8_g32_f32", 32, ElementKind::int8, ScaleKind::f32, DType::i8, DType::f32, false},
      {"int8_g32_f16", 32, ElementKind::int8, ScaleKind::f16, DType::i8, DType::f16, false},
      {"int4_g32_f32", 32, ElementKind::int4, ScaleKind::f32, DType::u32, DType::f32, false},
      {"int4_g32_f16", 32, ElementKind::int4, ScaleKind::f16, DType::u32, DType::f16, false},
      {"mxfp8", 32, ElementKind::e4m3, ScaleKind::e8m0, DType::u8, DType::u8, false},
      {"mxfp4", 32, ElementKind::e2m1, ScaleKind::e8m0, DType::u32, DType::u8, false},
      {"nvfp4", 16, ElementKind::e2m1, ScaleKind::e4m3, DType::u32, DType::u8, true},
  }};
  const auto i = static_cast<std::size_t>(f);
  if (i >= table.size()) throw std::invalid_argument("unknown block format " + std::to_string(i));
  return table[i];
}

// The format with number i (0 .. kNumBlockFormats-1); throws std::invalid_argument otherwise.
[[nodiscard]] inline BlockFormat block_format(std::int64_t i) {
  if (i < 0 || i >= kNumBlockFormats) {
    throw std::invalid_argument("block format number " + std::to_string(i) + " is outside [0, " +
                                std::to_string(kNumBlockFormats) + ")");
  }
  return static_cast<BlockFormat>(i);
}

[[nodiscard]] inline std::optional<BlockFormat> parse_block_format(std::string_view name) {
  for (int i = 0; i < kNumBlockFormats; ++i) {
    if (format_info(static_cast<BlockFormat>(i)).name == name) return static_cast<BlockFormat>(i);
  }
  return std::nullopt;
}

// The shape of a quantised [rows, cols] matrix: every count a kernel's buffer extents need.
struct BlockLayout {
  BlockFormat format = BlockFormat::int8_g32_f32;
  std::uint64_t rows = 0, cols = 0;

  [[nodiscard]] const FormatInfo& info() const { return format_info(format); }
  [[nodiscard]] std::uint64_t blocks_per_row() const { return (cols + info().block - 1) / info().block; }
  // Row length after zero padding to whole blocks (a multiple of 8 for every format, so a row
  // of 4-bit codes starts on a u32 word boundary).
  [[nodiscard]] std::uint64_t padded_cols() const { return blocks_per_row() * info().block; }
  // Elements of the codes buffer: bytes for 8-bit codes, u32 words for 4-bit codes.
  [[nodiscard]] std::uint64_t code_elements() const { return rows * padded_cols() / info().codes_per_element(); }
  [[nodiscard]] std::uint64_t scale_elements() const { return rows * blocks_per_row(); }
  // Bytes of codes + scales (+ global scale) as stored.
  [[nodiscard]] std::uint64_t bytes() const {
    return code_elements() * dtype_size(info().codes_type) + scale_elements() * dtype_size(info().scales_type) +
           (info().global_scale ? 4 : 0);
  }
};

}  // namespace ingot::kernels::quant
