// kernels/conv/grouped_conv_mma_smem.hpp — grouped 2-D/3-D convolution, NCDHW, 8 input channels
// per group, f16/bf16, on the sub-group matrix multiply-accumulate with the group's input band
// staged in shared memory channel-interleaved (conv2d_grouped / conv3d_grouped with stage = 1).
//
//   x [B, C, (D,) H, W], w [O, 8, (kd,) kh, kw], optional bias [O] -> y [B, O, (OD,) P, Q],
//   groups = C / 8, a multiple of 8 output channels per group, stride 1, dilation 1, any padding.
//
// Mapping. A work-group (`threads` threads: 32, 64, 128 or 256, default kStagedMmaGroup) takes image b, group g, output
// depth slices od .. od + ds - 1 (ds = 1 in 2-D) and a band of R output rows (R = rows). It copies the input they read
// — the kd + ds - 1 depth slices od - pad_d .., rows band*R - pad_h .. + R + kh - 2, all columns with pad_w zero
// columns each side — into the shared array xs as pixels of 8 channels (16 bytes: channel pairs are 4-byte words),
// zeros outside the input; and the B fragments of the group's weights into ws. Then each warp takes tasks (an output
// slice, 16 consecutive pixels of the band's R x Q outputs, flattened row-major; 8 output channels): D[pixel][channel]
// = bias + sum_s A_s B_s, one m16n8k16 step per
// pair of taps, column k of A = (tap 2s + k / 8, input channel k % 8). With the fragment layout of ir.hpp, lane l (g_l
// = l/4, t_l = l%4) reads A as four 4-byte words per step — channels 2t_l, 2t_l + 1 of its pixels g_l and g_l + 8 at
// the two taps, each a fixed offset from the pixel's place (no index arithmetic per step) — and B as one 8-byte word. A
// warp's word loads read 8 consecutive pixels x 16 bytes: no bank conflicts within a row. The tap past the last (odd
// tap counts) has zero weights and reads the last tap (finite values). D's lanes hold output channels 2t_l (+1) at
// pixels g_l (+8): four scalar stores each, pixels past the band or rows past P skipped.
// Feeds (StagedMmaFeed): with lm, A is one load_matrix per step instead (lane l names pixel (l % 8) + 8 ((l / 8) % 2)
// of the tile at the step's first tap, or for l >= 16 its second: a pixel's 8 channels are one 16-byte row; 8
// consecutive pixels of a band row are 128 contiguous bytes, no bank conflicts where Q % 8 == 0). With hold_b and
// 8 output channels per group (one channel block), each warp loads every step's B fragment once, before its tasks.
// With pair_stores and Q even, lanes g_l and g_l ^ 1 swap one value per pixel row (a shuffle) and each stores two
// adjacent pixels of one channel as one 4-byte vector (two stores instead of four).
// Row units (row_units, where Q % 16 == 0, or Q % 8 == 0 and R even): a warp's task is RG whole rows of the band
// (RG = 1 or 2, RG * Q / 16 tiles) of one output slice and channel block instead of one flattened 16-pixel tile;
// every tile's halves then lie at places known when tracing, so the tiles of a unit need no index arithmetic
// (no division by Q per pixel, constant offsets from one per-unit index).
// Staging: a unit is one input row segment of vp columns of the 8 channels (vp = the widest of
// `vec` (default 2), 4 and 2 at most `vec` that divides W: 16-, 8- or 4-byte loads; else 1):
// 8 loads, then vp 16-byte stores of the transposed pixels (the printer packs the pairs), a zero
// vector where the row or slice lies outside the input; every thread's loads are issued before
// its stores. One barrier between staging and the products.
// Launch grid_1d(batch * grouped_conv_mma_smem_groups_per_batch() * threads, threads) with launch
// bounds `threads`.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "direct_conv.hpp"
#include "grouped_conv_mma.hpp"
#include "ingot/dsl.hpp"
#include "plane_smem.hpp"

