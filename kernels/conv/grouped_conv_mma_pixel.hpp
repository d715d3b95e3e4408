// kernels/conv/grouped_conv_mma_pixel.hpp — grouped 2-D convolution, NCHW, 8 input channels per group, f16/bf16, on
// the sub-group matrix multiply-accumulate, with the group's input band copied as it lies (channel planes) and
// transposed in shared memory into pixels of 8 channels by load_matrix_trans (conv2d_grouped, stage = 3).
//
//   x [B, C, H, W], w [O, 8, kh, kw], optional bias [O] -> y [B, O, P, Q],
//   groups = C / 8, a multiple of 8 output channels per group, stride 1, dilation 1, W a multiple of 8.
//
// Why: the staged kernel (grouped_conv_mma_smem.hpp, stage = 1) transposes with 8 four-byte loads and the packing per
// pixel pair and loads a fresh A fragment for every pair of taps of every 16-pixel tile (5 per tile for 3x3); the
// planar kernel (stage = 2) avoids the transposition but pays a shuffle per value and shifted column. Here the copy is
// asynchronous (16-byte copies of 8 pixels of one channel row) and the transposition is one load_matrix_trans and one
// 4-byte store per lane per 4 matrices of 8 channels x 8 pixels; a pixel's 8 channels are then one 16-byte row, so
// any tap column's A is one aligned load_matrix, and one A fragment (two input rows) serves every output row of the
// band that reads those rows.
//
// Mapping. A work-group (`threads` threads, default 128) takes image b, group g and bw consecutive bands of R output
// rows (R even). For each band it copies the input rows band*R - pad_h .. + RS - 1 (RS = R + kh - 1 rounded up to
// even), every column, zeros outside the input, into a planar buffer xs (channel ci's row sr at ci * CS + sr * W;
// CS padded to 16 bytes x odd modulo 128), two buffers alternating where bw > 1 so that band i + 1's copies are in
// flight during band i's transposition and products. The transposition writes pixel c of staged row sr to
// xt[(sr * WT + pad_w + c) * 8 ..] (its 8 channels; columns outside the input are zeros written once). A warp's unit
// is one block of 8 output channels and one segment of 16 output columns across the band's R rows. For the pair of
// staged rows (2m, 2m + 1) and tap column kx, A is 16 x 16: row i = pixel 16 seg + i + kx, column k = channel k % 8
// of staged row 2m + k / 8 (one load_matrix); output row o (band-relative) reads staged rows o .. o + kh - 1, so with
// d = 2m - o in [-1, kh - 1] it adds A B_kx,d, B_kx,d[k][n] = w[oc n][ci k % 8][d + k / 8][kx] (zero outside
// [0, kh)). Per unit: (R + kh - 1)/2 rounded up pairs x kw load_matrix (15 for 8 rows of 3x3) and 2 kw mma per row
// (6 for 3x3). A row is stored as soon as its last pair is done: D's lanes hold output channels 2tl (+1) at columns
// 16 seg + gl (+8): four scalar stores each, rows past P and columns past Q skipped — or with os (where Q % 8 == 0,
// the default) four stores into ys, the band's outputs as they lie in y (channel c's R x Q run at c * OCS); after the
// band's products a barrier, then the work-group stores ys as 16-byte vectors, chunks of rows past P skipped (the
// scalar stores write half sectors, docs/performance.md s17).
// Units past the last (more warps than units) are clamped: every lane reaches every mma and load_matrix, a repeated
// unit stores nothing. Barriers per band: after the copies' wait, after the transposition, after the products (with
// os, or before the next band's transposition).
// Launch grid_1d(batch * grouped_conv_mma_pixel_groups_per_batch() * threads, threads) with launch bounds `threads`.
// With early_weights ("we", the default where it fits; 8 output channels per group) the group's weights are copied
// into shared memory with band 0's rows, and each lane reads its own after band 0's barrier. (Loaded from global
// memory, ptxas moves them past that barrier, where every work-group then waits for them: docs/performance.md s40.)
// With skip_past ("skip", the default) a band past P — the last block's, where the bands are not a multiple of bw — is
// neither transposed, multiplied nor stored (one branch on the work-group's band; the barriers stay outside it).
// With ya (the default where it applies: the output stage, bw <= 2, a stage no larger than a buffer) the output stage
// lies at the start of band bi's planar buffer (bi % 2), free once the band's transposition has read it; no array of
// its own (3x3 g32 N32 56x56 with one band per work-group: 20.8 KB and 10 work-groups per SM against 28.1 KB and 8;
// docs/performance.md s40).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "direct_conv.hpp"
#include "grouped_conv_mma.hpp"
#include "grouped_conv_mma_planar.hpp"
#include "grouped_conv_mma_smem.hpp"
#include "ingot/dsl.hpp"
#include "plane_smem.hpp"

