// kernels/conv/depthwise_conv2d_nchw_mma.hpp — depthwise 2-D convolution, NCHW, f16/bf16, on the
// sub-group matrix multiply-accumulate (tensor cores on CUDA), one (b, c) plane per work-group
// staged in shared memory (depthwise_conv2d with mma = 1).
//
// Per channel and tap row ky, 16 output rows x 8 output columns are one product of the 16 x 16
// input block A[m][k] = x[y0 + m + ky - PH][x0 - PW - s + k] (s = PW % 2 keeps pairs of columns
// 4-byte aligned) and a banded 16 x 8 weight matrix B_ky[k][n] = w[ky][k - n - s] (0 outside
// [0, kw)): out[y0 + m][x0 + n] = bias + sum_ky (A_ky B_ky)[m][n]. So a tile of 128 outputs costs
// kh mma steps, each fed by four 4-byte shared-memory loads per lane (lane l, g = l/4, t = l%4:
// the column pairs 2t and 2t + 8 of rows g and g + 8, ir.hpp's fragment layout; no bank
// conflicts when the row stride is 4 words mod 32). The B fragments (4 per lane per tap row) are
// built once per plane. The work-group stages the plane with its zero border (plane_smem.hpp),
// then each warp takes tiles (16-row band, 8-column group) warp + r*warps, clamped past the last
// (every lane reaches every mma) with the stores skipped; D is stored as pairs (4 bytes) where Q
// is even, else per element, rows past P and columns past Q skipped.
// Applies to 16-bit elements, stride 1, dilation 1 and kw <= 8 (8 + kw - 1 + s <= 16 columns).
// With async (copy_async, ir.hpp), the planes of the work-group's images go through two buffers
// in a run-time loop: the border is zeroed once per buffer, plane i + 1 is copied into one
// buffer (no registers, no waiting) while the warps read plane i from the other; one wait and
// two barriers per plane. Needs rows of vector copies (W even).
//
// Row pairs (rp, with load_matrix): a tile is instead 2 output rows x 64 columns — A's rows 0-7 are the 8 column
// groups of output row y, rows 8-15 those of row y + 1 — so A for tap row ky is [H(y + ky); H(y + ky + 1)], where
// H(r) is the 8 x 16 block of layout row r read by the 8 groups (columns 8j - PW - s .. + 16). Each warp walks a band
// of pairs down a 64-column strip and loads every layout row once (one load_matrix per two rows, kept in registers
// while kh pairs use it), not kh times: per 128 outputs, 1 load_matrix of 512 bytes and kh mma, against kh load_matrix
// (7x7: 3.5 KB of shared-memory reads per 128 outputs, the tuned schedule's bound). D's pairs of a row are 64
// contiguous columns: whole 128-byte stores. Column groups past Q read the last group's columns (stores skipped).
// By default (lq 1, RowPairLoads) a load's four matrices come in A's register order, (R, k 0-7), (R + 1, k 0-7),
// (R, k 8-15), (R + 1, k 8-15), so the pairs (R, R + 1) with R even take its registers as they are (7x7: 32 moves in
// the SASS against 80). Each row-pair store computes its own bounds and address.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "depthwise_conv2d_nchw.hpp"
#include "direct_conv.hpp"
#include "ingot/dsl.hpp"
#include "plane_smem.hpp"

