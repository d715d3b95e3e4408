// kernels/conv/grouped_conv_mma_planar.hpp — grouped 2-D/3-D convolution, NCDHW, 8 input channels per group,
// f16/bf16, on the sub-group matrix multiply-accumulate with the group's input band staged in shared memory as it
// lies in memory (channel planes) and transposed by load_matrix_trans (conv2d_grouped / conv3d_grouped, stage = 2).
//
//   x [B, C, (D,) H, W], w [O, 8, (kd,) kh, kw], optional bias [O] -> y [B, O, (OD,) P, Q],
//   groups = C / 8, a multiple of 8 output channels per group, stride 1, dilation 1, W a multiple of 8,
//   pad_w <= 7 and kw - 1 - pad_w <= 7.
//
// Why: the staged kernel (grouped_conv_mma_smem.hpp) interleaves the channels while staging (8 loads and the packing
// per pixel pair) and runs one m16n8k16 step per pair of taps with its own A fragment. Here the stage is a plain copy
// (asynchronous 16-byte copies: 8 pixels of one channel row each) and one A fragment serves every tap column.
// The 16-bit default for grouped 3-D, faster than the staged kernel (docs/performance.md s16); in 2-D slower than the
// staged kernel, with a third fewer instructions but latency-bound on the queue that its shuffles and matrix loads
// share (MIO throttle); the 2-D default is the pixel-stage kernel (grouped_conv_mma_pixel.hpp).
//
// Mapping. A work-group (`threads` threads; the registry's default 128) takes image b, group g, output depth
// slices od .. od + ds - 1 (ds = 1 in 2-D) and a band of R output rows (R even). It copies the input they read —
// channel ci's rows band*R - pad_h .. + R + kh - 2 of the kd + ds - 1 input slices from od - pad_d, every column, zeros
// outside the input — into xs[ci * CS + (slice * RS + row) * W + column] (RS = R + kh - 1 rows; CS padded to 16 bytes
// times an odd number modulo 128, so the 8 channel rows of a matrix lie in 8 different bank groups). A warp's unit is
// two output rows (y, y + 1) of one output slice and one block of 8 output channels, across the whole width. For input
// tile j (input columns 8j .. 8j + 7), A is 16 x 16: rows m = pixel 8j + (m % 8) of output row y + m / 8, columns k =
// channel k % 8 at vertical tap (kd, ky) number 2p + k / 8 (step p; past the last: zero weights, the last tap's rows);
// one load_matrix_trans reads it (lane l names channel l % 8's row of matrix l / 8). Per tap column kx that same A
// times B_kx,p (w[oc][ci][kd][ky][kx], oc = the block's 8 channels) accumulates acc_kx(j): the contribution of input
// column 8j + m to output column 8j + m - (kx - pad_w). So output tile jo (columns 8jo .. 8jo + 7) is acc_{pad_w}(jo) +
// bias plus, for each other kx with shift s = kx - pad_w, lane (gl, tl)'s rows read from lane ((gl + s) mod 8, tl): one
// shuffle per value, the providing lane choosing between tiles jo and jo + 1 (s > 0) or jo - 1 (s < 0); tiles outside
// the input are zeros (the padding). Per input tile and step: one load_matrix_trans and kw mma; per output tile and
// shifted column: 4 selects, 4 shuffles and 4 adds. D's lanes hold output channels 2tl (+1) at column 8jo + gl of rows
// y (+1): four scalar stores each, rows past P and columns past Q skipped — or with os (where Q % 8 == 0) four stores
// into the unit's slot of ys (its 8 channels x 2Q elements, as they lie in y); after each round of units a barrier,
// then the work-group stores the round's slots as 16-byte vectors (the scalar stores write half sectors,
// docs/performance.md s17) and, where another
// round follows, a barrier before it writes the slots again. The weights are loaded once per unit (once
// per warp where a group has 8 output channels). Every lane reaches every mma and load_matrix (units are clamped; a
// repeated unit stores nothing).
// With il > 1 a warp takes il units per round and emits their tiles interleaved (independent mma chains side by side).
// With bw > 1 a work-group takes bw consecutive bands, each staged in its own buffer: every band's copies are issued
// (one commit group per band) before the first band's products, and band i waits for its own group only, so the
// later bands' loads are in flight during the earlier bands' products. A band past the last stores nothing.
// Launch grid_1d(batch * grouped_conv_mma_planar_groups_per_batch() * threads, threads) with launch bounds `threads`.
// With early_weights ("we", the default where it fits; 8 output channels per group) the group's weights are copied
// into shared memory with band 0's rows, and each lane reads its own after band 0's barrier. (Loaded from global
// memory, ptxas moves them past that barrier, where every work-group then waits for them: docs/performance.md s40.)
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "direct_conv.hpp"
#include "grouped_conv_mma.hpp"
#include "grouped_conv_mma_smem.hpp"
#include "ingot/dsl.hpp"
#include "plane_smem.hpp"