namespace ingot::kernels {

inline constexpr std::uint32_t kStagedMmaGroup = 128;  // default threads per work-group (4 warps)

// How the staged kernel feeds its products and stores them (each changes the instructions, never the sums' order).
struct StagedMmaFeed {
  bool lm = true;            // A fragments by load_matrix (one per step) instead of four pair loads
  bool hold_b = true;        // with one block of 8 output channels per group: B fragments loaded once per warp
  bool pair_stores = false;  // with Q even: lanes swap a value (one shuffle) and store 2 pixels of a channel
  bool row_units = true;     // tasks of whole band rows where the plan has unit_rows (no index arithmetic per tile)
};

// Throws std::invalid_argument unless `threads` is a work-group size the staged kernel takes.
inline void check_staged_mma_threads(const std::string& who, std::uint32_t threads) {
  if (threads != 32 && threads != 64 && threads != 128 && threads != 256) {
    throw std::invalid_argument(who +
                                ": the staged tensor-core kernel takes work-groups of 32, 64, 128 or 256 "
                                "threads, not " +
                                std::to_string(threads));
  }
}

// Throws std::invalid_argument unless ds (output depth slices per work-group, a staged kernel's "ds") is in [1, 16]
// and is 1 outside 3-D.
inline void check_grouped_depth_slices(const ConvSpec& s, std::uint32_t ds) {
  if (ds < 1 || ds > 16) {
    throw std::invalid_argument(s.name + ": ds (output depth slices per work-group) = " + std::to_string(ds) +
                                " must be in [1, 16]");
  }
  if (ds > 1 && s.rank() != 3) {
    throw std::invalid_argument(s.name + ": ds (output depth slices per work-group) = " + std::to_string(ds) +
                                " applies to 3-D convolutions only; use ds = 1");
  }
}

// Throws std::invalid_argument unless `batch` images of `per_image` threads fit a kernel's 32-bit thread indices;
// `kernel` names it in the message ("staged", "planar").
inline void check_grouped_batch_threads(const ConvSpec& s, std::uint64_t per_image, std::uint64_t batch,
                                        const std::string& kernel) {
  if (batch > 0xffffffffull / per_image) {
    throw std::invalid_argument(s.name + ": batch " + std::to_string(batch) + " x " + std::to_string(per_image) +
                                " threads of the " + kernel +
                                " tensor-core kernel exceed 32-bit thread indices; split the batch or use stage = 0");
  }
}

// Sizes of the staged kernel for spec s and band height `rows`.
struct StagedMmaPlan {
  GroupedMmaDims dm{};
  std::uint32_t R = 0;          // output rows per band
  std::uint32_t bands = 0;      // bands per output slice
  std::uint32_t rs = 0;         // staged rows per depth slice (R + kh - 1)
  std::uint32_t ws = 0;         // staged pixels per row (input column iw at pixel pad_w + iw)
  std::uint32_t vp = 1;         // columns per staging unit
  std::uint32_t taps = 0;       // kd * kh * kw
  std::uint32_t ds = 1;         // output depth slices per work-group (3-D)
  std::uint32_t dblocks = 1;    // work-groups along the output depth: ceil(OD / ds)
  std::uint32_t slices = 1;     // staged depth slices: kd + ds - 1
  std::uint32_t steps = 0;      // k-steps: ceil(taps / 2)
  std::uint32_t cblocks = 0;    // blocks of 8 output channels per group
  std::uint32_t tiles = 0;      // 16-pixel tiles per band
  std::uint32_t unit_rows = 0;  // rows of a row unit (staged_mma_unit_rows), 0 = none
  std::uint64_t xs_elems = 0, ws_elems = 0;
  [[nodiscard]] std::uint64_t bytes(std::size_t elem_bytes) const { return (xs_elems + ws_elems) * elem_bytes; }
};

// The staging vector width: the widest of 8, 4 and 2 that is at most `vec` (1, 2, 4 or 8; 0 = 2) and
// divides W, else 1.
inline std::uint32_t staged_mma_vector(std::uint32_t W, std::uint32_t vec) {
  for (const std::uint32_t v : {8u, 4u, 2u}) {
    if (v <= (vec == 0 ? 2u : vec) && W % v == 0) return v;
  }
  return 1;
}

// Rows of a row unit for Q output columns and R-row bands: the fewest whole rows whose pixels are whole 16-pixel
// tiles with every 8-pixel half in one row — 1 where Q % 16 == 0, 2 where Q % 16 == 8 and R is even — else 0.
inline std::uint32_t staged_mma_unit_rows(std::uint32_t Q, std::uint32_t R) {
  if (Q % 16 == 0) return 1;
  if (Q % 8 == 0 && R % 2 == 0) return 2;
  return 0;
}

inline StagedMmaPlan grouped_conv_mma_smem_geometry(const ConvSpec& s, std::uint32_t rows, std::uint32_t vec = 0,
                                                    std::uint32_t ds = 1) {
  StagedMmaPlan pl;
  pl.dm = grouped_mma_dims(s);
  const GroupedMmaDims& d = pl.dm;
  pl.R = std::max<std::uint32_t>(1, std::min(rows, d.P));
  pl.bands = (d.P + pl.R - 1) / pl.R;
  pl.rs = pl.R + d.KH - 1;
  pl.ws = std::max(d.PW + d.W, d.Q + d.KW - 1);
  pl.vp = staged_mma_vector(d.W, vec);
  pl.taps = d.KD * d.KH * d.KW;
  pl.ds = std::max<std::uint32_t>(1, std::min(ds, d.OD));
  pl.dblocks = (d.OD + pl.ds - 1) / pl.ds;
  pl.slices = d.KD + pl.ds - 1;
  pl.steps = (pl.taps + 1) / 2;
  pl.cblocks = s.out_per_group() / 8;
  pl.tiles = (pl.R * d.Q + 15) / 16;
  pl.unit_rows = staged_mma_unit_rows(d.Q, pl.R);
  pl.xs_elems = static_cast<std::uint64_t>(pl.slices) * pl.rs * pl.ws * 8;
  pl.ws_elems = static_cast<std::uint64_t>(pl.cblocks) * pl.steps * 32 * 4;
  return pl;
}

// Why the staged kernel cannot run spec s with elements of elem_bytes and `rows` ("" when it can).
inline std::string grouped_conv_mma_smem_refusal(const ConvSpec& s, std::size_t elem_bytes, std::uint32_t rows,
                                                 std::uint32_t vec = 0, std::uint32_t ds = 1) {
  if (std::string why = grouped_conv_mma_refusal(s, elem_bytes); !why.empty()) return why;
  const StagedMmaPlan pl = grouped_conv_mma_smem_geometry(s, rows, vec, ds);
  if (const std::uint64_t b = pl.bytes(elem_bytes); b > kPlaneSmemBytes) {
    return "stages " + std::to_string(pl.slices) + " slice(s) x " + std::to_string(pl.rs) + " rows x " +
           std::to_string(pl.ws) + " pixels of 8 channels and the weights in shared memory: " + std::to_string(b) +
           " bytes, more than " + std::to_string(kPlaneSmemBytes) + " (fewer rows per band" +
           (pl.ds > 1 ? std::string(" or depth slices (ds)") : std::string()) + " would shrink it)";
  }
  return "";
}

// Throws std::invalid_argument with the reason unless the staged kernel applies with `rows`.
inline StagedMmaPlan grouped_conv_mma_smem_plan(const ConvSpec& s, std::size_t elem_bytes, std::uint32_t rows,
                                                std::uint32_t vec = 0, std::uint32_t ds = 1) {
  s.validate();
  if (rows < 1 || rows > 64) {
    throw std::invalid_argument(s.name + ": rows = " + std::to_string(rows) + " must be in [1, 64]");
  }
  if (vec != 0 && vec != 1 && vec != 2 && vec != 4 && vec != 8) {
    throw std::invalid_argument(s.name + ": the staged kernel's staging vector (sv) is 1, 2, 4 or 8 elements, not " +
                                std::to_string(vec));
  }
  check_grouped_depth_slices(s, ds);
  if (const std::string why = grouped_conv_mma_smem_refusal(s, elem_bytes, rows, vec, ds); !why.empty()) {
    throw std::invalid_argument(s.name + ": the staged tensor-core kernel (stage = 1) " + why + "; use stage = 0");
  }
  return grouped_conv_mma_smem_geometry(s, rows, vec, ds);
}

// Work-groups per image: groups x blocks of ds output depth slices x bands.
inline std::uint64_t grouped_conv_mma_smem_groups_per_batch(const ConvSpec& s, std::uint32_t rows,
                                                            std::uint32_t ds = 1) {
  const StagedMmaPlan pl = grouped_conv_mma_smem_geometry(s, rows, 0, ds);
  return static_cast<std::uint64_t>(s.groups) * pl.dblocks * pl.bands;
}

// Throws std::invalid_argument unless `batch` images' threads fit the 32-bit thread indices.
inline void check_grouped_conv_mma_smem_batch(const ConvSpec& s, std::uint32_t rows, std::uint64_t batch,
                                              std::uint32_t threads = kStagedMmaGroup, std::uint32_t ds = 1) {
  check_staged_mma_threads(s.name, threads);
  check_grouped_batch_threads(s, grouped_conv_mma_smem_groups_per_batch(s, rows, ds) * threads, batch, "staged");
}

template <class T>
void grouped_conv_mma_smem(dsl::KernelBuilder& k, const ConvSpec& s, std::uint32_t rows,
                           std::uint32_t threads = kStagedMmaGroup, std::uint32_t vec = 0,
                           const StagedMmaFeed& feed = {}, std::uint32_t ds = 1) {
  using namespace ingot::dsl;
  static_assert(sizeof(T) == 2, "the staged tensor-core kernel multiplies f16 or bf16");
  const StagedMmaPlan pl = grouped_conv_mma_smem_plan(s, sizeof(T), rows, vec, ds);
  check_staged_mma_threads(s.name, threads);
  const GroupedMmaDims& dm = pl.dm;
  const auto i32c = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  const std::uint32_t O = s.out_channels, Og = s.out_per_group(), G = s.groups, NG = threads;
  const std::uint32_t D = dm.D, H = dm.H, Wd = dm.W, OD = dm.OD, P = dm.P, Q = dm.Q;
  const std::uint32_t KH = dm.KH, KW = dm.KW, PD = dm.PD, PH = dm.PH, PW = dm.PW;
  const std::uint32_t R = pl.R, RS = pl.rs, WS = pl.ws, VP = pl.vp, S = pl.steps, NBc = pl.cblocks;
  const std::uint32_t taps = pl.taps, band_px = R * Q, plane = D * H * Wd;
  const std::uint32_t DS = pl.ds, DB = pl.dblocks, SL = pl.slices;
  const std::uint32_t per_batch = G * DB * pl.bands;

  k.launch_bounds(NG);
  const auto prm = declare_dense_conv_params<T>(k, s);
  const auto& batch = prm.io.batch;
  const auto& x = prm.io.x;
  const auto& w = prm.w;
  const auto& bias = prm.io.bias;
  const auto& y = prm.io.y;
  auto xs = k.shared<T>("xs", static_cast<std::uint32_t>(pl.xs_elems));
  auto wsm = k.shared<T>("wsm", static_cast<std::uint32_t>(pl.ws_elems));

  // Work-group: band fastest (neighbouring bands share their halo rows in L2), then the block of DS output depth
  // slices from od (od .. od + DS - 1, those < OD), g, b.
  auto wg = k.let("wg", k.group_id(0));
  auto live = k.let("live", wg < batch * per_batch);
  auto task = k.let("task", select(live, wg, 0u));  // a group past the batch takes group 0's operands
  auto band = k.let("band", task % pl.bands);
  auto od = k.let("od", ((task / pl.bands) % DB) * DS);
  auto bg = k.let("bg", task / (pl.bands * DB));  // b * groups + g
  auto g = k.let("g", bg % G);
  auto lid = k.let("lid", k.local_id(0));
  auto x_group = k.let("x_group", bg * (8u * plane));         // channel 8g of image b
  auto row0 = k.let("row0", cast<i32>(band * R) - i32c(PH));  // input row of staged row 0

  // Staging units (staged slice kd: input slice od + kd - pad_d, staged row r, column pair j): loads first.
  const std::uint32_t per_row = Wd / VP, units = SL * RS * per_row;
  struct Unit {
    Val<u32> idx;
    Val<bool> ok;
    Val<u32> at;                          // element of xs of the unit's first pixel
    std::vector<std::vector<Val<T>>> ch;  // [channel][column]
  };
  std::vector<Unit> got;
  for (std::uint32_t r = 0; r * NG < units; ++r) {
    const std::string rt = std::to_string(r);
    Unit u;
    u.idx = k.let("u" + rt, lid + r * NG);
    auto uc = (r + 1) * NG <= units ? u.idx : k.let("uc" + rt, min(u.idx, units - 1));
    auto j = k.let("uj" + rt, uc % per_row);
    auto sr = k.let("ur" + rt, (uc / per_row) % RS);
    auto kd = k.let("ud" + rt, uc / (per_row * RS));
    auto ih = k.let("uh" + rt, row0 + cast<i32>(sr));
    Val<bool> ok = cast<u32>(ih) < H;  // negative wraps
    Val<u32> slice = 0u;
    if (dm.depth_varies()) {
      auto id = k.let("uid" + rt, cast<i32>(od + kd) - i32c(PD));
      auto dok = k.let("udok" + rt, cast<u32>(id) < D);
      ok = ok && dok;
      slice = select(dok, cast<u32>(id), 0u) * (H * Wd);
    }
    u.ok = k.let("uok" + rt, ok);
    auto src = k.let("usrc" + rt, x_group + slice + select(u.ok, cast<u32>(ih), 0u) * Wd + j * VP);
    u.at = k.let("uat" + rt, ((kd * RS + sr) * WS + j * VP + PW) * 8u);
    for (std::uint32_t ci = 0; ci < 8; ++ci) {
      if (VP == 1) {
        u.ch.push_back({load(x, src + ci * plane)});
      } else {
        u.ch.push_back(load_vec(x, src + ci * plane, VP));
      }
    }
    got.push_back(std::move(u));
  }

  // The weights as B fragments: entry e = (cb*S + st)*32 + lane holds b_0..b_3 of that lane in
  // step st of channel block cb: w[oc][ci][tap], oc = g*Og + 8cb + lane/4, ci = 2(lane%4) + i%2,
  // tap = 2st + i/2 (0 past the last tap).
  const std::uint32_t entries = NBc * S * 32;
  for_group_rounds(k, lid, NG, entries, "we", true, [&](const Val<u32>& e, std::uint32_t) {
    auto ln = k.let("we_l", e % 32u);
    auto st = k.let("we_s", (e / 32u) % S);
    auto oc = k.let("we_o", g * Og + (e / (32u * S)) * 8u + ln / 4u);
    std::vector<Val<T>> b;
    for (std::uint32_t i = 0; i < 4; ++i) {
      auto tap = st * 2u + i / 2;
      auto tok = k.let("we_ok" + std::to_string(i), tap < taps);
      auto wv = load(w, (oc * 8u + (ln % 4u) * 2u + i % 2) * taps + select(tok, tap, 0u));
      b.push_back(select(tok, wv, Val<T>(0.0f)));
    }
    store_vec(wsm, e * 4u, b);
  });
  // The zero columns left and right of every staged row.
  if (const std::uint32_t side = WS - Wd; side > 0) {
    for_group_rounds(k, lid, NG, SL * RS * side, "zc", true, [&](const Val<u32>& i, std::uint32_t) {
      auto kk = k.let("zc_k", i % side);
      auto col = select(kk < PW, kk, kk + Wd);
      store_vec(xs, ((i / side) * WS + col) * 8u, std::vector<Val<f32>>(8, Val<f32>(0.0f)));
    });
  }
  // The transposed units: pixel e of unit u holds channel ci's element e.
  for (std::size_t r = 0; r < got.size(); ++r) {
    const Unit& u = got[r];
    const auto put = [&] {
      if_(u.ok, [&] {
        for (std::uint32_t e = 0; e < VP; ++e) {
          std::vector<Val<T>> px;
          for (std::uint32_t ci = 0; ci < 8; ++ci) px.push_back(u.ch[ci][e]);
          store_vec(xs, u.at + e * 8u, px);
        }
      }).else_([&] {
        for (std::uint32_t e = 0; e < VP; ++e) {
          store_vec(xs, u.at + e * 8u, std::vector<Val<f32>>(8, Val<f32>(0.0f)));
        }
      });
    };
    if ((r + 1) * NG <= units) {
      put();
    } else {
      if_(u.idx < units, put);
    }
  }
  k.barrier();

  // The products, by row units or flattened tasks (below).
  const std::uint32_t warps = NG / 32;
  auto warp = k.let("warp", lid / 32u);
  auto lane = k.let("lane", lid % 32u);
  auto gl = k.let("gl", lane / 4u);
  auto tl = k.let("tl", lane % 4u);
  const auto tap_offset = [&](std::uint32_t tap) {  // element offset of tap (kd, ky, kx) from a pixel
    const std::uint32_t kd = tap / (KH * KW), ky = (tap / KW) % KH, kx = tap % KW;
    return ((kd * RS + ky) * WS + kx) * 8;
  };
  // With lm, lane l names row (l % 8) + 8 ((l / 8) % 2) of A — pixel px + that row — at the step's first tap
  // (l < 16) or second (columns 8 .. 15): the 8 channels of a pixel are one 16-byte row of xs.
  Val<bool> lm_hi = false;
  if (feed.lm) lm_hi = k.let("lm_hi", lane >= 16u);
  // B held: the group's single channel block's fragments, every step's, loaded once.
  const bool hold_b = feed.hold_b && NBc == 1;
  std::vector<std::array<Val<f32>, 4>> bheld;
  if (hold_b) {
    for (std::uint32_t st = 0; st < S; ++st) {
      const auto bv = load_vec(wsm, lane * 4u + st * 128u, 4);
      std::array<Val<f32>, 4> b;
      for (std::uint32_t i = 0; i < 4; ++i) b[i] = cast<f32>(bv[i]);  // unbound: the mma takes the loaded words
      bheld.push_back(b);
    }
  }
  // Pair stores: the partner lane (gl ^ 1) and whether this lane is the odd one.
  const bool pair_stores = feed.pair_stores && Q % 2 == 0;
  Val<bool> odd = false;
  Val<u32> odd_u = 0u, partner = 0u;
  if (pair_stores) {
    odd_u = k.let("odd", gl % 2u);
    odd = k.let("odd_b", odd_u == 1u);
    partner = k.let("partner", select(odd, lane - 4u, lane + 4u));
  }
  // One tile's steps: A at the lane's two pixels' places at[m] (pair loads) or by load_matrix at lm_row(st), the
  // lane's row at step st; B held or from wsm at wat; acc holds the bias.
  const auto tile_products = [&](const std::array<Val<u32>, 2>& at,
                                 const std::function<Val<u32>(std::uint32_t)>& lm_row, const Val<u32>& wat,
                                 std::array<Val<f32>, 4> acc) {
    for (std::uint32_t st = 0; st < S; ++st) {
      const std::uint32_t t0 = 2 * st, t1 = std::min(2 * st + 1, taps - 1);
      std::array<Val<f32>, 8> a;
      if (feed.lm) {
        const auto m = load_matrix(xs, lm_row(st));
        for (std::uint32_t i = 0; i < 8; ++i) a[i] = cast<f32>(m[i]);
      } else {
        for (std::uint32_t q = 0; q < 4; ++q) {  // a_{2q}, a_{2q+1}: pixel m = q % 2, tap t0 or t1 (q / 2)
          const auto pair = load_vec(xs, at[q % 2] + tap_offset(q / 2 ? t1 : t0), 2);
          a[2 * q] = cast<f32>(pair[0]);
          a[2 * q + 1] = cast<f32>(pair[1]);
        }
      }
      if (hold_b) {
        acc = mma_m16n8k16<T>(k, a, bheld[st], acc);
      } else {
        const auto bv = load_vec(wsm, wat + st * 128u, 4);
        acc = mma_m16n8k16<T>(k, a, {cast<f32>(bv[0]), cast<f32>(bv[1]), cast<f32>(bv[2]), cast<f32>(bv[3])}, acc);
      }
    }
    return acc;
  };
  // d_{2m + e}: output channel oc + e at pixel m, whose element of y for channel oc is y_at (stored where store_ok).
  const std::uint32_t OPQ = OD * P * Q;
  const auto store_pixel = [&](const std::array<Val<f32>, 4>& acc, std::uint32_t m, const Val<bool>& store_ok,
                               const Val<u32>& y_at) {
    if (pair_stores) {
      // Lanes gl and gl ^ 1 swap one value: the even one stores channel oc at its pixel and the next, the odd one
      // channel oc + 1 at the pixel before and its own (Q even: both in one row, 4-byte aligned).
      auto got = shuffle(select(odd, acc[2 * m], acc[2 * m + 1]), partner, 32);
      const std::vector<Val<f32>> pair{select(odd, got, acc[2 * m]), select(odd, acc[2 * m + 1], got)};
      if_(store_ok, [&] { store_vec(y, y_at + odd_u * OPQ - odd_u, pair); });
      return;
    }
    for (std::uint32_t e = 0; e < 2; ++e) {
      if_(store_ok, [&] { store(y, y_at + e * OPQ, cast<T>(acc[2 * m + e])); });
    }
  };
  const auto bias_acc = [&](const Val<u32>& oc) {
    std::array<Val<f32>, 2> bias_c{0.0f, 0.0f};
    if (s.bias) {
      for (std::uint32_t e = 0; e < 2; ++e) bias_c[e] = cast<f32>(load(bias, oc + e));
    }
    return std::array<Val<f32>, 4>{bias_c[0], bias_c[1], bias_c[0], bias_c[1]};
  };
  auto y_img = k.let("yb", ((bg / G) * O) * OPQ + od * (P * Q));  // output slice od of image b, channel 0

  if (pl.unit_rows > 0 && feed.row_units) {
    // Row units: a task is RG whole band rows (RG * Q a multiple of 16) of one output slice and channel block, so
    // each tile half (8 pixels, Q % 8 == 0) lies in one row at a place known when tracing: no index arithmetic per
    // tile. Unit u = (dz * NBc + cb) * NR + rg; warp w takes w, w + warps, ... (clamped like the tasks).
    const std::uint32_t RG = pl.unit_rows, NR = R / RG, UT = RG * Q / 16, units = DS * NBc * NR;
    const auto half_place = [&](std::uint32_t i, std::uint32_t m) {  // (row, column) of half m of tile i
      const std::uint32_t px = 16 * i + 8 * m;
      return std::array<std::uint32_t, 2>{px / Q, px % Q};
    };
    auto lane_at = k.let("lane_at", gl * 8u + tl * 2u);  // pair loads: pixel gl, channels 2 tl
    Val<u32> lm_lane = 0u;
    Val<bool> lm_h = false;
    if (feed.lm) {
      lm_lane = k.let("lm_lane", (lane % 8u) * 8u);
      lm_h = k.let("lm_h", ((lane / 8u) % 2u) == 1u);  // this lane names a pixel of the tile's second half
    }
    for_group_rounds(k, warp, warps, units, "u", false, [&](const Val<u32>& uu, std::uint32_t r) {
      const std::string rt = "u" + std::to_string(r) + "_";
      Val<bool> ok = live;
      if ((r + 1) * warps > units) ok = k.let(rt + "live", live && warp + r * warps < units);
      Val<u32> dz = 0u, zoff = 0u, rg = 0u, cb = 0u;
      if (DS > 1) {
        dz = k.let(rt + "dz", uu / (NBc * NR));
        zoff = dz * (RS * WS * 8u);
        if (OD % DS != 0) ok = k.let(rt + "dok", ok && od + dz < OD);
      }
      if (NR > 1) rg = k.let(rt + "rg", uu % NR);
      if (NBc > 1) cb = k.let(rt + "cb", (uu / NR) % NBc);
      auto xb = k.let(rt + "xb", zoff + rg * (RG * WS * 8u));  // the unit's first pixel in xs
      auto p0 = k.let(rt + "p", band * R + rg * RG);           // its first output row
      auto oc = k.let(rt + "oc", g * Og + cb * 8u + tl * 2u);
      auto yu = k.let(rt + "y", y_img + dz * (P * Q) + oc * OPQ + p0 * Q + gl);
      Val<u32> at_u = 0u, lm_u = 0u;
      if (feed.lm) {
        lm_u = k.let(rt + "lm", xb + lm_lane);
      } else {
        at_u = k.let(rt + "at", xb + lane_at);
      }
      const auto wat = hold_b ? Val<u32>(0u) : k.let(rt + "wat", (cb * (S * 32u) + lane) * 4u);
      std::map<std::pair<std::uint32_t, std::uint32_t>, Val<u32>> lm_bases;  // load_matrix row bases of this unit
      for (std::uint32_t i = 0; i < UT; ++i) {
        std::array<Val<u32>, 2> at{Val<u32>(0u), Val<u32>(0u)};
        std::array<std::uint32_t, 2> off{};
        for (std::uint32_t m = 0; m < 2; ++m) {
          const auto [ri, c0] = half_place(i, m);
          off[m] = (ri * WS + c0) * 8;
          if (!feed.lm) at[m] = at_u + off[m];
        }
        // The lane's row at step st: lm_u + (its half's place) + (its tap's offset), as a per-unit base for each
        // pair of differences (second half - first, second tap - first) plus a constant, which the compiler folds
        // into the load's address (a handful of bases per unit instead of a select and adds per step).
        const auto lm_row = [&, off](std::uint32_t st) {
          const std::uint32_t o0 = tap_offset(2 * st), o1 = tap_offset(std::min(2 * st + 1, taps - 1));
          const std::pair<std::uint32_t, std::uint32_t> key{off[1] - off[0], o1 - o0};
          auto it = lm_bases.find(key);
          if (it == lm_bases.end()) {
            const std::string nm = rt + "lb" + std::to_string(lm_bases.size());
            it = lm_bases
                     .emplace(key, k.let(nm, lm_u + select(lm_h, Val<u32>(key.first), Val<u32>(0u)) +
                                                 select(lm_hi, Val<u32>(key.second), Val<u32>(0u))))
                     .first;
          }
          return it->second + (off[0] + o0);
        };
        const auto acc = tile_products(at, lm_row, wat, bias_acc(oc));
        for (std::uint32_t m = 0; m < 2; ++m) {
          const auto [ri, c0] = half_place(i, m);
          Val<bool> store_ok = ok;
          if (P % R != 0) store_ok = ok && p0 + ri < P;  // a last band past P
          store_pixel(acc, m, store_ok, yu + (ri * Q + c0));
        }
      }
    });
    return;
  }

  // Flattened tasks: task = (dz * NBc + cb) * tiles + tile (output depth slice od + dz), 16 consecutive pixels of
  // the band's R x Q outputs; warp w takes w, w + 4, ... (clamped: every lane reaches every mma; a repeated task
  // stores nothing).
  const std::uint32_t tasks = DS * NBc * pl.tiles;
  Val<u32> lm_row = 0u;
  if (feed.lm) lm_row = k.let("lm_row", lane % 8u + ((lane / 8u) % 2u) * 8u);
  for_group_rounds(k, warp, warps, tasks, "t", false, [&](const Val<u32>& t, std::uint32_t r) {
    const std::string rt = "r" + std::to_string(r) + "_";
    Val<bool> ok = live;
    if ((r + 1) * warps > tasks) ok = k.let(rt + "live", live && warp + r * warps < tasks);
    Val<u32> dz = 0u, zoff = 0u;  // the task's output slice od + dz; its staged slices start zoff elements in
    if (DS > 1) {
      dz = k.let(rt + "dz", t / (NBc * pl.tiles));
      zoff = k.let(rt + "zo", dz * (RS * WS * 8u));
      if (OD % DS != 0) ok = k.let(rt + "dok", ok && od + dz < OD);
    }
    auto cb = k.let(rt + "cb", (t / pl.tiles) % NBc);
    auto px0 = k.let(rt + "px", (t % pl.tiles) * 16u + gl);
    // The lane's pixels px0 (m = 0) and px0 + 8 (m = 1) of the band: their place in xs.
    std::array<Val<u32>, 2> at, pr, pq;
    std::array<Val<bool>, 2> in;
    for (std::uint32_t m = 0; m < 2; ++m) {
      const std::string mt = rt + std::to_string(m);
      auto pxm = px0 + 8 * m;
      in[m] = k.let("in" + mt, pxm < band_px);
      auto pc = k.let("pc" + mt, min(pxm, band_px - 1));
      pr[m] = k.let("pr" + mt, pc / Q);
      pq[m] = k.let("pq" + mt, pc % Q);
      at[m] = k.let("pa" + mt, (pr[m] * WS + pq[m]) * 8u + tl * 2u + zoff);
    }
    Val<u32> lm_at = 0u;  // this lane's load_matrix row at tap 0
    if (feed.lm) {
      auto pc = k.let(rt + "lmp", min((t % pl.tiles) * 16u + lm_row, band_px - 1));
      lm_at = k.let(rt + "lma", ((pc / Q) * WS + pc % Q) * 8u + zoff);
    }
    auto oc = k.let(rt + "oc", g * Og + cb * 8u + tl * 2u);
    auto wat = k.let(rt + "wat", (cb * (S * 32u) + lane) * 4u);
    const auto lm_row = [&](std::uint32_t st) {
      const std::uint32_t o0 = tap_offset(2 * st), o1 = tap_offset(std::min(2 * st + 1, taps - 1));
      return lm_at + select(lm_hi, Val<u32>(o1), Val<u32>(o0));
    };
    const auto acc = tile_products(at, lm_row, wat, bias_acc(oc));
    for (std::uint32_t m = 0; m < 2; ++m) {
      auto p = k.let(rt + "p" + std::to_string(m), band * R + pr[m]);
      store_pixel(acc, m, ok && in[m] && p < P, y_img + dz * (P * Q) + oc * OPQ + p * Q + pq[m]);
    }
  });
}

}  // namespace ingot::kernels