namespace ingot::kernels {

// How row_pair_products loads layout rows. pairs: one load_matrix per two rows R, R + 1 (R even), its four matrices
// (R, k 0-7), (R, k 8-15), (R + 1, k 0-7), (R + 1, k 8-15); every mma's A is assembled from two rows' registers.
// pairs_in_a_order: the same loads with the matrices (R, k 0-7), (R + 1, k 0-7), (R, k 8-15), (R + 1, k 8-15), which is
// the register order of A for the pair (R, R + 1): half the mma take a load's registers as they are. quads: one
// load_matrix per row R in that order, A of (R, R + 1) for every R (twice the loads, no assembly).
enum class RowPairLoads : std::uint32_t { pairs = 0, pairs_in_a_order = 1, quads = 2 };

// The kernel's choices (depthwise_conv2d's spec parameters imgs, async, mw, lm, lmfirst, os, rp, il, lq).
struct DepthwiseMmaOptions {
  std::uint32_t images = 1;  // planes of one channel per work-group
  bool async = false;        // planes through two buffers by asynchronous copies
  std::uint32_t warps = 0;   // warps per work-group (0: the plan's default)
  bool lm = false;           // A fragments by load_matrix
  bool lm_first = false;     // every tile's load_matrix of a tap row before the row's first mma
  bool os = false;           // outputs through shared memory, 16-byte stores
  bool rp = false;           // row-pair tiles (implies lm)
  std::uint32_t il = 1;      // rp: pairs whose mma chains are interleaved
  RowPairLoads loads = RowPairLoads::pairs_in_a_order;  // rp: how the rows are loaded (lq)
};

struct DepthwiseMmaPlan {
  PlaneSmem plane;
  bool lm = false;          // A fragments by load_matrix (rows of A 16-byte aligned in the layout)
  bool rp = false;          // row-pair tiles: tasks are (64-column strip, band of pb row pairs)
  std::uint32_t ns = 0;     // rp: 64-column strips
  std::uint32_t pb = 0;     // rp: row pairs per band
  std::uint32_t s = 0;      // columns of A left of the window's first: PW % 2, or with lm the s <= 9 - kw making PW + s
                            // the most aligned (A's column 0 at layout column off - PW - s = 0 mod 8)
  std::uint32_t tw = 0;     // 8-column groups per plane
  std::uint32_t tasks = 0;  // tiles (16-row bands x 8-column groups; rp: strips x bands) per plane
  std::uint32_t warps = 0;  // warps per work-group
  [[nodiscard]] std::uint32_t group() const { return 32 * warps; }
};

// The plan for a valid depthwise NCHW spec, whether the kernel applies or not (see the refusal).
// warps: warps per work-group (1..8; 0: as few as give the least tiles per warp, at most 8; rp: 4 bands); lm: A
// fragments by load_matrix; rp: row-pair tiles (implies lm).
inline DepthwiseMmaPlan depthwise_conv2d_mma_geometry(const ConvSpec& s, std::size_t elem_bytes,
                                                      std::uint32_t warps = 0, bool lm = false, bool rp = false) {
  const auto P = static_cast<std::uint32_t>(s.out_len(0)), Q = static_cast<std::uint32_t>(s.out_len(1));
  const std::int64_t PH = s.pad[0], PW = s.pad[1], KH = s.ksize[0];
  lm = lm || rp;
  DepthwiseMmaPlan plan;
  plan.s = s.pad[1] % 2;
  plan.lm = lm;
  plan.rp = rp;
  if (lm) {  // the shift in [0, 9 - kw] whose PW + shift has the most trailing zero bits (a multiple of 8 best)
    const auto zeros = [](std::int64_t v) { return v == 0 ? 64 : std::countr_zero(static_cast<std::uint64_t>(v)); };
    plan.s = 0;
    for (std::int64_t sh = 1; sh <= 9 - static_cast<std::int64_t>(s.ksize[1]); ++sh) {
      if (zeros(PW + sh) > zeros(PW + plan.s)) plan.s = static_cast<std::uint32_t>(sh);
    }
  }
  const std::uint32_t tm = (P + 15) / 16;
  plan.tw = (Q + 7) / 8;
  plan.tasks = tm * plan.tw;
  std::int64_t row_hi = 16 * static_cast<std::int64_t>(tm) - 1 + KH - 1 - PH;
  if (rp) {  // bands of pb pairs: about `warps` (default 4) tasks over the strips, no empty band
    const std::uint32_t np = (P + 1) / 2;
    plan.ns = (Q + 63) / 64;
    const std::uint32_t want = warps == 0 ? 4u : std::min(warps, 8u);
    const std::uint32_t nb = std::clamp((want + plan.ns - 1) / plan.ns, 1u, np);
    plan.pb = (np + nb - 1) / nb;
    plan.tasks = plan.ns * ((np + plan.pb - 1) / plan.pb);
    // A band loads layout rows 2 p0 .. 2 p0 + 2 pb + KH - 1 in pairs (the last pair's second row may be past the last
    // read one): bands end at pair (tasks / ns) pb.
    row_hi = 2 * static_cast<std::int64_t>(plan.tasks / plan.ns) * plan.pb + KH - 1 - PH;
  }
  // As few warps as give the least tiles per warp, with at most `warps` (default 8) warps.
  const std::uint32_t most = warps == 0 ? 8u : std::min(warps, 8u);
  const std::uint32_t per = (plan.tasks + most - 1) / most;
  plan.warps = (plan.tasks + per - 1) / per;
  const std::int64_t col_lo = -PW - plan.s, col_hi = 8 * (static_cast<std::int64_t>(plan.tw) - 1) + col_lo + 15;
  plan.plane = lm ? plane_smem_geometry(s.in_size[0], s.in_size[1], elem_bytes, -PH, row_hi, col_lo, col_hi, 8, true)
                  : plane_smem_geometry(s.in_size[0], s.in_size[1], elem_bytes, -PH, row_hi, col_lo, col_hi, 2);
  if (lm) {  // rows 16 bytes apart modulo 128: the 8 rows of each ldmatrix phase in distinct banks
    while ((static_cast<std::uint64_t>(plan.plane.ws) * elem_bytes) % 128 != 16) plan.plane.ws += 8;
    plan.plane.bytes = static_cast<std::uint64_t>(plan.plane.rows) * plan.plane.ws * elem_bytes;
  }
  return plan;
}

// Why the tensor-core kernel cannot run spec s (a valid depthwise NCHW spec) with elements of
// elem_bytes ("" when it can).
inline std::string depthwise_conv2d_mma_refusal(const ConvSpec& s, std::size_t elem_bytes, bool rp = false) {
  if (elem_bytes != 2) return "needs f16 or bf16 elements";
  if (s.stride[0] != 1 || s.stride[1] != 1 || s.dilation[0] != 1 || s.dilation[1] != 1) {
    return "needs stride 1 and dilation 1";
  }
  if (s.ksize[1] > 8) return "needs a window at most 8 columns wide (has " + std::to_string(s.ksize[1]) + ")";
  if (const std::uint64_t bytes = depthwise_conv2d_mma_geometry(s, elem_bytes, 0, rp, rp).plane.bytes;
      bytes > kPlaneSmemBytes) {
    return "stages a whole " + std::to_string(s.in_size[0]) + "x" + std::to_string(s.in_size[1]) +
           " plane with its border in shared memory: " + std::to_string(bytes) + " bytes, more than " +
           std::to_string(kPlaneSmemBytes);
  }
  return "";
}

// Throws std::invalid_argument with the reason unless the kernel applies with `warps` (0: the default).
inline DepthwiseMmaPlan depthwise_conv2d_mma_plan(const ConvSpec& s, std::size_t elem_bytes, std::uint32_t warps = 0,
                                                  bool lm = false, bool rp = false) {
  check_depthwise_conv2d_nchw(s, DepthwiseConv2dTile{});
  if (warps > 8) {
    throw std::invalid_argument(s.name + ": the tensor-core kernel (depthwise_conv2d mma = 1) takes 1 to 8 warps per " +
                                "work-group (mw), not " + std::to_string(warps));
  }
  if (const std::string why = depthwise_conv2d_mma_refusal(s, elem_bytes, rp); !why.empty()) {
    throw std::invalid_argument(s.name + ": the tensor-core kernel (depthwise_conv2d mma = 1) " + why +
                                "; use mma = 0");
  }
  return depthwise_conv2d_mma_geometry(s, elem_bytes, warps, lm, rp);
}

// Work-groups for a batch of `batch` images taking `images` images each (DepthwiseMmaPlan).
inline std::uint64_t depthwise_conv2d_mma_groups(const ConvSpec& s, std::uint64_t batch, std::uint32_t images) {
  return static_cast<std::uint64_t>(s.in_channels) * ((batch + images - 1) / images);
}

// This lane's taps of the banded weight matrices B_ky[k][n] = w[ky][k - n - s] (depthwise_conv2d_nchw_mma.hpp): b_i is
// B[k_i][gl], k_i = 2 tl + i % 2 + 8 (i / 2), tap kx = k_i - gl - s when ok[i] (else 0). Lane-constant: computed once.
struct MmaBandTaps {
  std::array<dsl::Val<bool>, 4> ok;
  std::array<dsl::Val<u32>, 4> kx;  // clamped to 0 where !ok
};
inline MmaBandTaps mma_band_taps(dsl::KernelBuilder& k, const dsl::Val<u32>& gl, const dsl::Val<u32>& tl,
                                 std::uint32_t KW, std::uint32_t s) {
  using namespace ingot::dsl;
  MmaBandTaps taps;
  for (std::uint32_t i = 0; i < 4; ++i) {
    auto kx = k.let("kx" + std::to_string(i),
                    cast<i32>(tl * 2u + (i % 2 + 8 * (i / 2))) - cast<i32>(gl) - static_cast<std::int32_t>(s));
    taps.ok[i] = k.let("kx_ok" + std::to_string(i), cast<u32>(kx) < KW);  // negative wraps
    taps.kx[i] = k.let("kx_at" + std::to_string(i), select(taps.ok[i], cast<u32>(kx), 0u));
  }
  return taps;
}

// The B fragments of one channel's kh tap rows, its weights w[at .. at + KH*KW) (row-major [kh][kw]).
template <class T, class WB>
std::vector<std::array<dsl::Val<f32>, 4>> mma_band_weights(dsl::KernelBuilder& k, const WB& w, const dsl::Val<u32>& at,
                                                           std::uint32_t KH, std::uint32_t KW, const MmaBandTaps& taps,
                                                           const std::string& tag) {
  using namespace ingot::dsl;
  std::vector<std::array<Val<f32>, 4>> b(KH);
  for (std::uint32_t ky = 0; ky < KH; ++ky) {
    for (std::uint32_t i = 0; i < 4; ++i) {
      auto wv = load(w, at + (ky * KW) + taps.kx[i]);
      b[ky][i] = cast<f32>(
          k.let(tag + "b" + std::to_string(ky) + "_" + std::to_string(i), select(taps.ok[i], wv, Val<T>(0.0f))));
    }
  }
  return b;
}

// The same B fragments from a table of packed tap pairs in shared memory (read once per band where registers cannot
// hold them across a loop: the NHWC ring kernel). Per channel ch and tap row ky the table holds NE = kw + 2 pairs of
// 16-bit taps: pair e <= kw is (wz[e - 1], wz[e]), wz the tap row with zeros outside [0, kw), and pair kw + 1 is (0,
// 0). A lane's b0, b1 are wz[m], wz[m + 1] with m = 2 tl - gl - s (MmaBandTaps): pair m + 1 where -1 <= m < kw, else
// the zero pair; b2, b3 the same for m + 8. So each tap row costs a lane two 4-byte loads (one word each, broadcast
// over the warp's 9 distinct pairs) in place of four 2-byte loads and four selects, and the words go to the mma as
// they are.
struct MmaBandPairs {
  std::uint32_t NE = 0;  // pairs per tap row
  dsl::Val<u32> e0, e2;  // this lane's pairs for b0, b1 and for b2, b3 (lane-constant)
};
inline std::uint32_t mma_band_pair_elements(std::uint32_t channels, std::uint32_t KH, std::uint32_t KW) {
  return channels * KH * (KW + 2) * 2;
}
inline MmaBandPairs mma_band_pairs(dsl::KernelBuilder& k, const dsl::Val<u32>& gl, const dsl::Val<u32>& tl,
                                   std::uint32_t KW, std::uint32_t s) {
  using namespace ingot::dsl;
  // The pair of the lane's taps m, m + 1 with m = 2 tl + first - gl - s: e = m + 1 (u32: m = -1 gives 0, m below -1
  // wraps past kw), the zero pair kw + 1 where e > kw.
  const auto pair_at = [&](std::uint32_t first, const std::string& t) {
    auto e = k.let("wp_e" + t, tl * 2u + (first + 1) - gl - s);
    return k.let("wp_at" + t, select(e <= KW, e, KW + 1u));
  };
  return {KW + 2, pair_at(0, "0"), pair_at(8, "2")};
}
// Fills tab[0 .. mma_band_pair_elements(channels, KH, KW)) with the pairs of channels c0 .. c0 + channels, whose taps
// are w[w_at0 ..) (row-major [channel][kh][kw]), by G threads (lid); the caller's barrier publishes it.
template <class T, class WB>
void fill_mma_band_pairs(dsl::KernelBuilder& k, const dsl::Shared<T>& tab, const WB& w, const dsl::Val<u32>& w_at0,
                         std::uint32_t channels, std::uint32_t KH, std::uint32_t KW, const dsl::Val<u32>& lid,
                         std::uint32_t G) {
  using namespace ingot::dsl;
  const std::uint32_t NE = KW + 2;
  for_group_rounds(k, lid, G, mma_band_pair_elements(channels, KH, KW), "wp", true,
                   [&](const Val<u32>& i, std::uint32_t r) {
                     const std::string rt = "wp" + std::to_string(r) + "_";
                     auto row = k.let(rt + "row", i / (2 * NE));           // channel * KH + ky
                     auto m = k.let(rt + "m", (i / 2) % NE + i % 2 - 1u);  // e - 1 + half (u32: -1 wraps)
                     auto ok = k.let(rt + "ok", m < KW);                   // (pair kw + 1 reads m = kw, kw + 1: zeros)
                     auto v = load(w, k.let(rt + "at", w_at0 + row * KW + select(ok, m, 0u)));
                     store(tab, i, select(ok, v, Val<T>(0.0f)));
                   });
}
// Channel ch's (of the table) kh B fragments from the pair table.
template <class T>
std::vector<std::array<dsl::Val<f32>, 4>> mma_band_weights_from_pairs(const dsl::Shared<T>& tab,
                                                                      const dsl::Val<u32>& ch, std::uint32_t KH,
                                                                      const MmaBandPairs& pairs) {
  using namespace ingot::dsl;
  std::vector<std::array<Val<f32>, 4>> b(KH);
  for (std::uint32_t ky = 0; ky < KH; ++ky) {
    auto row = ch * (KH * pairs.NE) + ky * pairs.NE;
    const auto lo = load_vec(tab, (row + pairs.e0) * 2u, 2);
    const auto hi = load_vec(tab, (row + pairs.e2) * 2u, 2);
    b[ky] = {cast<f32>(lo[0]), cast<f32>(lo[1]), cast<f32>(hi[0]), cast<f32>(hi[1])};
  }
  return b;
}

// This lane's place in a row-pair load_matrix (lane-constant): lanes 0-15 name layout row R, 16-31 row R + 1; lane l
// names column group l % 8 of the strip and its columns + 8 ((l / 8) % 2). In A's order (RowPairLoads other than
// pairs): lanes 8 m .. 8 m + 7 name row R + m % 2 and columns + 8 (m / 2).
struct RowPairLanes {
  dsl::Val<u32> row, col, group;
};
inline RowPairLanes row_pair_lanes(dsl::KernelBuilder& k, const dsl::Val<u32>& lid,
                                   RowPairLoads loads = RowPairLoads::pairs) {
  using namespace ingot::dsl;
  if (loads != RowPairLoads::pairs) {
    return {k.let("lane_row", (lid / 8u) % 2u), k.let("lane_col", ((lid % 32u) / 16u) * 8u),
            k.let("lane_group", lid % 8u)};
  }
  return {k.let("lane_row", (lid % 32u) / 16u), k.let("lane_col", ((lid / 8u) % 2u) * 8u),
          k.let("lane_group", lid % 8u)};
}
// The lane's column in a plane row for the strip whose first output column is x0 (groups past the last of tw clamped to
// it), relative to A's column 0 of group 0.
inline dsl::Val<u32> row_pair_column(const RowPairLanes& lanes, const dsl::Val<u32>& x0, std::uint32_t tw) {
  using namespace ingot::dsl;
  return min(x0 + lanes.group * 8u, 8 * (tw - 1)) + lanes.col;
}

// The products of pb row pairs (rp tiles, above) of one channel whose layout rows start at xs[at] (this lane's
// load_matrix row for R = 0: the band's first layout row + l / 16, its column group's A columns) with row stride ws: il
// pairs' mma chains side by side, tap row by tap row, each layout row loaded once (in pairs, when first read; twice
// with RowPairLoads::quads, as the upper and the lower half of A). After
// each group of il pairs, done(i, d) for each of its pairs i: d_0, d_1 at (row 2i, columns 8 gl + 2 tl, + 1), d_2, d_3
// at row 2i + 1.
// loads: how the rows are loaded (RowPairLoads; the lanes' addresses in `at` must follow row_pair_lanes of the same).
// row_at (optional): this lane's load_matrix address for R instead of at + R ws (rows in a ring, say).
template <class T>
void row_pair_products(dsl::KernelBuilder& k, const dsl::Shared<T>& xs, const dsl::Val<u32>& at, std::uint32_t ws,
                       std::uint32_t pb, std::uint32_t il, const std::vector<std::array<dsl::Val<f32>, 4>>& b,
                       const dsl::Val<f32>& init,
                       const std::function<void(std::uint32_t, const std::array<dsl::Val<f32>, 4>&)>& done,
                       RowPairLoads loads = RowPairLoads::pairs,
                       const std::function<dsl::Val<u32>(std::uint32_t)>& row_at = {}) {
  using namespace ingot::dsl;
  const auto KH = static_cast<std::uint32_t>(b.size());
  const auto load_at = [&](std::uint32_t R) {
    if (row_at) return load_matrix(xs, row_at(R));
    return load_matrix(xs, R == 0 ? at : Val<u32>(at + R * ws));
  };
  std::vector<std::array<Val<T>, 4>> h;  // h[R]: H(R) (k 0-1 of 2t, k 8-9 of 2t), loaded in pairs of rows
  const auto row = [&](std::uint32_t R) {
    while (h.size() <= R) {
      const auto m = load_at(static_cast<std::uint32_t>(h.size()));
      if (loads == RowPairLoads::pairs) {
        h.push_back({m[0], m[1], m[2], m[3]});
        h.push_back({m[4], m[5], m[6], m[7]});
      } else {
        h.push_back({m[0], m[1], m[4], m[5]});
        h.push_back({m[2], m[3], m[6], m[7]});
      }
    }
    return h[R];
  };
  std::vector<std::array<Val<T>, 8>> q;  // quads: q[R], A of the pair (R, R + 1) in register order
  const auto quad = [&](std::uint32_t R) {
    while (q.size() <= R) q.push_back(load_at(static_cast<std::uint32_t>(q.size())));
    return q[R];
  };
  // A of the rows (R, R + 1)
  const auto a_of = [&](std::uint32_t R) {
    std::array<Val<f32>, 8> a;
    if (loads == RowPairLoads::quads) {
      const auto m = quad(R);
      for (std::size_t e = 0; e < 8; ++e) a[e] = cast<f32>(m[e]);
    } else {
      const auto lo = row(R), hi = row(R + 1);  // A's rows 0-7 and 8-15
      a = {cast<f32>(lo[0]), cast<f32>(lo[1]), cast<f32>(hi[0]), cast<f32>(hi[1]),
           cast<f32>(lo[2]), cast<f32>(lo[3]), cast<f32>(hi[2]), cast<f32>(hi[3])};
    }
    return a;
  };
  for (std::uint32_t i0 = 0; i0 < pb; i0 += il) {
    const std::uint32_t n = std::min(il, pb - i0);
    std::vector<std::array<Val<f32>, 4>> acc(n, {init, init, init, init});
    for (std::uint32_t ky = 0; ky < KH; ++ky) {
      for (std::uint32_t j = 0; j < n; ++j) acc[j] = mma_m16n8k16<T>(k, a_of(2 * (i0 + j) + ky), b[ky], acc[j]);
    }
    for (std::uint32_t j = 0; j < n; ++j) done(i0 + j, acc[j]);
  }
}

// images: planes of one channel per work-group (images b0 .. b0 + images - 1 of channel c), so the
// weights and the border are set up once and the next plane's loads are in flight during the
// current plane's arithmetic.
template <class T>
void depthwise_conv2d_nchw_mma(dsl::KernelBuilder& k, const ConvSpec& s, const DepthwiseMmaOptions& o) {
  using namespace ingot::dsl;
  static_assert(sizeof(T) == 2, "the tensor-core depthwise kernel multiplies f16 or bf16");
  const DepthwiseMmaPlan plan = depthwise_conv2d_mma_plan(s, sizeof(T), o.warps, o.lm, o.rp);
  const std::uint32_t images = o.images;
  const bool async = o.async, lm_first = o.lm_first && !o.rp, os = o.os;
  if (o.rp && (o.il < 1 || o.il > plan.pb)) {
    throw std::invalid_argument(s.name + ": il (row pairs interleaved, depthwise_conv2d rp = 1) must be 1 to " +
                                std::to_string(plan.pb) + " (the pairs of a band), not " + std::to_string(o.il));
  }
  const PlaneSmem& L = plan.plane;
  const auto u = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
  const std::uint32_t C = s.in_channels, H = s.in_size[0], Wd = s.in_size[1], P = u(s.out_len(0)), Q = u(s.out_len(1));
  const std::uint32_t KH = s.ksize[0], KW = s.ksize[1], PW = s.pad[1], G = plan.group();
  require_warp_launch_bounds(k, s, G, "the tensor-core kernel");

  const auto prm = declare_dense_conv_params<T>(k, s);  // batch, x, w [C, kh, kw], bias, y
  const auto& batch = prm.io.batch;
  const auto& x = prm.io.x;
  const auto& w = prm.w;
  const auto& bias = prm.io.bias;
  const auto& y = prm.io.y;
  if (images < 1) throw std::invalid_argument(s.name + ": images per work-group must be >= 1");
  if (async && !plane_copies_async<T>(L)) {
    throw std::invalid_argument(s.name + ": async = 1 (depthwise_conv2d mma) copies rows in vectors: rows of " +
                                std::to_string(Wd) + " elements admit none; use async = 0");
  }
  const std::uint32_t buffers = async && images > 1 ? 2 : 1;
  auto xs = k.shared<T>("xs", u(plane_buffers_elements(L, sizeof(T), buffers)));
  // With os, a plane's outputs go to shared memory first and leave as 16-byte vectors of the contiguous P x Q plane
  // (where P * Q % 8 == 0 and both fit): D's 4-byte pairs cover half a 32-byte sector each, so direct stores cost the
  // memory system two partial writes per sector.
  const bool stage_out =
      os && (P * Q) % 8 == 0 &&
      plane_buffers_elements(L, sizeof(T), buffers) + std::uint64_t{P} * Q <= kPlaneSmemBytes / sizeof(T);
  std::optional<Shared<T>> ys;
  if (stage_out) ys = k.shared<T>("ys", P * Q);
  // Group g: channel c = g % C, images b0 = (g / C) * images ..; an image past the batch takes
  // image 0's plane of the channel and stores nothing.
  auto g = k.let("g", k.group_id(0));
  auto c = k.let("c", g % C);
  auto b0 = k.let("b0", (g / C) * images);
  auto lid = k.let("lid", k.local_id(0));
  auto warp = k.let("warp", lid / 32u);
  auto gl = k.let("gl", (lid % 32u) / 4u);
  auto tl = k.let("tl", lid % 4u);
  Val<u32> lm_row = 0u, lm_col = 0u;
  if (plan.lm && !plan.rp) {
    lm_row = k.let("lm_row", lid % 8u + ((lid / 8u) % 2u) * 8u);
    lm_col = k.let("lm_col", ((lid / 16u) % 2u) * 8u);
  }

  // B fragments: b_i = B_ky[k_i][gl], k_i = 2tl + i%2 + 8(i/2): weight w[c][ky][k_i - gl - s] or 0.
  const auto bfrag =
      mma_band_weights<T>(k, w, k.let("w_at", c * (KH * KW)), KH, KW, mma_band_taps(k, gl, tl, KW, plan.s), "");
  Val<f32> init = 0.0f;
  if (s.bias) init = k.let("bias_c", cast<f32>(load(bias, c)));

  // Tiles: band tb = task / tw (rows 16tb ..), column group task % tw (columns 8(task % tw) ..).
  // Input row ih = y0 + m + ky - PH is layout row y0 + m + ky (top = PH); the A block's column k is
  // input column x0 - PW - s + k, layout column off + x0 - PW - s + k (off >= PW + s).
  const std::uint32_t col0 = L.off - PW - plan.s;
  // The tiles of one plane read from xs[buf ..): image_live says whether its stores happen.
  // Every round's tile is set up first, then the products run tap row by tap row across the rounds
  // (each tile's accumulation order is unchanged: ky = 0 .. kh-1), the stores last. (ptxas re-serialises each tile's
  // mma chain whatever this order; the tuned schedule's gains come from fewer warps, async planes and load_matrix,
  // docs/performance.md s12.)
  // D's two values of output row p, columns q0, q0 + 1 (to ys with os, at the plane's offset y_plane = 0), if live and
  // in the plane: one 4-byte store where Q is even, else each value under its own column bound.
  const auto store_pair = [&](const Val<bool>& live, const Val<u32>& y_plane, const Val<u32>& p, const Val<u32>& q0,
                              const Val<f32>& v0, const Val<f32>& v1, const std::string& tag) {
    auto at = k.let(tag, y_plane + p * Q + q0);
    const auto ok = [&](std::uint32_t e) { return live && p < P && (Q % 2 == 0 ? q0 : q0 + e) < Q; };
    if (Q % 2 == 0) {
      if_(ok(0), [&] {
        const std::vector<Val<f32>> pair{v0, v1};
        if (stage_out) {
          store_vec(*ys, at, pair);
        } else {
          store_vec(y, at, pair);
        }
      });
      return;
    }
    for (std::uint32_t e = 0; e < 2; ++e) {
      if_(ok(e), [&] {
        if (stage_out) {
          store(*ys, at + e, e == 0 ? v0 : v1);
        } else {
          store(y, at + e, e == 0 ? v0 : v1);
        }
      });
    }
  };
  // With os, after every warp's stores to ys: the plane leaves in 16-byte chunks.
  const auto leave_stage = [&](const Val<bool>& image_live, const Val<u32>& y_plane_in) {
    if (!stage_out) return;
    // (An image past the batch wrote nothing to ys: its chunks read the previous image's outputs, never stored. A
    // work-group's first image is always in the batch, so ys is written before any read.)
    k.barrier();
    for_group_rounds(k, lid, G, P * Q / 8, "os", true, [&](const Val<u32>& ch, std::uint32_t r) {
      const auto v = load_vec(*ys, ch * 8u, 8);
      if_(image_live, [&] { store_vec(y, k.let("os_at" + std::to_string(r), y_plane_in + ch * 8u), v); });
    });
  };
  const auto plane_tiles = [&](const Val<bool>& image_live, const Val<u32>& y_plane_in, const Val<u32>& buf) {
    const Val<u32> y_plane = stage_out ? Val<u32>(0u) : y_plane_in;  // with os, D goes to ys
    struct Tile {
      Val<bool> live;
      Val<u32> y0, x0, at0;  // at0: this lane's a_0 (or with lm its load_matrix row) for ky = 0
      std::array<Val<f32>, 4> acc;
    };
    std::vector<Tile> tiles;
    for_group_rounds(k, warp, plan.warps, plan.tasks, "task", false, [&](const Val<u32>& task, std::uint32_t r) {
      const std::string rt = "r" + std::to_string(r) + "_";
      Tile t;
      t.live = image_live;
      if ((r + 1) * plan.warps > plan.tasks)
        t.live = k.let(rt + "live", image_live && warp + r * plan.warps < plan.tasks);
      t.y0 = k.let(rt + "y0", (task / plan.tw) * 16u);
      t.x0 = k.let(rt + "x0", (task % plan.tw) * 8u);
      if (plan.lm) {  // lane l names row (l % 8) + 8 ((l / 8) % 2), columns 8 (l / 16) .. + 8 of A
        t.at0 = k.let(rt + "a", (t.y0 + lm_row) * L.ws + t.x0 + lm_col + col0 + buf);
      } else {
        t.at0 = k.let(rt + "a", (t.y0 + gl) * L.ws + t.x0 + tl * 2u + col0 + buf);
      }
      t.acc = {init, init, init, init};
      tiles.push_back(std::move(t));
    });
    for (std::uint32_t ky = 0; ky < KH; ++ky) {
      // With lm_first, every tile's load_matrix of this tap row is issued before the row's first mma (the rows'
      // shared-memory latencies overlap; 4 more live registers per tile).
      std::vector<std::array<Val<T>, 8>> first;
      if (plan.lm && lm_first) {
        for (Tile& t : tiles) first.push_back(load_matrix(xs, ky == 0 ? t.at0 : Val<u32>(t.at0 + ky * L.ws)));
      }
      for (std::size_t ti = 0; ti < tiles.size(); ++ti) {
        Tile& t = tiles[ti];
        std::array<Val<f32>, 8> a;
        if (plan.lm && lm_first) {
          for (std::uint32_t i = 0; i < 8; ++i) a[i] = cast<f32>(first[ti][i]);
        } else if (plan.lm) {
          const auto m = load_matrix(xs, ky == 0 ? t.at0 : Val<u32>(t.at0 + ky * L.ws));
          for (std::uint32_t i = 0; i < 8; ++i) a[i] = cast<f32>(m[i]);
        } else {
          for (std::uint32_t q = 0; q < 4; ++q) {  // a_{2q}, a_{2q+1}: row gl + 8(q%2), column pair 2tl + 8(q/2)
            const auto pair = load_vec(xs, t.at0 + ((ky + 8 * (q % 2)) * L.ws + 8 * (q / 2)), 2);
            a[std::size_t{2} * q] = cast<f32>(pair[0]);
            a[std::size_t{2} * q + 1] = cast<f32>(pair[1]);
          }
        }
        t.acc = mma_m16n8k16<T>(k, a, bfrag[ky], t.acc);
      }
    }
    // d_{2h}, d_{2h+1}: output row y0 + gl + 8h, columns x0 + 2tl, + 1.
    for (std::size_t r = 0; r < tiles.size(); ++r) {
      const Tile& t = tiles[r];
      const std::string rt = "r" + std::to_string(r) + "_";
      auto q0 = k.let(rt + "q", t.x0 + tl * 2u);
      for (std::uint32_t h = 0; h < 2; ++h) {
        auto p = k.let(rt + "p" + std::to_string(h), t.y0 + gl + 8 * h);
        store_pair(t.live, y_plane, p, q0, t.acc[2 * h], t.acc[2 * h + 1], rt + "y" + std::to_string(h));
      }
    }
    leave_stage(image_live, y_plane_in);
  };
  // Row pairs (rp): task = band * ns + strip; the band's pairs p0 + i (output rows 2(p0 + i), + 1) over columns
  // 64 strip .. + 64. Lane l's load_matrix row: layout row 2 p0 + R + l / 16 (R even), columns of group l % 8 (clamped
  // to the last, tw - 1), + 8 ((l / 8) % 2): values 0-3 are H(R) (k 2t, 2t+1, 2t+8, 2t+9 of group g), 4-7 H(R + 1).
  // il pairs' chains run side by side, tap row by tap row; each layout row is loaded once, when first read.
  const auto plane_pairs = [&](const Val<bool>& image_live, const Val<u32>& y_plane_in, const Val<u32>& buf) {
    const Val<u32> y_plane = stage_out ? Val<u32>(0u) : y_plane_in;  // with os, D goes to ys
    const RowPairLanes lanes = row_pair_lanes(k, lid, o.loads);
    for_group_rounds(k, warp, plan.warps, plan.tasks, "task", false, [&](const Val<u32>& task, std::uint32_t r) {
      const std::string rt = "r" + std::to_string(r) + "_";
      Val<bool> live = image_live;
      if ((r + 1) * plan.warps > plan.tasks)
        live = k.let(rt + "live", image_live && warp + r * plan.warps < plan.tasks);
      auto y0 = k.let(rt + "y0", (task / plan.ns) * (2 * plan.pb));
      auto x0 = k.let(rt + "x0", (task % plan.ns) * 64u);
      auto at = k.let(rt + "a", (y0 + lanes.row) * L.ws + row_pair_column(lanes, x0, plan.tw) + col0 + buf);
      auto q0 = k.let(rt + "q", x0 + gl * 8u + tl * 2u);
      // d_0, d_1: output row y0 + 2i, columns q0, q0 + 1; d_2, d_3: row y0 + 2i + 1.
      row_pair_products<T>(
          k, xs, at, L.ws, plan.pb, o.il, bfrag, init,
          [&](std::uint32_t i, const std::array<Val<f32>, 4>& d) {
            const std::string pt = rt + std::to_string(i) + "_";
            for (std::uint32_t e = 0; e < 2; ++e) {
              auto p = k.let(pt + "p" + std::to_string(e), y0 + (2 * i + e));
              const Val<f32>& v0 = d[std::size_t{2} * e];
              const Val<f32>& v1 = d[std::size_t{2} * e + 1];
              store_pair(live, y_plane, p, q0, v0, v1, pt + "y" + std::to_string(e));
            }
          },
          o.loads);
    });
    leave_stage(image_live, y_plane_in);
  };
  const auto plane_work = [&](const Val<bool>& image_live, const Val<u32>& y_plane_in, const Val<u32>& buf) {
    if (plan.rp) {
      plane_pairs(image_live, y_plane_in, buf);
    } else {
      plane_tiles(image_live, y_plane_in, buf);
    }
  };

  if (async) {
    // Image img of the group: whether it exists, and its plane (image 0's plane of the channel if not).
    const auto plane_of = [&](const Val<u32>& img) {
      auto ok = k.let("img_ok", b0 + img < batch);
      return std::pair{ok, k.let("plane", select(ok, (b0 + img) * C + c, c))};
    };
    for_planes_async(
        k, x, xs, L, lid, G, images, [&](const Val<u32>& img) { return plane_of(img).second * (H * Wd); },
        [&](const Val<u32>& img, const Val<u32>& buf) {
          const auto cur = plane_of(img);
          plane_work(cur.first, k.let("y_plane", cur.second * (P * Q)), buf);
        });
    return;
  }

  std::vector<Val<bool>> image_ok;
  std::vector<Val<u32>> plane;
  for (std::uint32_t i = 0; i < images; ++i) {
    const std::string it = std::to_string(i);
    image_ok.push_back(k.let("img_ok" + it, b0 + i < batch));
    plane.push_back(k.let("plane" + it, select(image_ok[i], (b0 + i) * C + c, c)));
  }
  auto got = load_plane(k, x, L, k.let("x_plane0", plane[0] * (H * Wd)), lid, G);
  zero_plane_border(k, xs, L, lid, G);
  for (std::uint32_t img = 0; img < images; ++img) {
    store_plane(k, xs, L, got, lid, G);
    k.barrier();
    if (img + 1 < images) got = load_plane(k, x, L, k.let("x_plane", plane[img + 1] * (H * Wd)), lid, G);
    plane_work(image_ok[img], k.let("y_plane", plane[img] * (P * Q)), Val<u32>(0u));
    if (img + 1 < images) k.barrier();  // every warp is done with the plane (and ys) before the next one lands
  }
}

}  // namespace ingot::kernels
