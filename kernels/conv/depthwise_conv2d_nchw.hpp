// kernels/conv/depthwise_conv2d_nchw.hpp — depthwise 2-D convolution, NCHW, a VH x VW patch of
// outputs per thread with vector loads and stores (the kernel behind depthwise_conv2d).
//
//   x [B, C, H, W], w [C, kh, kw], optional bias [C] -> y [B, C, P, Q],
//   P = (H + 2*pad_h - dil_h*(kh-1) - 1) / stride_h + 1 (Q likewise),
//   y[b,c,p,q] = bias[c] + sum_{a,e} x[b, c, p*stride_h + a*dil_h - pad_h, q*stride_w + e*dil_w - pad_w] * w[c,a,e]
//   (zero padding). Parameters: batch (run-time u32), x, w, [bias], y — as direct_conv.hpp.
//
// Mapping: thread i takes tile t = i % tiles of plane (b*C + c) = i / tiles, tiles =
// ceil(P/VH) * ceil(Q/VW) in row-major order (consecutive threads: neighbouring column groups
// of one row of tiles); the tile is outputs [oh0, oh0+VH) x [ow0, ow0+VW). The kh*kw weights
// and the bias are loaded once per thread into registers. Input rows are walked in order;
// each row segment a tile needs is read with aligned vector loads of Wv = 2, 4 or 8 elements
// (the widest of 4, 8 or 16 bytes dividing VW and W; scalar loads when none does: W = 56 bf16
// rows are 112 bytes, so 16-byte vectors), each element converted to f32 once and used for
// every output it feeds (f32 accumulators, fma in tap order after the bias). The column offset
// (ow0*stride_w - pad_w) mod Wv is a trace-time constant because ow0 is a multiple of VW. Rows
// that can lie outside the input (trace-time bounds say which) are skipped by a branch; chunks
// that can lie outside load a clamped in-range address and select 0. Each output row is stored right after its last
// input row (so about kh*dh/sh rows of accumulators are live at a time): aligned vectors of Wo elements (the widest
// dividing VW and Q) for whole column groups, guarded scalar stores for a partial last group or a scalar layout; rows
// past P are skipped. Tail threads clamp onto thread 0's operands and skip every store.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "direct_conv.hpp"
#include "ingot/dsl.hpp"
#include "tile_columns.hpp"
#include "vector_width.hpp"

