// kernels/conv/blockscaled_conv.hpp — direct convolutions with block-scaled (quantised) weights:
// conv2d, conv3d and depthwise conv2d, channels-first, in every format of kernels/quant.
//
// The convolution itself is direct_conv (direct_conv.hpp) unchanged; only the weight source
// differs: BlockScaledWeightSource declares the quantised weight buffers where direct_conv
// expects the weights and loads each weight through quant::BlockScaledWeights (decode the code,
// multiply by its block's scale). The filter is the matrix [O, (C/groups)*K0*K1*...] that
// direct_conv's hook indexes by (row, col), scaled in blocks along its rows.
//
//   parameters: batch, x [B, C, S...], wq, wscale (, wgscale for nvfp4), [bias [O]], y [B, O, P...]
//   (buffer layouts: docs/block-scaled-formats.md). Input, bias and output are T (f32, f16,
//   bf16); accumulation is f32; tail threads clamp their reads onto element 0 and skip their
//   store (direct_conv's contract).
#pragma once

#include "direct_conv.hpp"
#include "ingot/dsl.hpp"
#include "quant/format.hpp"
#include "quant/weights.hpp"

namespace ingot::kernels {

// direct_conv's weight hook for block-scaled weights of one format.
struct BlockScaledWeightSource {
  quant::BlockFormat format = quant::BlockFormat::int8_g32_f32;
  auto operator()(dsl::KernelBuilder& k, const ConvSpec& s) const {
    const quant::BlockScaledWeights w(k, quant::BlockLayout{format, s.out_channels, s.weight_cols()});
    return [w](const dsl::Val<u32>& flat, const dsl::Val<u32>& row, const dsl::Val<u32>& col) {
      return w(flat, row, col);
    };
  }
};

// A block-scaled direct convolution (any rank, groups and layout that direct_conv supports).
template <class T>
void blockscaled_conv(dsl::KernelBuilder& k, const ConvSpec& s, quant::BlockFormat format) {
  direct_conv<T>(k, s, BlockScaledWeightSource{format});
}

}  // namespace ingot::kernels
