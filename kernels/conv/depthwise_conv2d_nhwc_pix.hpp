// kernels/conv/depthwise_conv2d_nhwc_pix.hpp — depthwise 2-D convolution, NHWC, f16/bf16, on the sub-group matrix
// multiply-accumulate (tensor cores on CUDA) with pixels along M and channels along N: no transposition
// (depthwise_conv2d_nhwc with px = 1).
//
//   x [B, H, W, C], w [C, kh, kw], optional bias [C] -> y [B, P, Q, C] (as depthwise_conv2d_nhwc.hpp).
//
// Why: the FMA kernels spend ~18 instructions per output in 16-bit (9 FMAs, conversions, shared loads, stores); the
// other tensor-core kernel (depthwise_conv2d_nhwc_mma.hpp) transposes NHWC into channel planes first. Here a pixel's 8
// channels of the staged band are one 16-byte row of a load_matrix, as they lie, so A needs no transposition: A is 16
// pixels x (8 channels of staged row 2m, 8 channels of row 2m + 1), and B is diagonal in the channel, B_kx,d[k][n] =
// w[c0 + n][d + k / 8][kx] where k % 8 = n (zero elsewhere and outside the window's rows). One mma adds, for 16 pixels
// and 8 channels of output row o = 2m - d, the taps (d, kx) and (d + 1, kx): 1/8 of its products are used, but one
// instruction does what 8 warp FMA instructions (and their conversions) would.
//
// Mapping. A work-group (warps x 32 threads) takes image b, a band of R output rows (R even), a strip of 16 S output
// columns and a block of CB channels (a multiple of 8 dividing C): g = ((b * NB + band) * NS + strip) * CBn + cb. Its
// block's weights go to shared memory first (one coalesced read per work-group). The band's RS = R + kh - 1 (rounded
// up to even) input rows, strip columns q0 - pw .. + 16 S + kw - 1, are copied as they lie (16-byte asynchronous copies
// of 8 channels, zeros outside the input; each thread's copies of a row pair computed once) into xs: pixel (r, j)
// channel c at (r * WS + j) * PS + c, PS = CB or CB + 8 so that a pixel's stride is an odd number of 16-byte chunks
// (the 8 rows of a load_matrix phase, consecutive pixels, then fall in distinct banks). With ahead (pa) = 0 the whole
// band is copied first; else row pairs stream through a ring of ahead + 2 pair slots (row_ring.hpp: pair u + ahead in
// flight while pair u is multiplied, one barrier per pair). Each warp takes units (16-column segment, 8-channel block)
// and keeps D of the unit's R output rows in registers: for row pair m and tap column kx, one load_matrix (lane l names
// pixel 16 seg + l % 8 + 8 ((l / 8) % 2) + kx of staged row 2m + l / 16) feeds the mma of every output row o with d =
// 2m - o in [-1, kh - 1]. Per unit: RS / 2 x kw load_matrix and about (kh + 1) / 2 x kw mma per output row. D's lanes
// hold channels 2 tl, 2 tl + 1 of pixels gl and gl + 8: the rows complete after pair m go to an output stage (two
// buffers, pixel stride PS: conflict-free 4-byte stores) and leave after the next pair's barrier as 16-byte vectors of
// whole pixels' channel blocks (stored from D directly, each warp store touched 8 lines with 16 bytes each: 0.064 ms
// against 0.0456 with the stage, H200 3x3 bf16).
// Measured (H200, 2026-12-04 twentieth session, N32 C384 56x56 bf16; docs/performance.md step 22): 3x3 pr 14 pc 64 pw 8
// pa 4 0.0455-0.0457 ms, pa 7 (pm 80) 0.0449, against the FMA stream kernel's 0.0434-0.0439 (the default); 7x7 pr 14
// pc 32 pw 4 pa 4 0.1007 (f16 0.1008) against the tensor-core ring kernel's 0.1032-0.1040 (the default, kept: this
// kernel's legalised OpenCL C is 17 MB for 7x7).
//
// Contract (the library's rules): launch depthwise_nhwc_pix_groups(layout, B) work-groups of layout.G() threads
// (launch bounds declare it); batch is a run-time u32 scalar; a work-group past the batch reads image 0 and stores
// nothing; f32 accumulation of the 16-bit products, rounded once to T. std::invalid_argument
// (depthwise_nhwc_pix_refusal) for what it does not take: not 16-bit, stride or dilation other than 1, C not a
// multiple of 8, odd or out-of-range rows, more than 7 pairs ahead, shared memory over the allowance (pm, default
// 48 KB; CUDA's dynamic shared memory above 48).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "direct_conv.hpp"
#include "ingot/dsl.hpp"
#include "plane_smem.hpp"
#include "row_ring.hpp"