namespace ingot::kernels {

struct DepthwiseConv2dTile {
  std::uint32_t vh = 1, vw = 8;  // outputs per thread: VH rows x VW columns
  // Load (and convert) every input row of the tile before the first multiply-add, so all of the
  // thread's loads are in flight at once; else each row is loaded just before its arithmetic.
  bool preload = true;
  // With preload: 0 loads every row first; n > 0 loads each row n rows ahead of its arithmetic
  // (tall tiles: rows rr .. rr + n in flight while row rr is multiplied, not all VH + kh - 1).
  std::uint32_t ahead = 0;
  // Halo columns from the neighbouring lanes by sub-group shuffle instead of loads
  // (tile_columns.hpp HaloExchange); needs preload, stride 1 along W, halos that lie outside the
  // row for its first and last tiles, and launch bounds: On throws where it does not apply,
  // WhereItApplies (the f32 default) falls back to loads there.
  enum class Shuffle { Off, On, WhereItApplies };
  Shuffle halo_shuffle = Shuffle::Off;
  // One plane per work-group, staged in shared memory (depthwise_conv2d_nchw_smem.hpp); preload
  // does not apply; halo_shuffle On takes the halo columns from the neighbour lanes' staged rows
  // (WhereItApplies counts as Off there).
  bool smem = false;
  // 16-bit elements: the tensor-core kernel (depthwise_conv2d_nchw_mma.hpp; the tile fields do not
  // apply); f32 has no tensor-core path and runs the tiled kernel.
  bool mma = false;
  // Launch bounds must be declared (a shuffle may be emitted).
  [[nodiscard]] bool may_shuffle() const { return halo_shuffle != Shuffle::Off; }
};

// The default tile for a window of kh rows and elements of elem_bytes (docs/performance.md s2-s5, s19): for kh < 5,
// 2x8 with every input row preloaded in 16-bit types, 1x8 preloaded with halo columns by shuffle where that applies in
// f32 (each halo column loaded once per warp); for kh >= 5, 2x8 row by row (preloading 8 rows of 14 columns needs ~145
// registers), and in f32 7x8 from the plane staged in shared memory (smem: every input element read from global
// memory once) — where the plane fits, which the caller checks (depthwise_conv2d_smem_layout; else 2x8 row by row).
inline DepthwiseConv2dTile depthwise_conv2d_default_tile(std::uint32_t kh, std::size_t elem_bytes) {
  if (kh < 5 && elem_bytes >= 4) return {1u, 8u, true, 0u, DepthwiseConv2dTile::Shuffle::WhereItApplies};
  if (elem_bytes >= 4) return {7u, 8u, false, 0u, DepthwiseConv2dTile::Shuffle::Off, true};
  return {2u, 8u, kh < 5};
}

// Throws std::invalid_argument unless s is a rank-2, channels-first depthwise ConvSpec and the
// tile is in range (1 <= VH <= 16, 1 <= VW <= 32, VH*VW <= 128).
inline void check_depthwise_conv2d_nchw(const ConvSpec& s, const DepthwiseConv2dTile& t) {
  s.validate();
  if (s.rank() != 2 || s.layout != ConvLayout::ChannelsFirst || s.groups != s.in_channels ||
      s.out_channels != s.in_channels) {
    throw std::invalid_argument(s.name + ": depthwise_conv2d_nchw needs a 2-D NCHW depthwise spec (groups = C = O)");
  }
  if (t.vh < 1 || t.vh > 16 || t.vw < 1 || t.vw > 32 || t.vh * t.vw > 128) {
    throw std::invalid_argument(s.name + ": tile VH x VW = " + std::to_string(t.vh) + "x" + std::to_string(t.vw) +
                                " must have 1 <= VH <= 16, 1 <= VW <= 32 and VH*VW <= 128");
  }
}

// The kh*kw weights of channel c in f32 and its bias (0 without one): what every thread of the
// depthwise kernels multiplies with, loaded once.
template <class T>
std::pair<std::vector<dsl::Val<f32>>, dsl::Val<f32>> depthwise_channel_weights(dsl::KernelBuilder& k,
                                                                               const DenseConvParams<T>& prm,
                                                                               const ConvSpec& s,
                                                                               const dsl::Val<u32>& c) {
  using namespace ingot::dsl;
  const std::uint32_t taps = s.ksize[0] * s.ksize[1];
  std::vector<Val<f32>> wv;
  for (std::uint32_t a = 0; a < taps; ++a) {
    wv.push_back(k.let("w" + std::to_string(a), cast<f32>(load(prm.w, c * taps + a))));
  }
  Val<f32> init = 0.0f;
  if (s.bias) init = k.let("bias_c", cast<f32>(load(prm.io.bias, c)));
  return {wv, init};
}

// Threads per (b, c) plane.
inline std::uint64_t depthwise_conv2d_nchw_tiles(const ConvSpec& s, const DepthwiseConv2dTile& t) {
  return ((s.out_len(0) + t.vh - 1) / t.vh) * ((s.out_len(1) + t.vw - 1) / t.vw);
}

template <class T>
void depthwise_conv2d_nchw(dsl::KernelBuilder& k, const ConvSpec& s, const DepthwiseConv2dTile& tile) {
  using namespace ingot::dsl;
  check_depthwise_conv2d_nchw(s, tile);
  const auto u = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
  const std::uint32_t C = s.in_channels, H = s.in_size[0], Wd = s.in_size[1], P = u(s.out_len(0)), Q = u(s.out_len(1));
  const std::uint32_t KH = s.ksize[0], KW = s.ksize[1], SH = s.stride[0], SW = s.stride[1];
  const std::uint32_t PH = s.pad[0], PW = s.pad[1], DH = s.dilation[0], DW = s.dilation[1];
  const std::uint32_t VH = tile.vh, VW = tile.vw, TH = (P + VH - 1) / VH, TW = (Q + VW - 1) / VW;
  const std::uint32_t tiles = TH * TW;
  const std::uint32_t Wv = row_vector_width(sizeof(T), VW, Wd);  // input vector width
  const std::uint32_t Wo = row_vector_width(sizeof(T), VW, Q);   // output vector width

  const auto prm = declare_dense_conv_params<T>(k, s);  // batch, x, w [C, kh, kw], bias, y
  const auto& batch = prm.io.batch;
  const auto& x = prm.io.x;
  const auto& y = prm.io.y;

  auto gid = k.let("gid", k.program_id(0));
  auto n = k.let("n", batch * (C * tiles));
  auto live = k.let("live", gid < n);
  auto i = k.let("i", select(live, gid, 0u));  // tail threads take thread 0's operands
  auto plane = k.let("plane", i / tiles);
  auto t = k.let("t", i % tiles);
  auto c = k.let("c", plane % C);
  auto oh0 = k.let("oh0", (t / TW) * VH);
  auto ow0 = k.let("ow0", (t % TW) * VW);
  auto x_plane = k.let("x_plane", plane * (H * Wd));
  auto y_plane = k.let("y_plane", plane * (P * Q));

  const auto weights = depthwise_channel_weights(k, prm, s, c);  // no structured binding: lambdas use them
  const std::vector<Val<f32>>& wv = weights.first;
  const Val<f32>& init = weights.second;
  std::vector<std::vector<Var<f32>>> acc(VH);
  for (std::uint32_t r = 0; r < VH; ++r) {
    acc[r].reserve(VW);  // a reallocation would copy (re-declare) the variables
    for (std::uint32_t j = 0; j < VW; ++j)
      acc[r].emplace_back(k, init, "acc" + std::to_string(r) + "_" + std::to_string(j));
  }

  const TileColumns tc = tile_columns(k, ow0, VW, KW, SW, DW, PW, Wv, Wd, TW, sizeof(T));
  std::optional<HaloExchange> hx;
  const bool exchange = tile.halo_shuffle == DepthwiseConv2dTile::Shuffle::On ||
                        (tile.halo_shuffle == DepthwiseConv2dTile::Shuffle::WhereItApplies && tile.preload &&
                         halo_exchange_applies(tc, PW, Wd, TW));
  if (exchange) {
    const auto refuse = [&](const std::string& why) {
      throw std::invalid_argument(s.name + ": halo shuffle (depthwise_conv2d_nchw) " + why);
    };
    if (!tile.preload) refuse("needs preload = 1 (every thread must reach the exchange)");
    if (!halo_exchange_applies(tc, PW, Wd, TW)) {
      refuse(
          "does not apply: it needs stride 1 along W, vector chunks and halo columns outside the row for its "
          "first and last tiles (padding >= the halo)");
    }
    if (k.kernel().bounds.max_group_threads % ir::kShuffleGroupMultiple != 0 || !k.kernel().bounds.max_group_threads) {
      refuse("needs launch bounds of a multiple of 32 threads");
    }
    hx = HaloExchange{k.let("lane", k.local_id(0) % kHaloLanes)};
  }

  // Stores of output row r of the tile.
  std::optional<Val<bool>> cols_full;
  if (Q % VW != 0) cols_full = k.let("cols_full", ow0 + VW <= Q);
  auto store_row = [&](std::uint32_t r) {
    Val<bool> row_live = live;
    if (P % VH != 0) row_live = live && oh0 + r < P;
    auto at = k.let("y" + std::to_string(r), y_plane + (oh0 + r) * Q + ow0);
    store_tile_row(y, at, VW, Wo, ow0, Q, row_live, cols_full, [&](std::uint32_t j) { return Val<f32>(acc[r][j]); });
  };

  // With tile.preload every input row of the tile is loaded (rows outside the input at the nearest
  // in-range row) and converted first (or, with tile.ahead = n, n rows ahead of its arithmetic), so all of the thread's
  // loads are in flight at once (else each row just before its arithmetic, under its branch); then rows in order, the
  // arithmetic of a row outside the input skipped by a branch (uniform but for warps that straddle a
  // plane edge); columns outside select 0. An output row is stored right after its last input row,
  // so only about kh*dh/sh rows of accumulators are live at a time.
  // With the exchange, a row's loads are started with the preload and its shuffles wait for them
  // just before its arithmetic (finish_tile_row): a shuffle between two rows' loads would hold
  // the second until the first arrived.
  const TileRows tr = tile_rows(k, oh0, VH, KH, SH, DH, PH, H, TH);
  std::vector<std::map<std::uint32_t, Val<f32>>> xrows(tr.uses.size());
  std::vector<PendingTileRow<T>> pending(tr.uses.size());
  auto load_row = [&](std::uint32_t rr, const Val<u32>& ih) {
    auto row_at = k.let("xr" + std::to_string(rr), x_plane + ih * Wd);
    if (hx) {
      pending[rr] = start_tile_row(k, x, row_at, tc, std::to_string(rr), hx);
    } else {
      xrows[rr] = load_tile_row(k, x, row_at, tc, std::to_string(rr));
    }
  };
  const auto rows = static_cast<std::uint32_t>(tr.uses.size());
  std::uint32_t loaded = 0;  // preload: rows [0, loaded) are loaded
  const auto load_through = [&](std::uint32_t last) {
    for (; tile.preload && loaded < rows && loaded <= last; ++loaded) {
      if (!tr.uses[loaded].empty()) load_row(loaded, tr.in_range[loaded]);
    }
  };
  load_through(tile.ahead ? tile.ahead - 1 : rows - 1);
  for (std::uint32_t rr = 0; rr < rows; ++rr) {
    if (tr.uses[rr].empty()) continue;
    load_through(rr + tile.ahead);
    if (hx) xrows[rr] = finish_tile_row(k, pending[rr], tc, std::to_string(rr), hx);  // (outside the row's branch)
    const auto row_taps = [&] {
      if (!tile.preload) load_row(rr, cast<u32>(tr.ih[rr]));  // under the row's branch
      const auto& xs = xrows[rr];
      for (const auto& [r, a] : tr.uses[rr]) {
        for (std::uint32_t j = 0; j < VW; ++j) {
          Val<f32> sum = acc[r][j];
          for (std::uint32_t e = 0; e < KW; ++e) sum = fma(xs.at(tc.col(j, e)), wv[a * KW + e], sum);
          acc[r][j] = sum;
        }
      }
    };
    if (tr.ok[rr]) {
      if_(*tr.ok[rr], row_taps);
    } else {
      row_taps();
    }
    for (const auto& [r, a] : tr.uses[rr]) {
      if (a == KH - 1) store_row(r);  // the last input row of output row r
    }
  }
}

}  // namespace ingot::kernels
