// kernels/conv/depthwise_conv2d_nhwc_mma.hpp — depthwise 2-D convolution, NHWC, f16/bf16, on the sub-group matrix
// multiply-accumulate (tensor cores on CUDA) with row-pair tiles (depthwise_conv2d_nhwc with mma = 1; the 16-bit
// default for windows of 5 or more rows, with bands).
//
//   x [B, H, W, C], w [C, kh, kw], optional bias [C] -> y [B, P, Q, C] (as depthwise_conv2d_nhwc.hpp).
//
// Why: a depthwise product needs one channel per matrix product (the weights differ per channel), and NHWC stores the
// channels innermost, so the transposed matrix loads would put channels along M or N. This kernel transposes: a
// work-group takes one image b, one band of `rows` output rows and one block of CB (8 or 16) channels, and
// 1. stages the band's input rows (the rows + kh - 1 it reads, one more where that is odd: load_matrix reads rows in
//    pairs) as CB channel planes in shared memory: each thread loads 8 channels of one pixel (16 bytes; a pixel's 16
//    channels are one 32-byte sector) and stores them to 8 planes; the zero border (padding, rows or columns outside
//    the input) is written by the same pass, so every element any load_matrix reads is written;
// 2. runs the NCHW kernel's row-pair tiles on each plane (depthwise_conv2d_nchw_mma.hpp, row_pair_products: 2 output
//    rows x 64 columns per mma, each layout row loaded once by load_matrix), a warp taking two channels of one
//    64-column strip, so that D's values of both channels at a pixel leave as one 4-byte store;
// 3. stores D to an output stage of the band in NHWC order (rows x Q pixels x CB channels, 16-byte chunks of 8
//    channels permuted within each 128 bytes: chunk k at k ^ ((k / 8) % 8), so a warp's 4-byte stores spread over 8
//    banks (4-way conflicts, 16-way without) and 8 lanes' 16-byte reads of consecutive chunks over all 32), then the
//    stage leaves as 16-byte vectors: whole 32-byte sectors where CB = 16.
// Planes: channel ch of the block at plane 2 (ch % 8) + ch / 8 (CB = 16; ch where CB = 8), plane stride ps = 32 mod
// 64 elements, so the fill's two 8-channel halves of 16 pixels store to disjoint banks.
// With one band per work-group it is no faster than the FMA stream kernel (docs/performance.md s18): per 128 outputs
// the memory instructions cost about as many shared-memory and L1 cycles as the FMAs did (the fill's scalar stores,
// D's conflicted stores, global accesses of 32 bytes per pixel). What makes it the default for windows of 5 or more
// rows is the ring of bands below (s21), which copies only each band's new rows, and the conflict-free output stage.
// lq: the row loads in A's order (the default).
// Bands (mb > 1): a work-group walks mb bands in a run-time loop; the planes hold a ring of rr layout rows; the first
// band is filled as above, each later band's 2 pb new rows are copied asynchronously (NHWC, as they lie) into a stage
// while the band before multiplies, then transposed into the ring (shared-to-shared, 4-byte channel pairs); the
// block's weights are read from shared memory each band, as packed tap pairs (mwp 1, the ring default's: two 4-byte
// loads per tap row) or the taps (four 2-byte loads and four selects per tap row), or held in each warp's registers
// across the loop (mwr 1, the ring default's where each warp has one task, s33). msm: the shared memory allowed (KB;
// CUDA's dynamic shared memory above 48). The default for 16-bit windows of 5 or more rows (depthwise_conv2d_nhwc.cpp)
// is mr 4 with every band of the image, the pairs, the rotated stage and mwr (s30, s32, s33).
//
// Contract (the library's rules): launch depthwise_nhwc_mma_groups(spec, layout, B) work-groups of layout.G threads
// (launch bounds declare it); batch is a run-time u32 scalar, every other size a specialisation constant; a
// work-group past the batch reads image 0 and stores nothing; rows past P and columns past Q are not stored; f32
// accumulation of the bf16/f16 products (rounded once to T). std::invalid_argument (depthwise_nhwc_mma_refusal) for
// a spec it does not take: not 16-bit, stride or dilation other than 1, a window wider than 8 columns, C not a
// multiple of CB, odd rows, shared memory over the allowance (smem_bytes, msm), mo with bands.
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

#include "depthwise_conv2d_nchw_mma.hpp"
#include "direct_conv.hpp"
#include "ingot/dsl.hpp"
#include "plane_smem.hpp"