namespace ingot::kernels {

// Sizes of the pixel-stage kernel for spec s, band height `rows` and bw bands per work-group.
struct PixelMmaPlan {
  GroupedMmaDims dm{};
  std::uint32_t R = 0;         // output rows per band (even)
  std::uint32_t bands = 0;     // bands per image
  std::uint32_t bw = 1;        // bands per work-group
  std::uint32_t bblocks = 0;   // work-groups along the bands: ceil(bands / bw)
  std::uint32_t rs = 0;        // staged rows per band: R + kh - 1 rounded up to even (whole pairs)
  std::uint32_t pairs = 0;     // rs / 2
  std::uint32_t cs = 0;        // elements per channel of the planar buffer (rs * W, padded)
  std::uint32_t segs = 0;      // 16-column output segments: ceil(Q / 16)
  std::uint32_t wt = 0;        // pixels per staged row of the transposed stage (pad_w + W and 16 segs + kw - 1)
  std::uint32_t cblocks = 0;   // blocks of 8 output channels per group
  std::uint32_t buffers = 1;   // planar buffers (2 where bw > 1)
  std::uint64_t xs_elems = 0;  // planar buffers
  std::uint64_t xt_elems = 0;  // transposed stage
  bool os = false;             // outputs staged in shared memory, stored as 16-byte vectors (Q % 8 == 0)
  std::uint32_t ocs = 0;       // elements per output channel of the output stage (R * Q, 8 modulo 32)
  std::uint64_t ys_elems = 0;  // output stage
  std::uint64_t ws_elems = 0;  // the group's weights (early_weights: 64 kh kw)
  bool ya = false;             // the output stage lies in the planar buffer the band was copied into (no own array)
  [[nodiscard]] std::uint64_t bytes(std::size_t elem_bytes) const {
    return (xs_elems + xt_elems + (ya ? 0 : ys_elems) + ws_elems) * elem_bytes;
  }
};

inline PixelMmaPlan grouped_conv_mma_pixel_geometry(const ConvSpec& s, std::uint32_t rows, std::uint32_t bw = 1,
                                                    bool os = true, bool early_weights = false, bool ya = false) {
  PixelMmaPlan pl;
  pl.dm = grouped_mma_dims(s);
  const GroupedMmaDims& d = pl.dm;
  const GroupedBands b = grouped_even_bands(d.P, rows, bw);
  pl.R = b.R, pl.bands = b.bands, pl.bw = b.bw, pl.bblocks = b.bblocks;
  pl.rs = (pl.R + d.KH - 1 + 1) / 2 * 2;
  pl.pairs = pl.rs / 2;
  std::uint64_t cs = (static_cast<std::uint64_t>(pl.rs) * d.W + 7) / 8 * 8;
  if ((cs / 8) % 2 == 0) cs += 8;  // 16 bytes x odd modulo 128: the 8 channel rows of a matrix in 8 bank groups
  pl.cs = static_cast<std::uint32_t>(std::min<std::uint64_t>(cs, 0xffffffffull));
  pl.segs = (d.Q + 15) / 16;
  pl.wt = std::max(d.PW + d.W, 16 * pl.segs + d.KW - 1);
  pl.cblocks = s.out_per_group() / 8;
  pl.buffers = pl.bw > 1 ? 2 : 1;
  pl.xs_elems = 8ull * pl.cs * pl.buffers;
  pl.xt_elems = 8ull * pl.rs * pl.wt;
  pl.os = os && d.Q % 8 == 0;
  if (pl.os) {  // 8 modulo 32: the 4 channel pairs of a store in 4 different 4-word bank groups
    const std::uint32_t rq = pl.R * d.Q;
    pl.ocs = rq + (40 - rq % 32) % 32;
    pl.ys_elems = 8ull * pl.cblocks * pl.ocs;
  }
  if (early_weights) pl.ws_elems = 64ull * d.KH * d.KW;
  pl.ya = ya && pl.os;
  return pl;
}

// Why the pixel-stage kernel cannot run spec s with elements of elem_bytes, `rows` and bw ("" when it can).
inline std::string grouped_conv_mma_pixel_refusal(const ConvSpec& s, std::size_t elem_bytes, std::uint32_t rows,
                                                  std::uint32_t bw = 1, bool os = true, bool early_weights = false,
                                                  bool ya = false) {
  if (std::string why = grouped_conv_mma_refusal(s, elem_bytes); !why.empty()) return why;
  if (s.rank() != 2) return "is 2-D only (conv3d_grouped: stage = 1 or 2)";
  if (early_weights) {
    if (std::string why = grouped_early_weights_refusal(s, "bands"); !why.empty()) return why;
  }
  const GroupedMmaDims d = grouped_mma_dims(s);
  if (d.W % 8 != 0)
    return "needs an input width that is a multiple of 8 (16-byte rows; W = " + std::to_string(d.W) + ")";
  const PixelMmaPlan pl = grouped_conv_mma_pixel_geometry(s, rows, bw, os, early_weights, ya);
  if (ya) {
    if (!pl.os)
      return "stages no outputs to place in the planar buffer (ya = 1 needs os = 1 and Q % 8 == 0; remove ya)";
    if (pl.bw > 2) {
      return "places the band's outputs in its planar buffer (ya = 1) only with at most 2 bands per work-group: with " +
             std::to_string(pl.bw) +
             ", band i + 2's copies fill that buffer during band i's products (bw <= 2 or ya = 0)";
    }
    if (pl.ys_elems > 8ull * pl.cs) {
      return "places the band's outputs (" + std::to_string(pl.ys_elems) +
             " elements) in its planar buffer (ya = 1), which holds " + std::to_string(8ull * pl.cs) + " (ya = 0)";
    }
  }
  if (const std::uint64_t b = pl.bytes(elem_bytes); b > kPlaneSmemBytes) {
    return "stages " + std::to_string(pl.buffers) + " planar buffer(s) and the transposed band of 8 channels x " +
           std::to_string(pl.rs) + " rows x " + std::to_string(d.W) + " columns" +
           (pl.os && !pl.ya ? std::string(" and the band's outputs") : std::string()) +
           (early_weights ? std::string(" and the group's weights") : std::string()) +
           " in shared memory: " + std::to_string(b) + " bytes, more than " + std::to_string(kPlaneSmemBytes) +
           " (fewer rows per band" + (pl.os ? std::string(" or os = 0") : std::string()) + " would shrink it)";
  }
  return "";
}

// Throws std::invalid_argument with the reason unless the pixel-stage kernel applies with `rows` and bw.
inline PixelMmaPlan grouped_conv_mma_pixel_plan(const ConvSpec& s, std::size_t elem_bytes, std::uint32_t rows,
                                                std::uint32_t bw = 1, bool os = true, bool early_weights = false,
                                                bool ya = false) {
  s.validate();
  if (rows < 2 || rows > 32 || rows % 2 != 0) {
    throw std::invalid_argument(s.name + ": rows = " + std::to_string(rows) +
                                " must be even and in [2, 32] for the pixel-stage tensor-core kernel (stage = 3: pairs "
                                "of input rows)");
  }
  if (bw < 1 || bw > 64) {
    throw std::invalid_argument(s.name + ": bw (bands per work-group) = " + std::to_string(bw) + " must be in [1, 64]");
  }
  if (const std::string why = grouped_conv_mma_pixel_refusal(s, elem_bytes, rows, bw, os, early_weights, ya);
      !why.empty()) {
    throw std::invalid_argument(s.name + ": the pixel-stage tensor-core kernel (stage = 3) " + why +
                                "; use stage = 1 or 2");
  }
  return grouped_conv_mma_pixel_geometry(s, rows, bw, os, early_weights, ya);
}

// Work-groups per image: groups x blocks of bw bands.
inline std::uint64_t grouped_conv_mma_pixel_groups_per_batch(const ConvSpec& s, std::uint32_t rows,
                                                             std::uint32_t bw = 1) {
  return static_cast<std::uint64_t>(s.groups) * grouped_conv_mma_pixel_geometry(s, rows, bw).bblocks;
}

// Throws std::invalid_argument unless `batch` images' threads fit the 32-bit thread indices.
inline void check_grouped_conv_mma_pixel_batch(const ConvSpec& s, std::uint32_t rows, std::uint64_t batch,
                                               std::uint32_t threads, std::uint32_t bw = 1) {
  check_staged_mma_threads(s.name, threads);
  check_grouped_batch_threads(s, grouped_conv_mma_pixel_groups_per_batch(s, rows, bw) * threads, batch, "pixel-stage");
}

// The pixel-stage kernel's options (the registry's keys): output rows per band, threads per work-group, bands per
// work-group (bw), the output stage (os), the weights' copy (early_weights, "we"), skipping a band past the last
// output row (skip_past, "skip") and the output stage in the band's buffer (ya).
struct PixelMmaOptions {
  std::uint32_t rows = 8;
  std::uint32_t threads = kStagedMmaGroup;
  std::uint32_t bw = 1;
  bool os = true, early_weights = false, skip_past = true, ya = false;
};

template <class T>
void grouped_conv_mma_pixel(dsl::KernelBuilder& k, const ConvSpec& s, const PixelMmaOptions& o) {
  const std::uint32_t rows = o.rows, threads = o.threads, bw = o.bw;
  const bool os = o.os, early_weights = o.early_weights, skip_past = o.skip_past, ya = o.ya;
  using namespace ingot::dsl;
  static_assert(sizeof(T) == 2, "the pixel-stage tensor-core kernel multiplies f16 or bf16");
  const PixelMmaPlan pl = grouped_conv_mma_pixel_plan(s, sizeof(T), rows, bw, os, early_weights, ya);
  check_staged_mma_threads(s.name, threads);
  const GroupedMmaDims& dm = pl.dm;
  const std::uint32_t O = s.out_channels, Og = s.out_per_group(), G = s.groups, NG = threads;
  const std::uint32_t Wd = dm.W, P = dm.P, Q = dm.Q, KH = dm.KH, KW = dm.KW, PH = dm.PH, PW = dm.PW;
  const std::uint32_t R = pl.R, RS = pl.rs, CS = pl.cs, WT = pl.wt, NBc = pl.cblocks, SEG = pl.segs;
  const std::uint32_t BW = pl.bw, BB = pl.bblocks, NTi = Wd / 8, PQ = P * Q;
  const std::uint32_t warps = NG / 32, units = NBc * SEG;

  k.launch_bounds(NG);
  const auto prm = declare_dense_conv_params<T>(k, s);
  const auto& batch = prm.io.batch;
  const auto& x = prm.io.x;
  const auto& w = prm.w;
  const auto& bias = prm.io.bias;
  const auto& y = prm.io.y;
  auto xs = k.shared<T>("xs", static_cast<std::uint32_t>(pl.xs_elems));
  auto xt = k.shared<T>("xt", static_cast<std::uint32_t>(pl.xt_elems));
  // The output stage: its own array, or (ya) the planar buffer band bi was copied into, free once its transposition is
  // done (with bw <= 2 no later copy fills it): in_stage(at, bi) is element `at` of band bi's stage.
  std::optional<Shared<T>> ys;
  if (pl.os) ys = pl.ya ? xs : k.shared<T>("ys", static_cast<std::uint32_t>(pl.ys_elems));
  const auto in_stage = [&](const Val<u32>& at, std::uint32_t bi) {
    const std::uint32_t base = pl.ya ? (bi % pl.buffers) * 8 * pl.cs : 0u;
    return base == 0 ? at : Val<u32>(at + base);
  };
  std::optional<Shared<T>> ws;
  if (early_weights) ws = k.shared<T>("ws", static_cast<std::uint32_t>(pl.ws_elems));
  const std::uint32_t OCS = pl.ocs;

  // Work-group: block of BW bands fastest, then b * G + g.
  auto wg = k.let("wg", k.group_id(0));
  auto live = k.let("live", wg < batch * (G * BB));
  auto task = k.let("task", select(live, wg, 0u));  // a group past the batch takes group 0's operands
  auto band0 = k.let("band0", (task % BB) * BW);
  auto bg = k.let("bg", task / BB);
  auto g = k.let("g", bg % G);
  auto lid = k.let("lid", k.local_id(0));
  auto x_group = k.let("x_group", bg * (8u * dm.H * Wd));
  const Val<u32> od = 0u;

  const auto issue_band = [&](std::uint32_t bi) {
    const std::string bt = "b" + std::to_string(bi);
    auto row0 = k.let(bt + "row0", cast<i32>((band0 + bi) * R) - static_cast<std::int32_t>(PH));
    copy_planar_band_async(k, xs, x, dm, {1, RS, CS, (bi % pl.buffers) * 8 * CS}, row0, od, x_group, live, lid, NG, bt);
    if (bi == 0 && ws) copy_group_weights_async(k, *ws, w, g, KH * KW, lid, NG);  // with band 0's rows
    async_commit(k);
  };
  issue_band(0);
  if (BW > 1) issue_band(1);

  // The transposed stage's columns outside the input: zeros, written once (the transposition writes the others).
  const std::uint32_t side = WT - Wd, zeros = RS * side;
  for_group_rounds(k, lid, NG, zeros, "zc", true, [&](const Val<u32>& i, std::uint32_t) {
    auto col = k.let("zcol", i % side);
    auto c = k.let("zc_at", select(col < PW, col, col + Wd));
    store_vec(xt, ((i / side) * WT + c) * 8u, std::vector<Val<f32>>(8, Val<f32>(0.0f)));
  });

  auto warp = k.let("warp", lid / 32u);
  auto lane = k.let("lane", lid % 32u);
  auto gl = k.let("gl", lane / 4u);
  auto tl = k.let("tl", lane % 4u);
  // Transposition: op o takes staged row o / JQ and its 8-column tiles 4 jq .. 4 jq + 3 (jq = o % JQ; tiles past the
  // last are clamped, their stores skipped); lane l names channel l % 8's row of tile 4 jq + l / 8 and receives
  // channels 2(l%4), 2(l%4)+1 of pixel l / 4 of each of the 4 tiles: one 4-byte store per tile, at constant offsets.
  const std::uint32_t JQ = (NTi + 3) / 4, ops = RS * JQ;
  auto tr_row = k.let("tr_row", (lane % 8u) * CS + (lane / 8u) * 8u);
  auto tr_px = k.let("tr_px", (PW + lane / 4u) * 8u + tl * 2u);
  const auto transpose = [&](std::uint32_t bi) {
    const std::string bt = "t" + std::to_string(bi);
    for (std::uint32_t r = 0; r * warps < ops; ++r) {
      const std::string rt = bt + "_" + std::to_string(r);
      auto op = k.let("op" + rt, warp + r * warps);
      const bool partial_round = (r + 1) * warps > ops;
      Val<u32> opc = op;
      if (partial_round) opc = k.let("opc" + rt, min(op, ops - 1));
      Val<u32> sr = opc, jq = 0u;
      if (JQ > 1) {
        sr = k.let("tsr" + rt, opc / JQ);
        jq = k.let("tjq" + rt, opc % JQ);
      }
      Val<u32> src = tr_row + sr * Wd + jq * 32u + (bi % pl.buffers) * 8u * CS;
      if (NTi % 4 != 0) {  // lanes naming a tile past the last read the last
        src =
            tr_row - (lane / 8u) * 8u + sr * Wd + min(jq * 4u + lane / 8u, NTi - 1) * 8u + (bi % pl.buffers) * 8u * CS;
      }
      const auto m = load_matrix_trans(xs, k.let("tsrc" + rt, src));
      auto dst = k.let("tdst" + rt, tr_px + (sr * WT + jq * 32u) * 8u);
      for (std::uint32_t i = 0; i < 4; ++i) {
        const auto st = [&] { store_vec(xt, dst + i * 64u, std::vector<Val<T>>{m[2 * i], m[2 * i + 1]}); };
        const bool past = NTi % 4 != 0 && i >= NTi % 4;  // tile 4 jq + i is past the last where jq = JQ - 1
        if (past && JQ == 1) continue;                   // ... and jq is always 0
        if (partial_round && past) {
          if_(op < ops && jq * 4u + i < NTi, st);
        } else if (partial_round) {
          if_(op < ops, st);
        } else if (past) {
          if_(jq * 4u + i < NTi, st);
        } else {
          st();
        }
      }
    }
  };

  // Weights w[oc][ci][ky][kx] of block cb for this lane: oc = g*Og + 8cb + gl, ci = 2tl + e.
  const auto load_w = [&](const Val<u32>& cb, const std::string& tag) {
    std::vector<std::vector<std::array<Val<f32>, 2>>> wv(KH, std::vector<std::array<Val<f32>, 2>>(KW));
    if (ws) {
      // From the shared copy, after band 0's wait and barrier. (Global loads here are ld.global.nc, which ptxas moves
      // past the first barrier, where every work-group then waits for them: docs/performance.md s40.)
      const auto v = lane_group_weights(k, *ws, gl, tl, KH * KW, tag);
      for (std::uint32_t ky = 0; ky < KH; ++ky) {
        for (std::uint32_t kx = 0; kx < KW; ++kx) {
          for (std::uint32_t e = 0; e < 2; ++e) wv[ky][kx][e] = v[e * KH * KW + ky * KW + kx];
        }
      }
      return wv;
    }
    auto wrow = k.let(tag + "wr", ((g * Og + cb * 8u + gl) * 8u + tl * 2u) * (KH * KW));
    for (std::uint32_t ky = 0; ky < KH; ++ky) {
      for (std::uint32_t kx = 0; kx < KW; ++kx) {
        for (std::uint32_t e = 0; e < 2; ++e) wv[ky][kx][e] = cast<f32>(load(w, wrow + (e * KH * KW + ky * KW + kx)));
      }
    }
    return wv;
  };
  using Weights = std::vector<std::vector<std::array<Val<f32>, 2>>>;
  // B_kx,d: values i = (e, h): w[..][ci 2tl + e][d + h][kx], zero outside [0, kh).
  const auto b_frag = [&](const Weights& wv, std::uint32_t kx, std::int32_t d) {
    std::array<Val<f32>, 4> b;
    for (std::uint32_t i = 0; i < 4; ++i) {
      const std::int32_t ky = d + static_cast<std::int32_t>(i / 2);
      b[i] = ky >= 0 && ky < static_cast<std::int32_t>(KH) ? wv[static_cast<std::uint32_t>(ky)][kx][i % 2]
                                                           : Val<f32>(0.0f);
    }
    return b;
  };
  std::optional<Weights> w_held;
  if (NBc == 1 && !ws) w_held = load_w(Val<u32>(0u), "");

  // load_matrix rows: lane l names pixel (l % 8) + 8 ((l / 8) % 2) of the segment, in staged row l / 16 of the pair.
  auto lm_lane = k.let("lm_lane", ((lane / 16u) * WT + ((lane / 8u) % 2u) * 8u + lane % 8u) * 8u);
  auto y_img = k.let("yb", (bg / G) * O * PQ);

  const auto band_products = [&](std::uint32_t bi) {
    const std::string bt = "p" + std::to_string(bi);
    auto p0 = k.let(bt + "p0", (band0 + bi) * R);  // output row of the band's row 0
    Val<bool> band_ok = live;
    if (pl.bands % BW != 0) band_ok = k.let(bt + "bok", live && p0 < P);
    for (std::uint32_t r = 0; r * warps < units; ++r) {
      const std::string rt = bt + "u" + std::to_string(r) + "_";
      auto raw = k.let(rt + "i", warp + r * warps);
      Val<u32> uu = raw;
      Val<bool> ok = band_ok;
      const bool repeated = (r + 1) * warps > units;
      if (repeated) {
        uu = k.let(rt + "c", min(raw, units - 1));
        ok = k.let(rt + "live", band_ok && raw < units);
      }
      Val<u32> seg = uu, cb = 0u;
      if (NBc > 1) {
        seg = k.let(rt + "seg", uu % SEG);
        cb = k.let(rt + "cb", uu / SEG);
      }
      const Weights wv = w_held ? *w_held : load_w(cb, rt);
      auto oc = k.let(rt + "oc", g * Og + cb * 8u + tl * 2u);
      std::array<Val<f32>, 4> bias_c{Val<f32>(0.0f), Val<f32>(0.0f), Val<f32>(0.0f), Val<f32>(0.0f)};
      if (s.bias) {
        auto b0 = k.let(rt + "b0", cast<f32>(load(bias, oc)));
        auto b1 = k.let(rt + "b1", cast<f32>(load(bias, oc + 1u)));
        bias_c = {b0, b1, b0, b1};
      }
      auto col = k.let(rt + "col", seg * 16u + gl);
      Val<u32> yu, ysu;
      if (pl.os) {
        ysu = k.let(rt + "ys", in_stage((cb * 8u + tl * 2u) * OCS + col, bi));
      } else {
        yu = k.let(rt + "y", y_img + oc * PQ + p0 * Q + col);
      }
      auto lb = k.let(rt + "lb", lm_lane + seg * 128u);
      std::array<Val<bool>, 2> col_ok{ok, ok};
      if (16 * SEG > Q) {
        for (std::uint32_t h = 0; h < 2; ++h) col_ok[h] = k.let(rt + "cok" + std::to_string(h), ok && col + 8u * h < Q);
      }
      std::vector<std::array<Val<f32>, 4>> acc(R, bias_c);
      std::uint32_t stored = 0;
      for (std::uint32_t m = 0; m < pl.pairs; ++m) {
        std::vector<std::array<Val<f32>, 8>> a(KW);
        for (std::uint32_t kx = 0; kx < KW; ++kx) {
          const auto v = load_matrix(xt, lb + (2 * m * WT + kx) * 8);
          for (std::uint32_t i = 0; i < 8; ++i) a[kx][i] = cast<f32>(v[i]);
        }
        for (std::uint32_t o = 0; o < R; ++o) {
          const std::int32_t d = static_cast<std::int32_t>(2 * m) - static_cast<std::int32_t>(o);
          if (d < -1 || d > static_cast<std::int32_t>(KH) - 1) continue;
          for (std::uint32_t kx = 0; kx < KW; ++kx) acc[o] = mma_m16n8k16<T>(k, a[kx], b_frag(wv, kx, d), acc[o]);
        }
        // Rows whose last staged row (o + kh - 1) is in this pair or before: done, stored.
        for (; stored < R && stored + KH - 1 <= 2 * m + 1; ++stored) {
          const std::uint32_t o = stored;
          Val<bool> row_ok = true;
          bool guard_row = false;
          if (!pl.os && (P % R != 0 || pl.bands % BW != 0)) {
            row_ok = k.let(rt + "rok" + std::to_string(o), p0 + o < P);
            guard_row = true;
          }
          for (std::uint32_t h = 0; h < 2; ++h) {
            for (std::uint32_t e = 0; e < 2; ++e) {
              if (pl.os) {  // into the output stage (columns past Q and repeated units skipped)
                const auto st = [&] { store(*ys, ysu + (e * OCS + o * Q + 8 * h), cast<T>(acc[o][2 * h + e])); };
                std::optional<Val<bool>> guard;
                if (repeated) guard = raw < units;
                if (16 * SEG > Q) guard = guard ? Val<bool>(*guard && col + 8u * h < Q) : Val<bool>(col + 8u * h < Q);
                if (guard) {
                  if_(*guard, st);
                } else {
                  st();
                }
              } else {
                const Val<bool> st_ok = guard_row ? Val<bool>(col_ok[h] && row_ok) : col_ok[h];
                if_(st_ok, [&] { store(y, yu + (e * PQ + o * Q + 8 * h), cast<T>(acc[o][2 * h + e])); });
              }
            }
          }
        }
      }
    }
  };

  // The band's outputs from the output stage: channel c's R rows are R * Q consecutive elements of y; 16-byte chunks
  // of them spread over the work-group, chunks of rows past P (or of a band past the last) skipped.
  const auto band_stores = [&](std::uint32_t bi) {
    const std::string bt = "s" + std::to_string(bi);
    const std::uint32_t per = R * Q / 8, chunks = 8 * NBc * per;
    auto p0 = k.let(bt + "p0", (band0 + bi) * R);
    auto yb = k.let(bt + "yb", y_img + g * Og * PQ + p0 * Q);
    Val<u32> lim = R * Q;
    if (P % R != 0 || pl.bands % BW != 0) lim = k.let(bt + "lim", select(p0 < P, min(P - p0, R) * Q, 0u));
    for_group_rounds(k, lid, NG, chunks, bt + "c", true, [&](const Val<u32>& c, std::uint32_t r) {
      const std::string rt = bt + std::to_string(r);
      auto ch = k.let("sc" + rt, c / per);
      auto at = k.let("sa" + rt, (c % per) * 8u);
      const auto v = load_vec(*ys, in_stage(ch * OCS + at, bi), 8);
      if_(live && at < lim, [&] { store_vec(y, yb + ch * PQ + at, v); });
    });
  };

  // skip_past: band bi of the last block may lie past P (bands % BW != 0); there its transposition, products and
  // stores are skipped (the condition is the work-group's, so every lane takes the same path, and the barriers stay
  // outside). Else such a band is computed like the others and only its stores are skipped: with 8-row bands of 56
  // rows and bw = 2, one band slot in 8 is past P.
  const auto unless_past = [&](std::uint32_t bi, const std::function<void()>& body) {
    const bool may_be_past = pl.bblocks * BW > pl.bands && (pl.bblocks - 1) * BW + bi >= pl.bands;
    if (!skip_past || !may_be_past) {
      body();
      return;
    }
    if_(k.let("pst" + std::to_string(bi), (band0 + bi) * R < P), body);
  };
  for (std::uint32_t bi = 0; bi < BW; ++bi) {
    // Band bi's copies (this thread's; band bi + 1's may still be in flight), then everyone's.
    async_wait(k, bi + 1 < BW ? 1 : 0);
    k.barrier();
    if (bi == 0 && ws) w_held = load_w(Val<u32>(0u), "");  // (band 0's copies brought the weights)
    unless_past(bi, [&] { transpose(bi); });
    k.barrier();
    if (bi + 2 < BW) issue_band(bi + 2);  // into the buffer band bi's transposition has finished reading
    unless_past(bi, [&] { band_products(bi); });
    if (pl.os) {
      k.barrier();  // every warp's outputs are in ys (and every read of xt done)
      unless_past(bi, [&] { band_stores(bi); });
    } else if (bi + 1 < BW) {
      k.barrier();  // every warp's products read xt before the next transposition writes it
    }
  }
}

}  // namespace ingot::kernels
