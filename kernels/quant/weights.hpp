// kernels/quant/weights.hpp — block-scaled weights inside a kernel: declares the buffers of one
// quantised [rows, cols] matrix and loads f32 weights from them (the weight-loading hook of the
// convolution templates).
//
//   BlockScaledWeights w(k, BlockLayout{fmt, rows, cols});   // declares wq, wscale (, wgscale)
//   Val<f32> v = w(flat);                                     // weight at flat = row*cols + col
//   Val<f32> v = w(flat, row, col);                           // the same, row and col known
//
// Buffers, in declaration order (layouts: docs/block-scaled-formats.md):
//   wq       the codes: i8 [rows*padded] (int8), u8 [rows*padded] (E4M3), or u32
//            [rows*padded/8] (int4, E2M1: eight 4-bit codes per word, element 0 in bits 3:0)
//   wscale   one scale per block: f32 or f16 [rows*blocks] (int), u8 [rows*blocks] (E8M0 / E4M3)
//   wgscale  nvfp4 only: f32 [1], the global scale
// A weight is value(code) * scale (* global), in f32, exactly as dequantise() computes it.
// The constructor loads the global scale (nvfp4) and so must run at the kernel's top level,
// where its value stays in scope for every later weight load. Reads are in range whenever
// flat < rows*cols; tail threads must pass a clamped index, as for any load.
#pragma once

#include <string>

#include "decode.hpp"
#include "format.hpp"
#include "ingot/dsl.hpp"

namespace ingot::kernels::quant {

class BlockScaledWeights {
 public:
  BlockScaledWeights(dsl::KernelBuilder& k, const BlockLayout& layout, const std::string& prefix = "w")
      : layout_(layout) {
    const FormatInfo& fi = layout.info();
    const auto codes = static_cast<std::uint32_t>(layout.code_elements());
    const auto scales = static_cast<std::uint32_t>(layout.scale_elements());
    switch (fi.codes_type) {
      case DType::i8: codes_i8_ = k.in<i8>(prefix + "q", codes); break;
      case DType::u8: codes_u8_ = k.in<u8>(prefix + "q", codes); break;
      default: codes_u32_ = k.in<u32>(prefix + "q", codes); break;
    }
    switch (fi.scales_type) {
      case DType::f32: scales_f32_ = k.in<f32>(prefix + "scale", scales); break;
      case DType::f16: scales_f16_ = k.in<f16>(prefix + "scale", scales); break;
      default: scales_u8_ = k.in<u8>(prefix + "scale", scales); break;
    }
    if (fi.global_scale) {
      auto g = k.in<f32>(prefix + "gscale", 1u);
      global_ = k.let(prefix + "_global", dsl::load(g, 0u));
    }
  }

  [[nodiscard]] const BlockLayout& layout() const { return layout_; }

  // The weight at flat index row*cols + col of the dense matrix.
  dsl::Val<f32> operator()(const dsl::Val<u32>& flat) const {
    const auto cols = static_cast<std::uint32_t>(layout_.cols),
               padded = static_cast<std::uint32_t>(layout_.padded_cols());
    if (cols == padded) return load_at(flat);
    return load_at((flat / cols) * padded + flat % cols);
  }
  // The weight at (row, col).
  dsl::Val<f32> at(const dsl::Val<u32>& row, const dsl::Val<u32>& col) const {
    return load_at(row * static_cast<std::uint32_t>(layout_.padded_cols()) + col);
  }
  // The weight at flat = row*cols + col, given all three (the direct-convolution hook's form):
  // no division when the caller already has row and col.
  dsl::Val<f32> operator()(const dsl::Val<u32>& flat, const dsl::Val<u32>& row, const dsl::Val<u32>& col) const {
    if (layout_.cols == layout_.padded_cols()) return load_at(flat);
    return at(row, col);
  }

 private:
  // pos: index into the padded [rows, padded_cols] matrix.
  dsl::Val<f32> load_at(const dsl::Val<u32>& pos) const {
    using namespace ingot::dsl;
    const FormatInfo& fi = layout_.info();
    Val<f32> value;
    switch (fi.element) {
      case ElementKind::int8: value = cast<f32>(load(codes_i8_, pos)); break;
      case ElementKind::int4: value = cast<f32>(sign_extend_int4(nibble_of(load(codes_u32_, pos / 8u), pos))); break;
      case ElementKind::e4m3: value = decode_e4m3(cast<u32>(load(codes_u8_, pos))); break;
      case ElementKind::e2m1: value = decode_e2m1(nibble_of(load(codes_u32_, pos / 8u), pos)); break;
    }
    const auto block = pos / fi.block;
    Val<f32> scale;
    switch (fi.scale) {
      case ScaleKind::f32: scale = load(scales_f32_, block); break;
      case ScaleKind::f16: scale = cast<f32>(load(scales_f16_, block)); break;
      case ScaleKind::e8m0: scale = decode_e8m0(cast<u32>(load(scales_u8_, block))); break;
      case ScaleKind::e4m3: scale = decode_e4m3(cast<u32>(load(scales_u8_, block))); break;
    }
    return fi.global_scale ? value * scale * global_ : value * scale;
  }

  BlockLayout layout_;
  dsl::In<i8> codes_i8_;
  dsl::In<u8> codes_u8_;
  dsl::In<u32> codes_u32_;
  dsl::In<f32> scales_f32_;
  dsl::In<f16> scales_f16_;
  dsl::In<u8> scales_u8_;
  dsl::Val<f32> global_;
};

}  // namespace ingot::kernels::quant
