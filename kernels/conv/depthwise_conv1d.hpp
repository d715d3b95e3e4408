// kernels/conv/depthwise_conv1d.hpp — depthwise 1-D convolution, channel-first, V outputs per
// thread with vector loads and stores (conv1d_rows.hpp).
//
//   x [B, C, L], w [C, K], optional bias [C] -> y [B, C, O],
//   O = (L + 2*pad - dilation*(K-1) - 1) / stride + 1,
//   y[b,c,o] = bias[c] + sum_k x[b, c, o*stride + k*dilation - pad] * w[c, k]  (zero padding).
// B is a run-time scalar; C, L, K, stride, pad, dilation, bias and V are specialisation
// constants. Each thread computes V consecutive outputs of one (b, c) row (V = 8: 16 bytes of
// a 16-bit dtype, two 16-byte vectors of f32; the registry's default where a case names neither
// V nor shfl is V = 16 with the chunk exchange for 16-bit rows of row-shifted groups read as
// 16-byte chunks whose window and batch the exchange takes, else 8 — depthwise_conv1d.cpp);
// consecutive threads take consecutive groups of one row. Inputs come from aligned vector loads
// of W = 2, 4 or 8 elements (the widest of 4, 8 or 16 bytes dividing V and L), each element
// converted once; when L (or V) admits no vector, from scalar loads. Outputs: aligned vector
// stores of W elements for every group inside its row; when O % V != 0 the groups follow the
// flat output index aligned to V (ceil(O/V) + 1 groups per row) and the row's partial first and last groups use
// guarded scalar stores. Launch B * C * groups() threads (any group size). Tail threads clamp their index onto thread
// 0's operands and skip their stores. Accumulates in f32 for every dtype.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "conv1d_rows.hpp"
#include "ingot/dsl.hpp"

namespace ingot::kernels {

struct DepthwiseConv1dSpec {
  std::uint32_t channels, length, ksize, stride, pad, dilation;
  bool bias;
  std::uint32_t outputs_per_thread = 8;  // V, 1..64
  bool chunk_shuffle = false;            // Rows1dGeom::chunk_shuffle (needs launch bounds)
  bool wide_index = false;               // i64 rows and offsets (blocks/index_width.hpp), for 2^32 elements or more
  [[nodiscard]] std::uint32_t out_len() const;
  // Throws std::invalid_argument for an impossible shape, V outside [1, 64] or rows too long for
  // 32-bit positions.
  void validate() const;
  // validate(), and throws std::invalid_argument unless `batch` rows of every buffer (and the
  // thread count) fit the index type: u32, or i64 with wide_index.
  void check_batch(std::uint64_t batch) const;
  [[nodiscard]] Rows1dGeom geom() const {
    return {channels, length, out_len(), ksize, stride, dilation, pad, outputs_per_thread, chunk_shuffle};
  }
  // Threads per (b, c) row; the launch has B * C * groups() threads.
  [[nodiscard]] std::uint32_t groups() const { return geom().groups(); }
};

// I: u32, or i64 where s.wide_index (the caller traces the one s names).
template <class T, blocks::IndexType I = u32>
void depthwise_conv1d(dsl::KernelBuilder& k, const DepthwiseConv1dSpec& s) {
  using namespace ingot::dsl;
  s.validate();
  const std::uint32_t C = s.channels, L = s.length, K = s.ksize, O = s.out_len();
  const auto io = declare_rows1d_io<T, I>(k, C, L, K, O, s.bias);
  conv1d_rows<T, I>(k, s.geom(), io, [](const Val<f32>& z) { return z; }, {});
}

}  // namespace ingot::kernels