namespace ingot::kernels {

// The weights of group g (8 output channels x 8 input channels x `taps` each, w[oc][ci][tap] with 64 taps elements per
// group: a multiple of 8) copied into the shared array ws by 16-byte asynchronous copies spread over the work-group's
// NG threads: part of the caller's commit group, so the wait that completes its band's rows completes them too (the
// planar and pixel-stage kernels' "we").
template <class T, class W>
void copy_group_weights_async(dsl::KernelBuilder& k, const dsl::Shared<T>& ws, const W& w, const dsl::Val<u32>& g,
                              std::uint32_t taps, const dsl::Val<u32>& lid, std::uint32_t NG) {
  const std::uint32_t n = 64 * taps;
  copy_range_async(k, ws, w, g * n, n, 8, lid, NG);
}
// Why a kernel holding one block of 8 output channels' weights (across `held_across`) cannot copy them into shared
// memory for spec s ("" when it can).
inline std::string grouped_early_weights_refusal(const ConvSpec& s, const char* held_across) {
  if (s.out_per_group() == 8) return "";
  return std::string(
             "copies the weights to shared memory (we = 1) only with 8 output channels per group (one block, "
             "held across the ") +
         held_across + "), not " + std::to_string(s.out_per_group()) + " (remove we)";
}
// Lane (gl, tl)'s B operands from that copy (after the wait and a barrier): output channel gl, input channels 2tl and
// 2tl + 1, i.e. 2 taps consecutive elements from (8 gl + 2 tl) taps, an even offset: `taps` 4-byte loads (for 3x3 and
// 3x3x3 the lanes' words lie 9 and 27 words apart: no bank conflict). Element e * taps + t is w[..][2tl + e][t].
template <class T>
std::vector<dsl::Val<f32>> lane_group_weights(dsl::KernelBuilder& k, const dsl::Shared<T>& ws, const dsl::Val<u32>& gl,
                                              const dsl::Val<u32>& tl, std::uint32_t taps, const std::string& tag) {
  using namespace ingot::dsl;
  auto at = k.let(tag + "wo", (gl * 8u + tl * 2u) * taps);
  std::vector<Val<f32>> out;
  out.reserve(std::size_t{2} * taps);
  for (std::uint32_t j = 0; j < taps; ++j) {
    for (const auto& v : load_vec(ws, at + 2 * j, 2)) out.push_back(cast<f32>(v));
  }
  return out;
}

// Sizes of the planar kernel for spec s, band height `rows` and ds output depth slices per work-group.
struct PlanarMmaPlan {
  GroupedMmaDims dm{};
  std::uint32_t R = 0;                        // output rows per band (even)
  std::uint32_t bands = 0;                    // bands per output slice
  std::uint32_t bw = 1;                       // bands per work-group (each in its own buffer, all copies issued first)
  std::uint32_t bblocks = 0;                  // work-groups along the bands: ceil(bands / bw)
  std::uint32_t rs = 0;                       // staged rows per slice (R + kh - 1)
  std::uint32_t ds = 1;                       // output depth slices per work-group
  std::uint32_t dblocks = 1;                  // ceil(OD / ds)
  std::uint32_t slices = 1;                   // staged slices: kd + ds - 1
  std::uint32_t cs = 0;                       // elements per staged channel (slices * rs * W, padded)
  std::uint32_t vt = 0;                       // vertical taps kd * kh
  std::uint32_t steps = 0;                    // ceil(vt / 2)
  std::uint32_t cblocks = 0;                  // blocks of 8 output channels per group
  std::uint32_t in_tiles = 0, out_tiles = 0;  // W / 8, ceil(Q / 8)
  std::uint64_t xs_elems = 0;
  std::uint32_t ys_slots = 0;  // output stage: one slot per unit of a round (0: no stage)
  std::uint32_t ys_cs = 0;     // elements per channel of a slot (2 Q, 8 modulo 32)
  std::uint64_t ys_elems = 0;
  std::uint64_t ws_elems = 0;  // the group's weights (early_weights: 64 kd kh kw)
  [[nodiscard]] std::uint64_t bytes(std::size_t elem_bytes) const {
    return (xs_elems + ys_elems + ws_elems) * elem_bytes;
  }
};

// Bands of R output rows (R even: `rows` rounded down, at least 2, at most P rounded up to even) and blocks of bw bands
// per work-group (bw clamped to [1, bands]): the planar and pixel-stage kernels' split of the P output rows.
struct GroupedBands {
  std::uint32_t R = 0, bands = 0, bw = 1, bblocks = 0;
};
inline GroupedBands grouped_even_bands(std::uint32_t P, std::uint32_t rows, std::uint32_t bw) {
  GroupedBands b;
  b.R = std::max<std::uint32_t>(2, std::min(rows / 2 * 2, (P + 1) / 2 * 2));
  b.bands = (P + b.R - 1) / b.R;
  b.bw = std::max<std::uint32_t>(1, std::min(bw, b.bands));
  b.bblocks = (b.bands + b.bw - 1) / b.bw;
  return b;
}

// ys_slots: units per round (warps x il) whose outputs go through shared memory (16-byte stores; where Q % 8 == 0,
// else none).
inline PlanarMmaPlan grouped_conv_mma_planar_geometry(const ConvSpec& s, std::uint32_t rows, std::uint32_t ds = 1,
                                                      std::uint32_t bw = 1, std::uint32_t ys_slots = 0,
                                                      bool early_weights = false) {
  PlanarMmaPlan pl;
  pl.dm = grouped_mma_dims(s);
  const GroupedMmaDims& d = pl.dm;
  const GroupedBands b = grouped_even_bands(d.P, rows, bw);
  pl.R = b.R, pl.bands = b.bands, pl.bw = b.bw, pl.bblocks = b.bblocks;
  pl.rs = pl.R + d.KH - 1;
  pl.ds = std::max<std::uint32_t>(1, std::min(ds, d.OD));
  pl.dblocks = (d.OD + pl.ds - 1) / pl.ds;
  pl.slices = d.KD + pl.ds - 1;
  const std::uint64_t raw = static_cast<std::uint64_t>(pl.slices) * pl.rs * d.W;
  std::uint64_t cs = (raw + 7) / 8 * 8;
  if ((cs / 8) % 2 == 0) cs += 8;  // 16 bytes x odd modulo 128: the 8 channel rows of a matrix in 8 bank groups
  pl.cs = static_cast<std::uint32_t>(std::min<std::uint64_t>(cs, 0xffffffffull));
  pl.vt = d.KD * d.KH;
  pl.steps = (pl.vt + 1) / 2;
  pl.cblocks = s.out_per_group() / 8;
  pl.in_tiles = d.W / 8;
  pl.out_tiles = (d.Q + 7) / 8;
  pl.xs_elems = 8 * cs * pl.bw;
  if (ys_slots > 0 && d.Q % 8 == 0) {  // 8 modulo 32: a store's 4 channel pairs in 4 different 4-word bank groups
    pl.ys_slots = ys_slots;
    pl.ys_cs = 2 * d.Q + (40 - (2 * d.Q) % 32) % 32;
    pl.ys_elems = 8ull * pl.ys_cs * ys_slots;
  }
  if (early_weights) pl.ws_elems = 64ull * pl.vt * d.KW;
  return pl;
}

// Why the planar kernel cannot run spec s with elements of elem_bytes, `rows` and ds ("" when it can).
// smem_limit: the shared memory the kernel may take (bytes; the portable 48 KB by default, more on CUDA's dynamic
// shared memory: the printer carves the arrays from it and the runtime raises the function's limit).
inline std::string grouped_conv_mma_planar_refusal(const ConvSpec& s, std::size_t elem_bytes, std::uint32_t rows,
                                                   std::uint32_t ds = 1, std::uint32_t bw = 1,
                                                   std::uint32_t ys_slots = 0, bool early_weights = false,
                                                   std::uint64_t smem_limit = kPlaneSmemBytes) {
  if (std::string why = grouped_conv_mma_refusal(s, elem_bytes); !why.empty()) return why;
  if (early_weights) {
    if (std::string why = grouped_early_weights_refusal(s, "units"); !why.empty()) return why;
  }
  const GroupedMmaDims d = grouped_mma_dims(s);
  if (d.W % 8 != 0)
    return "needs an input width that is a multiple of 8 (16-byte rows; W = " + std::to_string(d.W) + ")";
  if (d.PW > 7 || d.KW > d.PW + 8) {
    return "needs every tap column within 7 columns of its output column (pad_w <= 7 and kw - 1 - pad_w <= 7; pad_w "
           "= " +
           std::to_string(d.PW) + ", kw = " + std::to_string(d.KW) + ")";
  }
  const PlanarMmaPlan pl = grouped_conv_mma_planar_geometry(s, rows, ds, bw, ys_slots, early_weights);
  if (const std::uint64_t b = pl.bytes(elem_bytes); b > smem_limit) {
    return "stages " + (pl.bw > 1 ? std::to_string(pl.bw) + " bands x " : std::string()) + "8 channels x " +
           std::to_string(pl.slices) + " slice(s) x " + std::to_string(pl.rs) + " rows x " + std::to_string(d.W) +
           " columns" + (pl.ys_slots > 0 ? std::string(" and the outputs of a round of units") : std::string()) +
           (early_weights ? std::string(" and the group's weights") : std::string()) +
           " in shared memory: " + std::to_string(b) + " bytes, more than " + std::to_string(smem_limit) +
           " (fewer rows per band" + (pl.bw > 1 ? std::string(", bands (bw)") : "") +
           (pl.ds > 1 ? std::string(", depth slices (ds)") : std::string()) +
           (pl.ys_slots > 0 ? std::string(" or os = 0") : std::string()) +
           " would shrink it; msm allows more, in KB, on CUDA)";
  }
  return "";
}

// Throws std::invalid_argument with the reason unless the planar kernel applies with `rows` and ds.
inline PlanarMmaPlan grouped_conv_mma_planar_plan(const ConvSpec& s, std::size_t elem_bytes, std::uint32_t rows,
                                                  std::uint32_t ds = 1, std::uint32_t bw = 1,
                                                  std::uint32_t ys_slots = 0, bool early_weights = false,
                                                  std::uint64_t smem_limit = kPlaneSmemBytes) {
  s.validate();
  if (rows < 2 || rows > 64 || rows % 2 != 0) {
    throw std::invalid_argument(s.name + ": rows = " + std::to_string(rows) +
                                " must be even and in [2, 64] for the planar tensor-core kernel (stage = 2: units of "
                                "two output rows)");
  }
  check_grouped_depth_slices(s, ds);
  if (bw < 1 || bw > 8) {
    throw std::invalid_argument(s.name + ": bw (bands per work-group) = " + std::to_string(bw) + " must be in [1, 8]");
  }
  if (const std::string why =
          grouped_conv_mma_planar_refusal(s, elem_bytes, rows, ds, bw, ys_slots, early_weights, smem_limit);
      !why.empty()) {
    throw std::invalid_argument(s.name + ": the planar tensor-core kernel (stage = 2) " + why + "; use stage = 1 or 0");
  }
  return grouped_conv_mma_planar_geometry(s, rows, ds, bw, ys_slots, early_weights);
}

// Work-groups per image: groups x blocks of ds output depth slices x blocks of bw bands.
inline std::uint64_t grouped_conv_mma_planar_groups_per_batch(const ConvSpec& s, std::uint32_t rows,
                                                              std::uint32_t ds = 1, std::uint32_t bw = 1) {
  const PlanarMmaPlan pl = grouped_conv_mma_planar_geometry(s, rows, ds, bw);
  return static_cast<std::uint64_t>(s.groups) * pl.dblocks * pl.bblocks;
}

// Throws std::invalid_argument unless `batch` images' threads fit the 32-bit thread indices.
inline void check_grouped_conv_mma_planar_batch(const ConvSpec& s, std::uint32_t rows, std::uint64_t batch,
                                                std::uint32_t threads, std::uint32_t ds = 1, std::uint32_t bw = 1) {
  check_staged_mma_threads(s.name, threads);
  check_grouped_batch_threads(s, grouped_conv_mma_planar_groups_per_batch(s, rows, ds, bw) * threads, batch, "planar");
}

// Where a band's planar stage lies: channel ci's staged slice sl, row sr, column c at
// at + ci * cs + (sl * rs + sr) * W + c (W = the input width, a multiple of 8). A copy takes `slices` staged slices
// (from slice 0 on).
struct PlanarStage {
  std::uint32_t slices = 1, rs = 0, cs = 0, at = 0;
};

// Issues one band's asynchronous copies into its planar stage: (channel ci, slice sl, row sr, tile j) of 8 elements
// (sl < st.slices) from input row row0 + sr of slice od + sl - pad_d of the group at x_group,
// zeros outside the input (and where live is false), spread over the work-group's `threads` threads (lid: local id);
// tag prefixes the names. The caller commits.
// Spread: copy c = lid + r * threads in round r, c decomposed into (ci, sl, sr, j) — four divisions and the bounds
// per copy.
template <class T, class X>
void copy_planar_band_async(dsl::KernelBuilder& k, const dsl::Shared<T>& xs, const X& x, const GroupedMmaDims& dm,
                            const PlanarStage& st, const dsl::Val<i32>& row0, const dsl::Val<u32>& od,
                            const dsl::Val<u32>& x_group, const dsl::Val<bool>& live, const dsl::Val<u32>& lid,
                            std::uint32_t threads, const std::string& tag) {
  using namespace ingot::dsl;
  const std::uint32_t NTi = dm.W / 8, plane = dm.D * dm.H * dm.W, Wd = dm.W, H = dm.H;
  const std::uint32_t copies = 8 * st.slices * st.rs * NTi;
  // One copy of staged slice sl, row sr, column offset col (8 j) of the channel whose source and
  // destination bases are src_ci (x_group + ci * plane) and dst_ci (ci * cs).
  const auto row_copy = [&](const Val<u32>& src_ci, const Val<u32>& dst_ci, const Val<u32>& col, const Val<u32>& sl,
                            const Val<u32>& sr, const std::string& rt) {
    auto ih = k.let("ch" + rt, row0 + cast<i32>(sr));
    Val<bool> ok = live && cast<u32>(ih) < H;  // negative wraps
    Val<u32> slice = 0u;
    if (dm.depth_varies()) {
      auto id = k.let("cd" + rt, cast<i32>(od + sl) - static_cast<std::int32_t>(dm.PD));
      auto dok = k.let("cdok" + rt, cast<u32>(id) < dm.D);
      ok = ok && dok;
      slice = select(dok, cast<u32>(id), 0u) * (H * Wd);
    }
    auto cok = k.let("cok" + rt, ok);
    auto src = k.let("csrc" + rt, src_ci + slice + select(cok, cast<u32>(ih), 0u) * Wd + col);
    copy_async(xs, dst_ci + (sl * st.rs + sr) * Wd + col + st.at, x, src, 8, cok);
  };
  for_group_rounds(k, lid, threads, copies, tag + "cp", true, [&](const Val<u32>& c, std::uint32_t r) {
    const std::string rt = tag + std::to_string(r);
    auto j = k.let("cj" + rt, c % NTi);
    auto sr = k.let("cr" + rt, (c / NTi) % st.rs);
    auto sl = k.let("cs" + rt, (c / (NTi * st.rs)) % st.slices);
    auto ci = k.let("cc" + rt, c / (NTi * st.rs * st.slices));
    row_copy(x_group + ci * plane, ci * st.cs, j * 8u, sl, sr, rt);
  });
}

// The planar kernel's options (the registry's keys): output rows per band, threads per work-group, output depth slices
// (ds) and bands (bw) per work-group, units interleaved per warp (il), the output stage (os), the weights' copy
// (early_weights, "we") and the shared memory it may take (bytes).
struct PlanarMmaOptions {
  std::uint32_t rows = 2;
  std::uint32_t threads = kStagedMmaGroup;
  std::uint32_t ds = 1, bw = 1, il = 1;
  bool os = false, early_weights = false;
  std::uint64_t smem_limit = kPlaneSmemBytes;
};

template <class T>
void grouped_conv_mma_planar(dsl::KernelBuilder& k, const ConvSpec& s, const PlanarMmaOptions& o) {
  const std::uint32_t rows = o.rows, threads = o.threads, ds = o.ds, bw = o.bw, il = o.il;
  const bool os = o.os, early_weights = o.early_weights;
  const std::uint64_t smem_limit = o.smem_limit;
  using namespace ingot::dsl;
  static_assert(sizeof(T) == 2, "the planar tensor-core kernel multiplies f16 or bf16");
  check_staged_mma_threads(s.name, threads);
  if (il < 1 || il > 4) {
    throw std::invalid_argument(s.name + ": il (units interleaved per warp) = " + std::to_string(il) +
                                " must be in [1, 4]");
  }
  const PlanarMmaPlan pl =
      grouped_conv_mma_planar_plan(s, sizeof(T), rows, ds, bw, os ? threads / 32 * il : 0, early_weights, smem_limit);
  const GroupedMmaDims& dm = pl.dm;
  const auto i32c = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  const std::uint32_t O = s.out_channels, Og = s.out_per_group(), G = s.groups, NG = threads;
  const std::uint32_t D = dm.D, H = dm.H, Wd = dm.W, OD = dm.OD, P = dm.P, Q = dm.Q;
  const std::uint32_t KH = dm.KH, KW = dm.KW, PH = dm.PH, PW = dm.PW;
  const std::uint32_t R = pl.R, RS = pl.rs, CS = pl.cs, S = pl.steps, VT = pl.vt, NBc = pl.cblocks;
  const std::uint32_t DS = pl.ds, DB = pl.dblocks, SL = pl.slices, NTi = pl.in_tiles, NTo = pl.out_tiles;
  const std::uint32_t BW = pl.bw, BB = pl.bblocks, XB = 8 * CS;  // bands per work-group, blocks, buffer elements
  const std::uint32_t IL = il, YCS = pl.ys_cs, YSLOT = 8 * pl.ys_cs;
  const std::uint32_t plane = D * H * Wd, per_batch = G * DB * BB, OPQ = OD * P * Q;
  const std::uint32_t RP = R / 2, units = DS * NBc * RP, warps = NG / 32;

  k.launch_bounds(NG);
  const auto prm = declare_dense_conv_params<T>(k, s);
  const auto& batch = prm.io.batch;
  const auto& x = prm.io.x;
  const auto& w = prm.w;
  const auto& bias = prm.io.bias;
  const auto& y = prm.io.y;
  auto xs = k.shared<T>("xs", static_cast<std::uint32_t>(pl.xs_elems));
  // With os (and Q % 8 == 0), a round's units write their outputs to slots of ys (slot: the unit's 8 channels x its 2
  // rows, 2Q contiguous elements per channel, as in y); after a barrier the work-group stores them as 16-byte vectors.
  std::optional<Shared<T>> ys;
  if (pl.ys_slots > 0) ys = k.shared<T>("ys", static_cast<std::uint32_t>(pl.ys_elems));
  std::optional<Shared<T>> ws;  // early_weights: the group's weights, copied with band 0's rows
  if (early_weights) ws = k.shared<T>("ws", static_cast<std::uint32_t>(pl.ws_elems));

  // Work-group: block of BW bands fastest, then the block of DS output depth slices from od, then b * G + g.
  auto wg = k.let("wg", k.group_id(0));
  auto live = k.let("live", wg < batch * per_batch);
  auto task = k.let("task", select(live, wg, 0u));  // a group past the batch takes group 0's operands
  auto band0 = k.let("band0", (task % BB) * BW);
  auto od = k.let("od", ((task / BB) % DB) * DS);
  auto bg = k.let("bg", task / (BB * DB));
  auto g = k.let("g", bg % G);
  auto lid = k.let("lid", k.local_id(0));
  auto x_group = k.let("x_group", bg * (8u * plane));

  // Band i's stage (buffer i): every band's copies are issued first, one commit group each (the weights with the
  // first).
  for (std::uint32_t bi = 0; bi < BW; ++bi) {
    const std::string bt = BW > 1 ? "b" + std::to_string(bi) : "";
    auto row0 = k.let(bt + "row0", cast<i32>((band0 + bi) * R) - i32c(PH));  // input row of staged row 0
    copy_planar_band_async(k, xs, x, dm, {SL, RS, CS, bi * XB}, row0, od, x_group, live, lid, NG, bt);
    if (bi == 0 && ws) copy_group_weights_async(k, *ws, w, g, VT * KW, lid, NG);
    async_commit(k);
  }

  auto warp = k.let("warp", lid / 32u);
  auto lane = k.let("lane", lid % 32u);
  auto gl = k.let("gl", lane / 4u);
  auto tl = k.let("tl", lane % 4u);
  // load_matrix_trans rows: lane l names channel l % 8 of matrix l / 8 = (row half (l / 8) % 2, tap slot l / 16).
  auto lm_lane = k.let("lm_lane", (lane % 8u) * CS + ((lane / 8u) % 2u) * Wd);
  auto lm_hi = k.let("lm_hi", lane >= 16u);
  const auto vtap_offset = [&](std::uint32_t v) { return ((v / KH) * RS + v % KH) * Wd; };  // (kd, ky) = v
  // Per shifted tap column: the lane whose rows this lane adds, and whether this lane provides the other tile's.
  struct Shift {
    std::int32_t s = 0;
    Val<u32> src;
    Val<bool> other;
  };
  std::vector<Shift> shifts(KW);
  for (std::uint32_t kx = 0; kx < KW; ++kx) {
    const std::int32_t sh = static_cast<std::int32_t>(kx) - static_cast<std::int32_t>(PW);
    shifts[kx].s = sh;
    if (sh == 0) continue;
    const std::string nm = "sh" + std::to_string(kx);
    shifts[kx].src = k.let(nm + "_src", (lane + static_cast<std::uint32_t>(4 * ((sh + 8) % 8))) % 32u);
    shifts[kx].other = sh > 0 ? k.let(nm + "_o", gl < static_cast<std::uint32_t>(sh))
                              : k.let(nm + "_o", gl >= static_cast<std::uint32_t>(8 + sh));
  }
  // B fragments of block cb: [kx][step] = w[oc][ci][v][kx], oc = g*Og + 8cb + gl, ci = 2tl + i%2, v = 2p + i/2.
  const auto load_b = [&](const Val<u32>& cb, const std::string& tag) {
    std::vector<std::vector<std::array<Val<f32>, 4>>> b(KW, std::vector<std::array<Val<f32>, 4>>(S));
    if (ws) {  // from the shared copy, after band 0's wait and barrier
      const auto v = lane_group_weights(k, *ws, gl, tl, VT * KW, tag);
      for (std::uint32_t kx = 0; kx < KW; ++kx) {
        for (std::uint32_t p = 0; p < S; ++p) {
          for (std::uint32_t i = 0; i < 4; ++i) {
            const std::uint32_t vv = 2 * p + i / 2;
            b[kx][p][i] = vv < VT ? v[(i % 2) * VT * KW + vv * KW + kx] : Val<f32>(0.0f);
          }
        }
      }
      return b;
    }
    auto wrow = k.let(tag + "wr", ((g * Og + cb * 8u + gl) * 8u + tl * 2u) * (VT * KW));
    for (std::uint32_t kx = 0; kx < KW; ++kx) {
      for (std::uint32_t p = 0; p < S; ++p) {
        for (std::uint32_t i = 0; i < 4; ++i) {
          const std::uint32_t v = 2 * p + i / 2;
          b[kx][p][i] = v < VT ? cast<f32>(load(w, wrow + ((i % 2) * VT * KW + v * KW + kx))) : Val<f32>(0.0f);
        }
      }
    }
    return b;
  };
  std::optional<std::vector<std::vector<std::array<Val<f32>, 4>>>> b_held;
  if (NBc == 1 && !ws) b_held = load_b(Val<u32>(0u), "");

  auto y_img = k.let("yb", ((bg / G) * O) * OPQ + od * (P * Q));
  // One unit's state: its stores' base and conditions, its weights and bias, its load_matrix row bases (one per
  // difference between a step's two slots) and its input tiles' accumulators per tap column.
  struct UnitState {
    std::string rt;
    std::array<Val<bool>, 2> row_ok;
    Val<u32> yu, lb, ysu;               // ysu: this lane's place in the unit's output slot (os)
    std::optional<Val<bool>> ys_guard;  // whether the unit is not a repeat (os, partial rounds)
    std::vector<std::vector<std::array<Val<f32>, 4>>> b;
    std::array<Val<f32>, 4> bias_c;
    std::map<std::uint32_t, Val<u32>> bases;
    std::map<std::int64_t, std::vector<std::array<Val<f32>, 4>>> acc;
  };
  const auto setup_unit = [&](const Val<u32>& uu, Val<bool> ok, const std::string& rt, std::uint32_t bi,
                              std::uint32_t slot, const std::optional<Val<bool>>& not_repeat) {
    UnitState u;
    u.rt = rt;
    if (ys) {
      u.ysu = k.let(rt + "ys", (warp + slot * warps) * YSLOT + tl * (2u * YCS) + gl);
      u.ys_guard = not_repeat;
    }
    Val<u32> dz = 0u, rp = 0u, cb = 0u;
    if (DS > 1) {
      dz = k.let(rt + "dz", uu / (NBc * RP));
      if (OD % DS != 0) ok = k.let(rt + "dok", ok && od + dz < OD);
    }
    if (RP > 1) rp = k.let(rt + "rp", uu % RP);
    if (NBc > 1) cb = k.let(rt + "cb", (uu / RP) % NBc);
    auto p0 = k.let(rt + "p", (band0 + bi) * R + rp * 2u);  // output row of the unit's first row
    auto oc = k.let(rt + "oc", g * Og + cb * 8u + tl * 2u);
    u.yu = k.let(rt + "y", y_img + dz * (P * Q) + oc * OPQ + p0 * Q + gl);
    u.lb = k.let(rt + "lb", lm_lane + dz * (RS * Wd) + rp * (2u * Wd) + bi * XB);
    u.row_ok = {ok, ok};
    if (P % R != 0 || P % 2 != 0 || pl.bands % BW != 0) {  // rows past P (or a band past the last)
      for (std::uint32_t h = 0; h < 2; ++h) u.row_ok[h] = k.let(rt + "rok" + std::to_string(h), ok && p0 + h < P);
    }
    u.b = b_held ? *b_held : load_b(cb, rt);
    u.bias_c = {Val<f32>(0.0f), Val<f32>(0.0f), Val<f32>(0.0f), Val<f32>(0.0f)};
    if (s.bias) {
      auto b0 = k.let(rt + "b0", cast<f32>(load(bias, oc)));
      auto b1 = k.let(rt + "b1", cast<f32>(load(bias, oc + 1u)));
      u.bias_c = {b0, b1, b0, b1};
    }
    return u;
  };
  // Step p's row of this lane: its slot's tap offset from the unit's base.
  const auto step_row = [&](UnitState& u, std::uint32_t p) {
    const std::uint32_t o0 = vtap_offset(2 * p), o1 = vtap_offset(std::min(2 * p + 1, VT - 1));
    auto it = u.bases.find(o1 - o0);
    if (it == u.bases.end()) {
      it = u.bases
               .emplace(o1 - o0, k.let(u.rt + "lb" + std::to_string(u.bases.size()),
                                       u.lb + select(lm_hi, Val<u32>(o1 - o0), Val<u32>(0u))))
               .first;
    }
    return it->second + o0;
  };
  // Input tile j's accumulators per tap column (the unshifted one starts from the bias); tiles outside the input are
  // zeros.
  const std::array<Val<f32>, 4> zero{Val<f32>(0.0f), Val<f32>(0.0f), Val<f32>(0.0f), Val<f32>(0.0f)};
  const auto tile_acc = [&](UnitState& u, std::int64_t j, std::uint32_t kx) -> std::array<Val<f32>, 4> {
    if (j < 0 || j >= static_cast<std::int64_t>(NTi)) return shifts[kx].s == 0 ? u.bias_c : zero;
    auto it = u.acc.find(j);
    if (it == u.acc.end()) {
      std::vector<std::array<Val<f32>, 4>> a(KW);
      for (std::uint32_t c = 0; c < KW; ++c) a[c] = shifts[c].s == 0 ? u.bias_c : zero;
      for (std::uint32_t p = 0; p < S; ++p) {
        std::array<Val<f32>, 8> av;
        const auto m = load_matrix_trans(xs, step_row(u, p) + static_cast<std::uint32_t>(8 * j));
        for (std::uint32_t i = 0; i < 8; ++i) av[i] = cast<f32>(m[i]);
        for (std::uint32_t c = 0; c < KW; ++c) a[c] = mma_m16n8k16<T>(k, av, u.b[c][p], a[c]);
      }
      it = u.acc.emplace(j, std::move(a)).first;
    }
    return it->second[kx];
  };
  // Output tile jo: the unshifted column's accumulators (or the bias) plus each shifted column's, then the stores.
  const auto output_tile = [&](UnitState& u, std::uint32_t jo) {
    std::array<Val<f32>, 4> out = u.bias_c;
    for (std::uint32_t kx = 0; kx < KW; ++kx) {
      if (shifts[kx].s == 0) out = tile_acc(u, jo, kx);
    }
    for (std::uint32_t kx = 0; kx < KW; ++kx) {
      const Shift& sh = shifts[kx];
      if (sh.s == 0) continue;
      const auto mine = tile_acc(u, jo, kx);
      const auto other = tile_acc(u, static_cast<std::int64_t>(jo) + (sh.s > 0 ? 1 : -1), kx);
      for (std::uint32_t i = 0; i < 4; ++i) out[i] = out[i] + shuffle(select(sh.other, other[i], mine[i]), sh.src, 32);
    }
    // Value 2h + e is output channel oc + e at column 8jo + gl of row p0 + h.
    Val<bool> col_ok = true;
    if (8 * jo + 8 > Q) col_ok = k.let(u.rt + "cok" + std::to_string(jo), gl < Q - 8 * jo);
    for (std::uint32_t h = 0; h < 2; ++h) {
      for (std::uint32_t e = 0; e < 2; ++e) {
        if (ys) {  // into the unit's slot (Q % 8 == 0: every column lies in the output; repeats skipped)
          const auto st = [&] { store(*ys, u.ysu + (e * YCS + h * Q + 8 * jo), cast<T>(out[2 * h + e])); };
          if (u.ys_guard) {
            if_(*u.ys_guard, st);
          } else {
            st();
          }
          continue;
        }
        const Val<bool> st_ok = 8 * jo + 8 > Q ? u.row_ok[h] && col_ok : u.row_ok[h];
        if_(st_ok, [&] { store(y, u.yu + (e * OPQ + h * Q + 8 * jo), cast<T>(out[2 * h + e])); });
      }
    }
    u.acc.erase(static_cast<std::int64_t>(jo) - 1);  // no output tile after jo reads tile jo - 1
  };
  // Round r's slots to y: slot (i, warp w) holds unit w + (r * IL + i) * warps; channel ch of it is its 2 rows, 2Q
  // contiguous elements of y from row p0; 16-byte chunks spread over the work-group, chunks of rows past P, slices past
  // OD, units past the last or a band past the last skipped.
  const auto round_stores = [&](std::uint32_t r, std::uint32_t n_il, std::uint32_t bi, const std::string& bt) {
    const std::uint32_t per = 2 * Q / 8, chunks = n_il * warps * 8 * per;
    const std::string tag = bt + "o" + std::to_string(r) + "_";
    for_group_rounds(k, lid, NG, chunks, tag, true, [&](const Val<u32>& c, std::uint32_t q) {
      const std::string rt = tag + std::to_string(q);
      auto slot = k.let("os" + rt, c / (8 * per));
      auto ch = k.let("oh" + rt, (c / per) % 8u);
      auto at = k.let("oa" + rt, (c % per) * 8u);
      auto un = k.let("on" + rt, slot % warps + (r * IL + slot / warps) * warps);
      Val<u32> uu = un, dz = 0u, rp = 0u, cb = 0u;
      Val<bool> ok = live;
      if ((r * IL + n_il) * warps > units) {
        uu = k.let("onc" + rt, min(un, units - 1));
        ok = ok && un < units;
      }
      if (DS > 1) {
        dz = k.let("oz" + rt, uu / (NBc * RP));
        if (OD % DS != 0) ok = ok && od + dz < OD;
      }
      if (RP > 1) rp = k.let("or" + rt, uu % RP);
      if (NBc > 1) cb = k.let("ob" + rt, (uu / RP) % NBc);
      auto p0 = k.let("op" + rt, (band0 + bi) * R + rp * 2u);
      if (P % R != 0 || P % 2 != 0 || pl.bands % BW != 0) ok = ok && p0 + at / Q < P;
      if_(ok, [&] {  // (a repeated unit's slot was not written: read only what is stored)
        const auto v = load_vec(*ys, slot * YSLOT + ch * YCS + at, 8);
        store_vec(y, y_img + dz * (P * Q) + (g * Og + cb * 8u + ch) * OPQ + p0 * Q + at, v);
      });
    });
  };
  for (std::uint32_t bi = 0; bi < BW; ++bi) {
    const std::string bt = BW > 1 ? "b" + std::to_string(bi) : "";
    // band bi's copies (this thread's), then everyone's
    async_wait(k, BW - 1 - bi);
    k.barrier();
    if (bi == 0 && ws) b_held = load_b(Val<u32>(0u), "");  // (band 0's copies brought the weights)
    // Rounds of IL units per warp: unit warp + (r * IL + i) * warps (clamped: every lane reaches every mma; a repeated
    // unit stores nothing), the IL units' tiles emitted interleaved.
    for (std::uint32_t r = 0; r * warps * IL < units; ++r) {
      std::vector<UnitState> us;
      for (std::uint32_t i = 0; i < IL; ++i) {
        const std::uint32_t n = r * IL + i;
        if (n * warps >= units) break;
        const std::string rt = bt + "u" + std::to_string(n) + "_";
        auto raw = k.let(rt + "i", warp + n * warps);
        Val<u32> uu = raw;
        Val<bool> ok = live;
        std::optional<Val<bool>> not_repeat;
        if ((n + 1) * warps > units) {
          uu = k.let(rt + "c", min(raw, units - 1));
          ok = k.let(rt + "live", live && raw < units);
          not_repeat = k.let(rt + "nr", raw < units);
        }
        us.push_back(setup_unit(uu, ok, rt, bi, i, not_repeat));
      }
      for (std::uint32_t jo = 0; jo < NTo; ++jo) {
        for (auto& u : us) {  // the input tiles output tile jo reads, every unit's before any unit's outputs
          for (std::uint32_t kx = 0; kx < KW; ++kx) {
            const std::int32_t sh = shifts[kx].s;
            (void)tile_acc(u, static_cast<std::int64_t>(jo) + (sh > 0 ? 1 : sh < 0 ? -1 : 0), kx);
          }
        }
        for (auto& u : us) output_tile(u, jo);
      }
      if (ys) {
        k.barrier();  // the round's slots are written
        round_stores(r, static_cast<std::uint32_t>(us.size()), bi, bt);
        if ((r + 1) * warps * IL < units) k.barrier();  // read before the next round writes them
      }
    }
  }
}

}  // namespace ingot::kernels