namespace ingot::kernels {

// The kernel's choices (depthwise_conv2d_nhwc's spec parameters pr, ps, pc, pw).
struct DepthwiseNhwcPix {
  std::uint32_t rows = 8;       // output rows per work-group (R, even)
  std::uint32_t segs = 1;       // 16-column segments per work-group (S)
  std::uint32_t channels = 64;  // channels per work-group (CB; the largest multiple of 8 up to it dividing C is used)
  std::uint32_t warps = 4;      // warps per work-group (at most the units)
  std::uint32_t ahead = 0;      // 0: the whole band copied, then multiplied; else row pairs in flight (a ring)
  std::uint64_t smem_bytes = kPlaneSmemBytes;  // the shared memory the kernel may take (CUDA: dynamic above 48 KB)
};

struct NhwcPixLayout {
  std::uint32_t R = 0, S = 0, CB = 0, H8 = 0;  // rows, segments, channels and 8-channel blocks per work-group
  std::uint32_t NB = 0, NS = 0, CBn = 0;       // bands, strips, channel blocks
  std::uint32_t RS = 0, WS = 0, PS = 0;        // staged rows, staged pixels per row, pixel stride (elements)
  std::uint32_t units = 0, warps = 0;          // (segment, 8-channel block) units; warps per work-group
  std::uint32_t slots = 0;                     // row pairs held: RS / 2 (the whole band) or a ring of them
  std::uint32_t stage_rows = 0;                // output rows completed at one pair, at most (the stage's buffers)
  std::uint64_t bytes = 0;                     // the stage
  [[nodiscard]] std::uint32_t G() const { return 32 * warps; }
};

// The channels per work-group for C and a request: the largest multiple of 8 up to `want` (at least 8) dividing C (0
// where C is not a multiple of 8).
inline std::uint32_t nhwc_pix_channels(std::uint32_t C, std::uint32_t want) {
  if (C % 8 != 0) return 0;
  for (std::uint32_t cb = std::max(8u, want / 8 * 8); cb >= 8; cb -= 8) {
    if (C % cb == 0) return cb;
  }
  return 8;
}

inline NhwcPixLayout depthwise_nhwc_pix_geometry(const ConvSpec& s, const DepthwiseNhwcPix& o) {
  const auto P = static_cast<std::uint32_t>(s.out_len(0)), Q = static_cast<std::uint32_t>(s.out_len(1));
  NhwcPixLayout L;
  L.R = o.rows;
  L.S = o.segs;
  L.CB = nhwc_pix_channels(s.in_channels, o.channels);
  L.H8 = L.CB / 8;
  L.NB = L.R == 0 ? 0 : (P + L.R - 1) / L.R;
  L.NS = L.S == 0 ? 0 : (Q + 16 * L.S - 1) / (16 * L.S);
  L.CBn = L.CB == 0 ? 0 : s.in_channels / L.CB;
  L.RS = (L.R + s.ksize[0] - 1 + 1) / 2 * 2;
  L.WS = 16 * L.S + s.ksize[1] - 1;
  L.PS = L.H8 % 2 == 1 ? L.CB : L.CB + 8;
  L.units = L.S * L.H8;
  L.warps = std::clamp<std::uint32_t>(std::min(o.warps, std::max(L.units, 1u)), 1, 32);
  L.slots = o.ahead == 0 ? L.RS / 2 : std::min(ring_slots(o.ahead), L.RS / 2);
  {
    std::vector<std::uint32_t> done(std::max(L.RS / 2, 1u), 0);
    for (std::uint32_t oo = 0; oo < L.R; ++oo) ++done[std::min((oo + s.ksize[0] - 1) / 2, L.RS / 2 - 1)];
    L.stage_rows = *std::max_element(done.begin(), done.end());
  }
  L.bytes = (std::uint64_t{L.slots} * 2 * L.WS + std::uint64_t{2} * L.stage_rows * 16 * L.S) * L.PS * 2 +
            std::uint64_t{L.CB} * s.ksize[0] * s.ksize[1] * 2;
  return L;
}

// Why the kernel cannot run spec s (a valid depthwise NHWC spec) with options o ("" when it can).
inline std::string depthwise_nhwc_pix_refusal(const ConvSpec& s, std::size_t elem_bytes, const DepthwiseNhwcPix& o) {
  if (elem_bytes != 2) return "needs f16 or bf16 elements";
  if (s.stride[0] != 1 || s.stride[1] != 1 || s.dilation[0] != 1 || s.dilation[1] != 1) {
    return "needs stride 1 and dilation 1";
  }
  if (s.in_channels % 8 != 0) {
    return "needs C a multiple of 8 (a pixel's 8 channels are one 16-byte row; C = " + std::to_string(s.in_channels) +
           ")";
  }
  if (o.rows < 2 || o.rows % 2 != 0 || o.rows > 32) {
    return "takes an even number of output rows per work-group (pr) in [2, 32], not " + std::to_string(o.rows);
  }
  if (o.segs < 1 || o.segs > 8) {
    return "takes 1 to 8 16-column segments per work-group (ps), not " + std::to_string(o.segs);
  }
  if (o.channels < 8 || o.channels > 512) {
    return "takes 8 to 512 channels per work-group (pc), not " + std::to_string(o.channels);
  }
  if (o.warps < 1 || o.warps > 32) return "takes 1 to 32 warps per work-group (pw), not " + std::to_string(o.warps);
  if (o.ahead > 7) return "takes 0 to 7 row pairs in flight (pa), not " + std::to_string(o.ahead);
  if (const NhwcPixLayout L = depthwise_nhwc_pix_geometry(s, o); L.bytes > o.smem_bytes) {
    return "stages " + std::to_string(2 * L.slots) + " input rows x " + std::to_string(L.WS) + " pixels x " +
           std::to_string(L.CB) + " channels and two buffers of outputs in shared memory: " + std::to_string(L.bytes) +
           " bytes, more than " + std::to_string(o.smem_bytes) +
           "; use fewer rows (pr), segments (ps) or channels (pc), fewer row pairs in flight (pa), or allow more "
           "(pm, KB)";
  }
  return "";
}

inline std::uint64_t depthwise_nhwc_pix_groups(const NhwcPixLayout& L, std::uint64_t batch) {
  return batch * L.NB * L.NS * L.CBn;
}

template <class T>
void depthwise_conv2d_nhwc_pix(dsl::KernelBuilder& k, const ConvSpec& s, const DepthwiseNhwcPix& o) {
  using namespace ingot::dsl;
  static_assert(sizeof(T) == 2, "the pixel tensor-core depthwise kernel multiplies f16 or bf16");
  require_depthwise_nhwc_spec(s, "depthwise_conv2d_nhwc_pix");
  if (const std::string why = depthwise_nhwc_pix_refusal(s, sizeof(T), o); !why.empty()) {
    throw std::invalid_argument(s.name + ": the pixel tensor-core kernel (depthwise_conv2d_nhwc px = 1) " + why +
                                "; use px = 0");
  }
  const NhwcPixLayout L = depthwise_nhwc_pix_geometry(s, o);
  const std::uint32_t G = L.G();
  require_warp_launch_bounds(k, s, G, "the pixel tensor-core kernel");
  const std::uint32_t C = s.in_channels, H = s.in_size[0], Wd = s.in_size[1];
  const auto P = static_cast<std::uint32_t>(s.out_len(0)), Q = static_cast<std::uint32_t>(s.out_len(1));
  const std::uint32_t KH = s.ksize[0], KW = s.ksize[1], PH = s.pad[0], PW = s.pad[1];
  const std::uint32_t R = L.R, H8 = L.H8, WS = L.WS, PS = L.PS;

  const auto prm = declare_dense_conv_params<T>(k, s);  // batch, x [B,H,W,C], w [C, kh, kw], bias, y [B,P,Q,C]
  const auto& x = prm.io.x;
  const auto& y = prm.io.y;
  const std::uint32_t pairs = L.RS / 2, pair_elems = 2 * WS * PS, slots = L.slots;
  auto xs = k.shared<T>("xs", slots * pair_elems);
  // the output stage: two buffers of the rows completed at one pair (pixel stride PS: conflict-free 4-byte stores)
  auto ys = k.shared<T>("ys", 2 * L.stage_rows * 16 * L.S * PS);

  auto g = k.let("g", k.group_id(0));
  auto cb = L.CBn == 1 ? Val<u32>(0u) : k.let("cb", g % L.CBn);
  auto r1 = k.let("r1", g / L.CBn);
  auto strip = L.NS == 1 ? Val<u32>(0u) : k.let("strip", r1 % L.NS);
  auto r2 = k.let("r2", r1 / L.NS);
  auto band = L.NB == 1 ? Val<u32>(0u) : k.let("band", r2 % L.NB);
  auto b_raw = k.let("b_raw", r2 / L.NB);
  auto img_ok = k.let("img_ok", b_raw < prm.io.batch);
  auto b = k.let("b", select(img_ok, b_raw, 0u));
  auto c0 = k.let("c0", cb * L.CB);
  auto p0 = k.let("p0", band * R);
  auto q0 = k.let("q0", strip * (16 * L.S));
  auto lid = k.let("lid", k.local_id(0));
  auto warp = k.let("warp", lid / 32u);
  auto gl = k.let("gl", (lid % 32u) / 4u);
  auto tl = k.let("tl", lid % 4u);

  // 1. The copies of a row pair (2 WS H8 chunks of 16 bytes: chunk it = (r * WS + j) * H8 + h -> row r of the pair,
  // pixel j (input column q0 - PW + j), channels c0 + 8h .. + 8), this thread's chunks lid + i G computed once: the
  // column part of the source (0 outside the input), the destination in a slot, the pair row. Pair u's row r is input
  // row p0 - PH + 2u + r; indices wrap below 0 as u32, so one comparison tests each range.
  auto x_img = k.let("x_img", b * (H * Wd * C) + c0);
  struct PairCopy {
    std::optional<Val<bool>> valid;  // a partial last round: whether this thread has a chunk
    Val<bool> col_ok;
    Val<u32> src, dst, row;
  };
  std::vector<PairCopy> pc;
  const std::uint32_t chunks = 2 * WS * H8;
  for (std::uint32_t i = 0; i * G < chunks; ++i) {
    const std::string rt = "f" + std::to_string(i) + "_";
    PairCopy c;
    auto it = k.let(rt + "it", lid + i * G);
    if ((i + 1) * G > chunks) c.valid = k.let(rt + "v", it < chunks);
    auto h = H8 == 1 ? Val<u32>(0u) : Val<u32>(k.let(rt + "h", it % H8));
    auto j = k.let(rt + "j", (it / H8) % WS);
    c.row = k.let(rt + "r", it / (H8 * WS));
    auto iw = k.let(rt + "iw", q0 + j - PW);
    c.col_ok = k.let(rt + "okc", iw < Wd);
    c.src = k.let(rt + "src", x_img + select(c.col_ok, iw, 0u) * C + h * 8u);
    c.dst = k.let(rt + "dst", (c.row * WS + j) * PS + h * 8u);
    pc.push_back(c);
  }
  const auto copy_pairs = [&](std::uint32_t u0, std::uint32_t count) {
    for (std::uint32_t u = u0; u < u0 + count; ++u) {
      const std::string pt = "p" + std::to_string(u) + "_";
      for (std::size_t i = 0; i < pc.size(); ++i) {
        const PairCopy& c = pc[i];
        auto copy = [&] {
          auto ih = k.let(pt + "ih" + std::to_string(i), p0 + c.row + (2 * u) - PH);
          auto ok = k.let(pt + "ok" + std::to_string(i), c.col_ok && ih < H);
          copy_async(xs, c.dst + (u % slots) * pair_elems, x, c.src + select(ok, ih, 0u) * (Wd * C), 8, ok);
        };
        if (c.valid) {
          if_(*c.valid, copy);
        } else {
          copy();
        }
      }
    }
    async_commit(k);
  };

  // 2. Units (segment, 8-channel block) per warp; the lane's column of B (channel gl of the block) and whether it is
  // the nonzero row of b_0/b_2 (k = 2 tl = gl) or b_1/b_3 (k = 2 tl + 1 = gl).
  auto e0 = k.let("e0", tl * 2u == gl);
  auto e1 = k.let("e1", tl * 2u + 1u == gl);
  // lane l's load_matrix row: pixel l % 8 + 8 ((l / 8) % 2) of the 16, staged row + l / 16
  auto lane_px = k.let("lane_px", lid % 8u + ((lid / 8u) % 2u) * 8u);
  auto lane_row = k.let("lane_row", (lid % 32u) / 16u);
  struct Unit {
    std::optional<Val<bool>> repeat;  // a clamped unit of the last round (repeats another warp's)
    Val<u32> a_at, st;                // the lane's load_matrix row; its D's place in a stage row
    // [ty * KW + kx]: the lane's channel's tap where the lane holds B's nonzero row of b_0/b_2 (b0) or b_1/b_3 (b1),
    // else 0
    std::vector<Val<T>> b0, b1;
    std::vector<std::array<Val<f32>, 4>> d;
  };
  // The block's weights (CB kh kw contiguous elements) through shared memory: read from global memory once per
  // work-group, coalesced (per lane they would cost a sector per channel and tap).
  auto wsm = k.shared<T>("wsm", L.CB * KH * KW);
  for_group_rounds(k, lid, G, L.CB * KH * KW, "ws", true,
                   [&](const Val<u32>& i, std::uint32_t) { store(wsm, i, load(prm.w, c0 * (KH * KW) + i)); });
  k.barrier();
  std::vector<Unit> units;
  std::vector<std::vector<std::uint32_t>> rows_at(pairs);
  for (std::uint32_t oo = 0; oo < R; ++oo) rows_at[std::min((oo + KH - 1) / 2, pairs - 1)].push_back(oo);
  const std::uint32_t QS = 16 * L.S, max_rows = L.stage_rows;
  for_group_rounds(k, warp, L.warps, L.units, "unit", false, [&](const Val<u32>& unit, std::uint32_t ur) {
    const std::string ut = "u" + std::to_string(ur) + "_";
    Unit un;
    if ((ur + 1) * L.warps > L.units) un.repeat = k.let(ut + "rep", warp + ur * L.warps >= L.units);
    auto h = H8 == 1 ? Val<u32>(0u) : Val<u32>(k.let(ut + "h", unit % H8));
    auto seg = L.S == 1 ? Val<u32>(0u) : Val<u32>(k.let(ut + "seg", unit / H8));
    auto w_at = k.let(ut + "w", (h * 8u + gl) * (KH * KW));  // B's column n = gl: channel c0 + 8h + gl
    for (std::uint32_t t = 0; t < KH * KW; ++t) {
      auto wt = k.let(ut + "w" + std::to_string(t), load(wsm, w_at + t));
      un.b0.push_back(k.let(ut + "b0_" + std::to_string(t), select(e0, wt, Val<T>(0.0f))));
      un.b1.push_back(k.let(ut + "b1_" + std::to_string(t), select(e1, wt, Val<T>(0.0f))));
    }
    un.a_at = k.let(ut + "a", (lane_row * WS + seg * 16u + lane_px) * PS + h * 8u);
    // D of output row o: bias of channels 2 tl, 2 tl + 1 of the block
    std::array<Val<f32>, 2> init{Val<f32>(0.0f), Val<f32>(0.0f)};
    if (s.bias) {
      for (std::uint32_t f = 0; f < 2; ++f) {
        init[f] = k.let(ut + "bias" + std::to_string(f), cast<f32>(load(prm.io.bias, c0 + h * 8u + tl * 2u + f)));
      }
    }
    un.d.assign(R, {init[0], init[1], init[0], init[1]});
    // d_0, d_1 at pixel gl, d_2, d_3 at pixel gl + 8 of the segment, channels 8h + 2 tl, + 1
    un.st = k.let(ut + "st", (seg * 16u + gl) * PS + h * 8u + tl * 2u);
    units.push_back(std::move(un));
  });
  // Pair m (staged rows 2m, 2m + 1) feeds output rows o = 2m - dd with tap rows dd, dd + 1 in the window: o in
  // [2m - KH + 1, 2m + 1]; output row o is complete after pair (o + KH - 1) / 2 (the last pair at most): rows_at[m],
  // consecutive rows.
  const auto pair_products = [&](std::uint32_t m) {
    const std::uint32_t base = (m % slots) * pair_elems;
    for (Unit& un : units) {
      for (std::uint32_t kx = 0; kx < KW; ++kx) {
        const auto mv = load_matrix(xs, un.a_at + (base + kx * PS));
        std::array<Val<f32>, 8> a;
        for (std::size_t e = 0; e < 8; ++e) a[e] = cast<f32>(mv[e]);
        const auto tap = [&](const std::vector<Val<T>>& bv, std::int64_t ty) {
          return ty >= 0 && ty < KH ? cast<f32>(bv[static_cast<std::size_t>(ty) * KW + kx]) : Val<f32>(0.0f);
        };
        for (std::uint32_t oo = 0; oo < R; ++oo) {
          const std::int64_t dd = 2 * static_cast<std::int64_t>(m) - oo;  // tap rows dd (k < 8) and dd + 1 (k >= 8)
          if (dd < -1 || dd > static_cast<std::int64_t>(KH) - 1) continue;
          const std::array<Val<f32>, 4> bf{tap(un.b0, dd), tap(un.b1, dd), tap(un.b0, dd + 1), tap(un.b1, dd + 1)};
          un.d[oo] = mma_m16n8k16<T>(k, a, bf, un.d[oo]);
        }
      }
      // 3. D of the rows complete after this pair to the output stage (buffer m % 2): pixel gl (+ 8) of the segment,
      // channels 8h + 2 tl, + 1; a clamped unit (a repeat) writes nothing.
      for (std::size_t ri = 0; ri < rows_at[m].size(); ++ri) {
        const std::uint32_t oo = rows_at[m][ri];
        const auto put = [&] {
          for (std::uint32_t f = 0; f < 2; ++f) {
            const std::vector<Val<f32>> pair{un.d[oo][std::size_t{2} * f], un.d[oo][std::size_t{2} * f + 1]};
            const auto row = static_cast<std::uint32_t>(ri) + (m % 2) * max_rows;
            store_vec(ys, un.st + ((row * QS + 8 * f) * PS), pair);
          }
        };
        if (un.repeat) {
          if_(!*un.repeat, put);
        } else {
          put();
        }
      }
    }
  };
  // The stage's rows completed at pair m leave as 16-byte vectors (chunk it: row ri, pixel, 8 channels h).
  const auto copy_out = [&](std::uint32_t m) {
    const auto nr = static_cast<std::uint32_t>(rows_at[m].size());
    if (nr == 0) return;
    const std::string ot = "o" + std::to_string(m) + "_";
    for_group_rounds(k, lid, G, nr * QS * H8, ot, true, [&](const Val<u32>& it, std::uint32_t r) {
      const std::string rt = ot + std::to_string(r) + "_";
      auto h = H8 == 1 ? Val<u32>(0u) : Val<u32>(k.let(rt + "h", it % H8));
      auto px = k.let(rt + "px", (it / H8) % QS);
      auto ri = k.let(rt + "ri", it / (H8 * QS));
      auto oo = k.let(rt + "o", p0 + ri + rows_at[m][0]);
      Val<bool> ok = img_ok && q0 + px < Q;
      if (P % R != 0) ok = ok && oo < P;
      if_(ok, [&] {
        const auto v = load_vec(ys, ((ri + (m % 2) * max_rows) * QS + px) * PS + h * 8u, 8);
        store_vec(y, ((b * P + oo) * Q + q0 + px) * C + c0 + h * 8u, v);
      });
    });
  };
  const auto step = [&](std::uint32_t m) {
    if (m > 0) copy_out(m - 1);  // (after the step's barrier: every warp's stage stores of pair m - 1 are done)
    pair_products(m);
  };
  if (o.ahead == 0) {
    copy_pairs(0, pairs);
    async_wait(k, 0);
    for (std::uint32_t m = 0; m < pairs; ++m) {
      k.barrier();
      step(m);
    }
  } else {
    // (row_ring.hpp: pair u + ahead in flight while pair u is read; slot u % (ahead + 2), or every pair its own slot)
    for_ring_rows(
        k, pairs, o.ahead, [&](std::uint32_t u) { copy_pairs(u, 1); }, step);
  }
  k.barrier();
  copy_out(pairs - 1);
}

}  // namespace ingot::kernels