namespace ingot::kernels {

// The kernel's choices (depthwise_conv2d_nhwc's spec parameters mr, mc, mw, il).
struct DepthwiseNhwcMma {
  std::uint32_t rows = 8;       // output rows per work-group (even)
  std::uint32_t channels = 16;  // channels per work-group (8 or 16)
  std::uint32_t warps = 8;      // warps per work-group (at most the tasks: channel pairs x 64-column strips)
  std::uint32_t il = 2;         // row pairs whose mma chains run side by side (at most rows / 2)
  RowPairLoads loads = RowPairLoads::pairs_in_a_order;  // how row_pair_products loads the layout rows
  // Bands per work-group (1: one band, filled from global memory by loads and shared stores). More: the work-group
  // walks them in a run-time loop, the planes a ring of rows: each band after the first copies its new rows
  // asynchronously (as they lie, NHWC) into a stage while the band before multiplies, then transposes them into the
  // ring (clamped to the image's bands).
  std::uint32_t bands = 1;
  std::uint64_t smem_bytes = kPlaneSmemBytes;  // the shared memory the kernel may take (CUDA: dynamic above 48 KB)
  // With bands: the block's weights in shared memory as packed tap pairs (mma_band_weights_from_pairs: per band and
  // channel, two 4-byte loads per tap row), else as the taps (four 2-byte loads and four selects per tap row). The ring
  // default's (s30). (The pairs take 2.4 KB more: without the planes' unread row (odd kh, s29) the 16-bit 7x7 default's
  // OpenCL print with its legalised exchanges still fits the 48 KB of NVIDIA's OpenCL with them.)
  bool weight_pairs = false;
  // The output stage's four 4-byte words of each 16-byte chunk rotated by the chunk's pixel p, word w of channel pair
  // cp % 4 at (cp % 4 + (p / 4 + p / 16)) % 4, and the stage read out as words: with the chunks' XOR permutation D's
  // 4-byte stores and the read-out's word loads are conflict-free for 56-pixel rows (bank model: 64 + 56 wavefronts
  // per band of 4 rows x 56 pixels x 16 channels against 256 + 56; at most 2-way for other widths), at the cost of
  // four loads in place of one 16-byte load per chunk read out. With the stage's rows 64 pixels apart (qs) the rotation
  // is computed once per lane, which is what makes it pay (s32); the ring default's (depthwise_conv2d_nhwc.cpp).
  bool rotated_stage = false;
  // With bands: each warp's B fragments (its two channels' tap rows) loaded once before the band loop and held in
  // registers (28 for 7 tap rows), not read from shared memory every band: the weights are a quarter of a band's
  // shared-memory wavefronts (s32). Needs one task per warp. 3 work-groups of 80 registers per SM (with 4 it spills;
  // s33); the ring default's where it applies.
  bool weights_in_registers = false;
};

// The geometry of a spec and options (trace time).
struct NhwcMmaLayout {
  std::uint32_t s = 0;      // columns of A left of the window's first (the shift making layout column 0 aligned)
  std::uint32_t off = 0;    // layout column of input column 0 (= PW + s)
  std::uint32_t tw = 0;     // 8-column groups of an output row
  std::uint32_t ns = 0;     // 64-column strips
  std::uint32_t pb = 0;     // row pairs per work-group
  std::uint32_t nrl = 0;    // layout rows per plane (the 2 pb + kh - 1 a band reads, rounded up to even)
  std::uint32_t ws = 0;     // layout row stride (elements)
  std::uint32_t ps = 0;     // plane stride (elements)
  std::uint32_t rr = 0;     // nbw > 1: layout rows of a plane's ring (at least nrl), else nrl
  std::uint32_t CB = 0;     // channels per work-group
  std::uint32_t NB = 0;     // bands of output rows
  std::uint32_t nbw = 1;    // bands per work-group
  std::uint32_t NR = 0;     // runs of nbw bands (work-groups per image and channel block)
  std::uint32_t CBn = 0;    // channel blocks
  std::uint32_t tasks = 0;  // channel pairs x strips
  std::uint32_t warps = 0;  // warps per work-group
  std::uint64_t xs = 0;     // staged planes (elements)
  std::uint32_t qs = 0;     // output stage row pitch (pixels: the strips' ns * 64 columns, or Q where that is over
                            // the allowance)
  std::uint64_t ys = 0;     // output stage (elements, whole groups of 8 16-byte chunks)
  std::uint64_t st = 0;     // nbw > 1: the NHWC stage of a band's 2 pb new rows (elements)
  std::uint64_t bytes = 0;  // shared memory
  [[nodiscard]] std::uint32_t G() const { return 32 * warps; }
};

// The layout, whether the kernel applies or not (see the refusal).
inline NhwcMmaLayout depthwise_nhwc_mma_geometry(const ConvSpec& s, std::size_t elem_bytes, const DepthwiseNhwcMma& o) {
  const auto P = static_cast<std::uint32_t>(s.out_len(0)), Q = static_cast<std::uint32_t>(s.out_len(1));
  const std::int64_t PW = s.pad[1];
  NhwcMmaLayout L;
  // the shift in [0, 9 - kw] whose PW + shift has the most trailing zero bits (layout column 0 = A's column 0)
  const auto zeros = [](std::int64_t v) { return v == 0 ? 64 : std::countr_zero(static_cast<std::uint64_t>(v)); };
  for (std::int64_t sh = 1; sh <= 9 - static_cast<std::int64_t>(s.ksize[1]); ++sh) {
    if (zeros(PW + sh) > zeros(PW + L.s)) L.s = static_cast<std::uint32_t>(sh);
  }
  L.off = static_cast<std::uint32_t>(PW) + L.s;
  L.tw = (Q + 7) / 8;
  L.ns = (Q + 63) / 64;
  L.pb = std::max<std::uint32_t>(o.rows / 2, 1);
  // (A band reads layout rows 0 .. 2 pb + kh - 2; row_pair_products loads them in pairs (R, R + 1), R even: for odd kh
  // no row past those, so the planes hold no row that is never read, s29.)
  L.nrl = 2 * L.pb + s.ksize[0] - s.ksize[0] % 2;
  const std::uint64_t width = std::max<std::uint64_t>(std::uint64_t{L.off} + s.in_size[1], 8ull * (L.tw - 1) + 16);
  L.ws = static_cast<std::uint32_t>((width + 7) / 8 * 8);
  L.CB = o.channels;
  L.NB = (P + 2 * L.pb - 1) / (2 * L.pb);
  L.nbw = std::clamp<std::uint32_t>(o.bands, 1, std::max<std::uint32_t>(L.NB, 1));
  L.NR = (L.NB + L.nbw - 1) / L.nbw;
  L.tasks = L.CB / 2 * L.ns;
  L.warps = std::clamp<std::uint32_t>(std::min(o.warps, L.tasks), 1, 32);
  // The stage's rows are qs = ns * 64 pixels apart (the strips' columns, Q rounded up to 64: a row is whole groups of
  // 8 chunks, so the chunks' permutation and the rotated words do not depend on the row, and every lane of a strip
  // stores without a bounds check), or Q pixels apart where that does not fit (each of D's stores then computes its
  // permuted address and tests its row and column: ~14 instructions each, a quarter of the band's). (Whole groups of 8
  // chunks either way: the permutation moves a chunk within its group.)
  // nbw > 1: one stage of a band's 2 pb new rows; the block's weights
  L.st = L.nbw > 1 ? std::uint64_t{2} * L.pb * L.ws * L.CB : 0;
  const std::uint64_t weights = L.nbw == 1       ? 0
                                : o.weight_pairs ? mma_band_pair_elements(L.CB, s.ksize[0], s.ksize[1])
                                                 : std::uint64_t{L.CB} * s.ksize[0] * s.ksize[1];
  // The planes: nrl rows, or with nbw > 1 a ring of rr rows (a power of two where that fits the allowance: the ring
  // position is then a mask)
  const auto layout_for = [&](std::uint32_t rows, std::uint32_t qs) {
    L.rr = rows;
    L.qs = qs;
    L.ys = (std::uint64_t{2} * L.pb * qs * L.CB + 63) / 64 * 64;
    std::uint64_t ps = std::uint64_t{rows} * L.ws;
    while (ps % 64 != 32) ps += 8;
    L.ps = static_cast<std::uint32_t>(ps);
    L.xs = std::uint64_t{L.CB} * L.ps;
    L.bytes = (L.xs + L.ys + L.st + weights) * elem_bytes;
  };
  // the first that fits of: the padded stage with a ring of a power of two rows, with nrl rows, then the stage of Q
  // pixels per row with either
  const std::uint32_t ring = L.nbw > 1 ? std::bit_ceil(L.nrl) : L.nrl;
  for (const std::uint32_t qs : {64 * L.ns, Q}) {
    layout_for(ring, qs);
    if (L.bytes > o.smem_bytes && L.rr != L.nrl) layout_for(L.nrl, qs);
    if (L.bytes <= o.smem_bytes) break;
  }
  L.CBn = L.CB == 0 ? 0 : s.in_channels / L.CB;
  return L;
}

// The output stage: the element offset of 16-byte chunk q (chunks of 8 channels, a stage pixel's H8 chunks together;
// stage pixel p = row * qs + column) is nhwc_mma_stage_chunk(q) * 8 (chunks XOR-permuted within each group of 8), and
// the 4-byte word of it that holds the chunk's channel pair j (0-3) of stage pixel p is nhwc_mma_stage_word(p, j,
// rotated) (rotated_stage). Both depend on p % 64 only (qs is a multiple of 64): chunk(q + 64 m) = chunk(q) + 64 m. For
// u32 and for dsl::Val<u32> (the kernel's addresses; the unit test's bank model).
template <class U>
U nhwc_mma_stage_chunk(const U& q) {
  return q ^ ((q / 8u) % 8u);
}
template <class U>
U nhwc_mma_stage_word(const U& p, const U& j, bool rotated) {
  if (!rotated) return j;
  return (j + p / 4u + p / 16u) % 4u;
}

// Why the kernel cannot run spec s (a valid depthwise NHWC spec) with options o ("" when it can).
inline std::string depthwise_nhwc_mma_refusal(const ConvSpec& s, std::size_t elem_bytes, const DepthwiseNhwcMma& o) {
  if (elem_bytes != 2) return "needs f16 or bf16 elements";
  if (s.stride[0] != 1 || s.stride[1] != 1 || s.dilation[0] != 1 || s.dilation[1] != 1) {
    return "needs stride 1 and dilation 1";
  }
  if (s.ksize[1] > 8) return "needs a window at most 8 columns wide (has " + std::to_string(s.ksize[1]) + ")";
  if (o.channels != 8 && o.channels != 16) {
    return "takes 8 or 16 channels per work-group (mc), not " + std::to_string(o.channels);
  }
  if (s.in_channels % o.channels != 0) {
    return "needs C a multiple of the " + std::to_string(o.channels) +
           " channels per work-group (C = " + std::to_string(s.in_channels) + "; mc = 8 takes multiples of 8)";
  }
  if (o.rows < 2 || o.rows % 2 != 0 || o.rows > 64) {
    return "takes an even number of output rows per work-group (mr) in [2, 64], not " + std::to_string(o.rows);
  }
  if (o.warps < 1 || o.warps > 32) return "takes 1 to 32 warps per work-group (mw), not " + std::to_string(o.warps);
  if (o.il < 1 || o.il > o.rows / 2) {
    return "interleaves 1 to " + std::to_string(o.rows / 2) + " row pairs (il, at most mr / 2), not " +
           std::to_string(o.il);
  }
  if (o.bands < 1) return "walks at least one band per work-group (mb), not 0";
  const NhwcMmaLayout L = depthwise_nhwc_mma_geometry(s, elem_bytes, o);
  // (L.nbw: the bands a work-group walks, mb clamped to the image's bands of mr output rows)
  const std::uint32_t nbw = L.nbw;
  const std::string two_bands =
      "needs 2 or more bands per work-group (mb, clamped to the image's bands of mr rows: " + std::to_string(nbw) +
      " here)";
  if (o.weights_in_registers) {
    if (nbw < 2) return "holds the weights in registers across bands (mwr): " + two_bands;
    if (L.tasks > L.warps) {
      return "holds each warp's weights in registers across bands (mwr): needs one task per warp, has " +
             std::to_string(L.tasks) + " tasks (channel pairs x 64-column strips) for " + std::to_string(L.warps) +
             " warps; use more warps (mw) or drop mwr";
    }
  }
  if (const std::uint64_t bytes = L.bytes; bytes > o.smem_bytes) {
    return "stages " + std::to_string(o.channels) + " planes of " + std::to_string(o.rows) + " output rows (" +
           std::to_string(s.in_size[1]) + " columns)" + (L.st > 0 ? ", an NHWC stage of their rows" : "") +
           " and their outputs in shared memory: " + std::to_string(bytes) + " bytes, more than " +
           std::to_string(o.smem_bytes) + "; use fewer rows (mr) or channels (mc), or allow more (msm, KB)";
  }
  return "";
}

// Work-groups for a batch of `batch` images.
inline std::uint64_t depthwise_nhwc_mma_groups(const NhwcMmaLayout& L, std::uint64_t batch) {
  return batch * L.NR * L.CBn;
}

template <class T>
void depthwise_conv2d_nhwc_mma(dsl::KernelBuilder& k, const ConvSpec& s, const DepthwiseNhwcMma& o) {
  using namespace ingot::dsl;
  static_assert(sizeof(T) == 2, "the tensor-core depthwise kernel multiplies f16 or bf16");
  require_depthwise_nhwc_spec(s, "depthwise_conv2d_nhwc_mma");
  if (const std::string why = depthwise_nhwc_mma_refusal(s, sizeof(T), o); !why.empty()) {
    throw std::invalid_argument(s.name + ": the tensor-core kernel (depthwise_conv2d_nhwc mma = 1) " + why +
                                "; use mma = 0");
  }
  const NhwcMmaLayout L = depthwise_nhwc_mma_geometry(s, sizeof(T), o);
  const std::uint32_t G = L.G();
  require_warp_launch_bounds(k, s, G, "the tensor-core kernel");
  const std::uint32_t C = s.in_channels, H = s.in_size[0], Wd = s.in_size[1];
  const auto P = static_cast<std::uint32_t>(s.out_len(0)), Q = static_cast<std::uint32_t>(s.out_len(1));
  const std::uint32_t KH = s.ksize[0], KW = s.ksize[1], PH = s.pad[0], CB = L.CB, H8 = CB / 8;

  const auto prm = declare_dense_conv_params<T>(k, s);  // batch, x [B,H,W,C], w [C, kh, kw], bias, y [B,P,Q,C]
  const auto& x = prm.io.x;
  const auto& y = prm.io.y;
  auto xs = k.shared<T>("xs", static_cast<std::uint32_t>(L.xs));
  auto ys = k.shared<T>("ys", static_cast<std::uint32_t>(L.ys));

  // Group g = (b * NR + run) * CBn + cb: bands run * nbw .. + nbw (one where nbw = 1; bands past the last read zeros
  // and store nothing); a group past the batch reads image 0 and stores nothing.
  auto g = k.let("g", k.group_id(0));
  auto cb = k.let("cb", g % L.CBn);
  auto run = k.let("run", (g / L.CBn) % L.NR);
  auto b_raw = k.let("b_raw", g / (L.CBn * L.NR));
  auto img_ok = k.let("img_ok", b_raw < prm.io.batch);
  auto b = k.let("b", select(img_ok, b_raw, 0u));
  auto c0 = k.let("c0", cb * CB);
  auto lid = k.let("lid", k.local_id(0));
  auto warp = k.let("warp", lid / 32u);
  auto gl = k.let("gl", (lid % 32u) / 4u);
  auto tl = k.let("tl", lid % 4u);

  // 1. The planes: item it = (u * ws + j) * H8 + h: layout row u (input row y0 - PH + u), layout column j (input
  // column j - off), channels c0 + 8h .. + 8 (zeros outside the input).
  auto x_img = k.let("x_img", b * (H * Wd * C) + c0);
  // channel 8h + i: plane 2i + h (CB = 16) or i (CB = 8, h = 0)
  const auto plane_of = [&](const Val<u32>& h, std::uint32_t i) {
    return CB == 16 ? Val<u32>(h + 2 * i) : Val<u32>(i);
  };
  // Input row ih, column iw (both wrap below 0), channels c0 + 8h .. + 8: whether inside the input, and the index of
  // the first (0 outside, so that every load and copy stays in range).
  const auto pixel = [&](const Val<u32>& ih, const Val<u32>& iw, const Val<u32>& h, const std::string& tag) {
    auto ok = k.let(tag + "ok", ih < H && iw < Wd);
    return std::pair{ok, k.let(tag + "src", select(ok, x_img + (ih * Wd + iw) * C + h * 8u, 0u))};
  };
  const auto fill = [&](const Val<u32>& y0) {
    for_group_rounds(k, lid, G, L.nrl * L.ws * H8, "fl", true, [&](const Val<u32>& it, std::uint32_t r) {
      const std::string rt = "f" + std::to_string(r) + "_";
      auto h = k.let(rt + "h", it % H8);
      auto j = k.let(rt + "j", (it / H8) % L.ws);
      auto u = k.let(rt + "u", it / (H8 * L.ws));
      auto ih = k.let(rt + "ih", y0 + u - PH);
      auto iw = k.let(rt + "iw", j - L.off);
      const auto [ok, src] = pixel(ih, iw, h, rt);
      const auto v = load_vec(x, src, 8);
      auto at = k.let(rt + "at", u * L.ws + j);
      for (std::uint32_t i = 0; i < 8; ++i) store(xs, at + plane_of(h, i) * L.ps, select(ok, v[i], Val<T>(0.0f)));
    });
  };

  const auto stage_word = [&](const Val<u32>& p, const Val<u32>& j) {
    return nhwc_mma_stage_word(p, j, o.rotated_stage);
  };

  // 2. Row-pair products: task = strip * (CB / 2) + channel pair; lane l's load_matrix row as in the NCHW kernel.
  const MmaBandTaps taps = mma_band_taps(k, gl, tl, KW, L.s);
  const RowPairLanes lanes = row_pair_lanes(k, lid, o.loads);
  // nbw > 1: the block's weights in shared memory (read per band: registers are not held across the band loop), as
  // packed tap pairs (wpt, with this lane's pairs) or as the taps (wsm)
  std::optional<Shared<T>> wsm, wpt;
  std::optional<MmaBandPairs> pairs;
  // weights_in_registers: the warp's B fragments of its channels 2 cp + e (e = 0, 1), loaded before the band loop
  std::optional<std::array<std::vector<std::array<Val<f32>, 4>>, 2>> held;
  // ring0 (nbw > 1): the ring position of the band's layout row 0 (layout row R at ring row (ring0 + R) % rr).
  const auto products = [&](const Val<u32>& y0, const std::optional<Val<u32>>& ring0) {
    for_group_rounds(k, warp, L.warps, L.tasks, "task", false, [&](const Val<u32>& task, std::uint32_t r) {
      const std::string rt = "r" + std::to_string(r) + "_";
      Val<bool> live = img_ok;
      const bool partial = (r + 1) * L.warps > L.tasks;  // a round where some warps have no task of their own
      if (partial) live = k.let(rt + "live", img_ok && warp + r * L.warps < L.tasks);
      auto cp = k.let(rt + "cp", task % (CB / 2));
      auto x0 = k.let(rt + "x0", (task / (CB / 2)) * 64u);
      auto q0 = k.let(rt + "q", x0 + gl * 8u + tl * 2u);
      auto col = k.let(rt + "col", row_pair_column(lanes, x0, L.tw) + (ring0 ? 0u : lanes.row * L.ws));
      // with the ring: this lane's ring position of layout row 0 (its load_matrix row is R + lanes.row)
      std::optional<Val<u32>> lane_ring;
      if (ring0) lane_ring = k.let(rt + "ring", *ring0 + lanes.row);
      // d[e][i]: channel 2 cp + e, pair i
      std::array<std::vector<std::array<Val<f32>, 4>>, 2> d;
      for (std::uint32_t e = 0; e < 2; ++e) {
        const std::string et = rt + "c" + std::to_string(e) + "_";
        auto ch = k.let(et + "ch", cp * 2u + e);
        auto c = k.let(et + "c", c0 + ch);
        const auto bfrag = held  ? (*held)[e]
                           : wpt ? mma_band_weights_from_pairs<T>(*wpt, ch, KH, *pairs)
                           : wsm ? mma_band_weights<T>(k, *wsm, k.let(et + "w_at", ch * (KH * KW)), KH, KW, taps, et)
                                 : mma_band_weights<T>(k, prm.w, k.let(et + "w_at", c * (KH * KW)), KH, KW, taps, et);
        Val<f32> init = 0.0f;
        if (s.bias) init = k.let(et + "bias", cast<f32>(load(prm.io.bias, c)));
        // the plane of channel ch: 2 (ch % 8) + ch / 8 where CB = 16 (ch = 2 cp + e, so ch % 8 = (2 cp) % 8 + e)
        const Val<u32> plane = CB == 16 ? Val<u32>(((cp * 2u) % 8u) * 2u + 2u * e + (cp * 2u) / 8u) : Val<u32>(ch);
        auto at = k.let(et + "at", plane * L.ps + col);
        d[e].resize(L.pb);
        std::function<Val<u32>(std::uint32_t)> row_at;
        if (lane_ring) {
          row_at = [&, at](std::uint32_t R) { return Val<u32>(at + ((*lane_ring + R) % L.rr) * L.ws); };
        }
        row_pair_products<T>(
            k, xs, at, L.ws, L.pb, o.il, bfrag, init,
            [&](std::uint32_t i, const std::array<Val<f32>, 4>& acc) { d[e][i] = acc; }, o.loads, row_at);
      }
      // 3a. D to the stage: pixel (row 2i + e, column q0 + f) at stage pixel row * qs + q0 + f, channels 2 cp and
      // 2 cp + 1 as one 4-byte store. With the padded stage (qs = ns * 64) the lane's two columns' offsets are computed
      // once (the chunk's permutation and word depend on the column only) and a row adds qs * CB elements; every
      // column of the strip and every row of the band has its place (copy_out leaves out those past Q and P), so only
      // a warp without a task of its own (a partial round) skips the stores, and a work-group past the batch stores
      // its stage but copy_out nothing. Else (qs = Q) each store computes its offset and tests its row and column.
      // (the element offset of stage pixel p's word holding channels 2 cp, 2 cp + 1)
      const auto stage_at = [&](const Val<u32>& p) {
        const Val<u32> in_chunk = o.rotated_stage ? stage_word(p, cp % 4u) * 2u : (cp * 2u) % 8u;
        return Val<u32>(nhwc_mma_stage_chunk<Val<u32>>(p * H8 + cp / 4u) * 8u + in_chunk);
      };
      if (L.qs != 64 * L.ns) {
        for (std::uint32_t i = 0; i < L.pb; ++i) {
          for (std::uint32_t e = 0; e < 2; ++e) {
            const std::uint32_t row = 2 * i + e;
            for (std::uint32_t f = 0; f < 2; ++f) {
              if_(live && q0 + f < Q && y0 + row < P, [&] {
                auto p = k.let(rt + "px" + std::to_string(row) + "_" + std::to_string(f), q0 + (row * Q + f));
                store_vec(ys, stage_at(p), std::vector<Val<f32>>{d[0][i][2 * e + f], d[1][i][2 * e + f]});
              });
            }
          }
        }
        return;
      }
      std::array<Val<u32>, 2> at_f;
      for (std::uint32_t f = 0; f < 2; ++f) at_f[f] = k.let(rt + "st" + std::to_string(f), stage_at(q0 + f));
      for (std::uint32_t i = 0; i < L.pb; ++i) {
        for (std::uint32_t e = 0; e < 2; ++e) {
          const std::uint32_t row = 2 * i + e;
          for (std::uint32_t f = 0; f < 2; ++f) {
            const auto put = [&] {
              const std::vector<Val<f32>> pair{d[0][i][2 * e + f], d[1][i][2 * e + f]};
              store_vec(ys, at_f[f] + row * L.qs * CB, pair);
            };
            if (partial) {
              if_(live, put);
            } else {
              put();
            }
          }
        }
      }
    });
    k.barrier();
  };

  // 3b. The stage leaves as 16-byte chunks of the band's pixels (row, column), rows past P and columns past Q left
  // out: the rounds walk the stage's chunks (stage pixel row * qs + column) where that takes no more rounds than the
  // band's 2 pb Q H8 chunks (with qs = ns * 64 the row and column are a shift and a mask where ns is a power of two),
  // else the band's chunks (row and column by division by Q).
  const std::uint32_t out_chunks = 2 * L.pb * Q * H8, stage_chunks = 2 * L.pb * L.qs * H8;
  const bool walk_stage = (stage_chunks + G - 1) / G <= (out_chunks + G - 1) / G;
  const auto copy_out = [&](const Val<u32>& y0) {
    for_group_rounds(k, lid, G, walk_stage ? stage_chunks : out_chunks, "oc", true,
                     [&](const Val<u32>& q, std::uint32_t r) {
                       const std::string rt = "o" + std::to_string(r) + "_";
                       auto p = k.let(rt + "p", q / H8);
                       auto row = k.let(rt + "row", p / (walk_stage ? L.qs : Q));
                       auto col = k.let(rt + "col", p % (walk_stage ? L.qs : Q));
                       // the stage pixel and chunk
                       const Val<u32> sp = walk_stage ? p : k.let(rt + "sp", row * L.qs + col);
                       const Val<u32> sq = walk_stage ? q : k.let(rt + "sq", sp * H8 + q % H8);
                       Val<bool> inside = img_ok && y0 + row < P;
                       if (walk_stage && L.qs > Q) inside = inside && col < Q;
                       if_(inside, [&] {
                         std::vector<Val<T>> v;
                         if (o.rotated_stage) {  // the chunk's four words, channel pair j from word stage_word(sp, j)
                           auto at = k.let(rt + "at", nhwc_mma_stage_chunk<Val<u32>>(sq) * 8u);
                           for (std::uint32_t j = 0; j < 4; ++j) {
                             const auto w = load_vec(ys, at + stage_word(sp, Val<u32>(j)) * 2u, 2);
                             v.insert(v.end(), w.begin(), w.end());
                           }
                         } else {
                           v = load_vec(ys, nhwc_mma_stage_chunk<Val<u32>>(sq) * 8u, 8);
                         }
                         store_vec(y, k.let(rt + "dst", ((b * P + y0 + row) * Q + col) * C + c0 + (q % H8) * 8u), v);
                       });
                     });
  };

  if (L.nbw == 1) {
    auto y0 = k.let("y0", run * (2 * L.pb));
    fill(y0);
    k.barrier();
    products(y0, std::nullopt);
    copy_out(y0);
    return;
  }

  // nbw > 1: the planes hold a ring of rr layout rows (absolute layout row a of the run, a = 2 pb j + u for band j's
  // row u, at ring row a % rr). The first band's rows are filled as with one band; each later band brings only its
  // 2 pb new rows, copied asynchronously, as they lie, into one NHWC stage (element (u * ws + j) * CB + c: stage row u,
  // layout column j, channel c0 + c; 8 channels, 16 bytes, per copy; zeros outside the input) while the band before is
  // multiplied, then transposed into the ring.
  std::optional<Shared<T>> st;
  if (L.st > 0) st = k.shared<T>("st", static_cast<std::uint32_t>(L.st));
  auto y_run = k.let("y_run", run * (L.nbw * 2 * L.pb));       // output row of the run's first band
  const std::uint32_t fresh = 2 * L.pb, kept = L.nrl - fresh;  // a band's new rows, and those of the band before
  // Stage rows [0, rows) <- the run's layout rows a0 .. a0 + rows (input rows y_run - PH + a).
  const auto copy_rows = [&](const Val<u32>& a0, std::uint32_t rows) {
    for_group_rounds(k, lid, G, rows * L.ws * H8, "cp", true, [&](const Val<u32>& it, std::uint32_t r) {
      const std::string rt = "c" + std::to_string(r) + "_";
      auto h = k.let(rt + "h", it % H8);
      auto j = k.let(rt + "j", (it / H8) % L.ws);
      auto u = k.let(rt + "u", it / (H8 * L.ws));
      auto ih = k.let(rt + "ih", y_run + a0 + u - PH);
      auto iw = k.let(rt + "iw", j - L.off);
      const auto [ok, src] = pixel(ih, iw, h, rt);
      copy_async(*st, it * 8u, x, src, 8, ok);
    });
  };
  // Stage rows [0, rows) into the ring rows (a0 + u) % rr: columns 2 jp and 2 jp + 1 (16-byte reads of 8 channels) as
  // channel pairs (4 bytes). Items it = (u * wp + jp) * H8 + h over the wp = ws / 2 column pairs of the stage rows:
  // stage row u, columns 2 jp and 2 jp + 1, channels 8h .. + 8, whose chunks are `from` and from + H8.
  const std::uint32_t wp = L.ws / 2;
  const auto transpose = [&](const Val<u32>& a0, std::uint32_t rows) {
    for_group_rounds(k, lid, G, rows * wp * H8, "tr", true, [&](const Val<u32>& it, std::uint32_t r) {
      const std::string rt = "tr" + std::to_string(r) + "_";
      auto h = k.let(rt + "h", it % H8);
      auto jp = k.let(rt + "jp", (it / H8) % wp);
      auto u = k.let(rt + "u", it / (H8 * wp));
      auto from = k.let(rt + "from", (u * L.ws + jp * 2u) * H8 + h);
      const auto v0 = load_vec(*st, from * 8u, 8);
      const auto v1 = load_vec(*st, (from + H8) * 8u, 8);
      auto at = k.let(rt + "at", ((a0 + u) % L.rr) * L.ws + jp * 2u);
      for (std::uint32_t i = 0; i < 8; ++i)
        store_vec(xs, at + plane_of(h, i) * L.ps, std::vector<Val<T>>{v0[i], v1[i]});
    });
  };
  if (o.weight_pairs) {  // (read after the loop's first barrier)
    wpt = k.shared<T>("wpt", mma_band_pair_elements(CB, KH, KW));
    pairs = mma_band_pairs(k, gl, tl, KW, L.s);
    fill_mma_band_pairs<T>(k, *wpt, prm.w, k.let("wp_at0", c0 * (KH * KW)), CB, KH, KW, lid, G);
  } else {
    wsm = k.shared<T>("wsm", CB * KH * KW);
    for_group_rounds(k, lid, G, CB * KH * KW, "ws", true,
                     [&](const Val<u32>& i, std::uint32_t) { store(*wsm, i, load(prm.w, c0 * (KH * KW) + i)); });
  }
  if (o.weights_in_registers) {  // (one task per warp, the refusal says: the task products() gives this warp)
    k.barrier();
    auto cp_held = k.let("cp_held", min(warp, L.tasks - 1) % (CB / 2));
    held.emplace();
    for (std::uint32_t e = 0; e < 2; ++e) {
      const std::string et = "wr" + std::to_string(e) + "_";
      auto ch = k.let(et + "ch", cp_held * 2u + e);
      (*held)[e] = wpt ? mma_band_weights_from_pairs<T>(*wpt, ch, KH, *pairs)
                       : mma_band_weights<T>(k, *wsm, k.let(et + "w_at", ch * (KH * KW)), KH, KW, taps, et);
    }
  }
  fill(y_run);  // the first band's rows, ring rows 0 .. nrl - 1, as with one band
  for_(k.constant<u32>(0), L.nbw, [&](const Val<u32>& jb) {
    k.barrier();  // the band's rows are in the ring; the stage is free; every thread is done with ys
    auto nxt = k.let("nxt", jb + 1u);
    auto a_new = k.let("a_new", nxt * fresh + kept);  // the next band's first new row
    if_(nxt < L.nbw, [&] { copy_rows(a_new, fresh); });
    async_commit(k);  // (an empty group after the last band)
    products(k.let("y0", y_run + jb * fresh), k.let("ring0", (jb * fresh) % L.rr));
    copy_out(k.let("y0_out", y_run + jb * fresh));
    async_wait(k, 0);
    // the new rows have landed for every thread; every thread is done with the band's ring rows (the products'
    // barrier)
    k.barrier();
    if_(nxt < L.nbw, [&] { transpose(a_new, fresh); });
  });
}

}  // namespace ingot::kernels
