// depthwise_conv2d: depthwise 2-D convolution, NCHW in and out, weight [C, kh, kw], optional
// bias; kh != kw allowed; stride, padding and dilation per axis. The cases, oracle and bench
// arithmetic are direct_conv_registry's. Kernels: depthwise_conv2d_nchw.hpp (a VH x VW tile of
// outputs per thread; spec parameters "VH", "VW", "preload", "ahead", "shfl", "minb"; default
// depthwise_conv2d_default_tile, per window height and element size), depthwise_conv2d_nchw_mma.hpp
// (f16/bf16 on tensor cores, "mma", "imgs", "lm", "os", ...; the default for windows of 5 or more rows, and for f16
// any window, where it applies, tile_of) and depthwise_conv2d_nchw_smem.hpp (a plane per work-group in shared memory,
// "smem", "os"; the f32 default for windows of 5 or more rows where the plane fits).
#include "depthwise_conv2d.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "depthwise_conv2d_nchw.hpp"
#include "depthwise_conv2d_nchw_mma.hpp"
#include "depthwise_conv2d_nchw_smem.hpp"
#include "register.hpp"

namespace ingot::kernels {

std::vector<std::pair<std::string, ConvCase>> depthwise_conv2d_cases() {
  return {
      // 189 outputs: a partial last work-group
      {"c3_7x9_3x3_pad1_bias", {.B = 1, .C = 3, .size = {7, 9}, .k = {3, 3}, .pad = {1, 1}, .bias = true}},
      {"kh3_kw5_s2x1_p1x2_batch2", {.B = 2, .C = 8, .size = {15, 17}, .k = {3, 5}, .stride = {2, 1}, .pad = {1, 2}}},
      {"d2x3_p2x3_batch2", {.B = 2, .C = 5, .size = {12, 11}, .k = {3, 3}, .pad = {2, 3}, .dil = {2, 3}}},
      {"1x1_batch2", {.B = 2, .C = 3, .size = {4, 5}, .k = {1, 1}}},
      {"k2x4_s2_nopad", {.B = 1, .C = 2, .size = {9, 10}, .k = {2, 4}, .stride = {2, 2}}},
      {"c7_k3x2_pad1_batch3_bias", {.B = 3, .C = 7, .size = {5, 6}, .k = {3, 2}, .pad = {1, 1}, .bias = true}},
  };
}

namespace {

using harness::param;
using harness::Params;

// The tuning options, declared once (ingot list --options); which kernel a case runs and the defaults per shape:
// tile_of and the kernels' option structs below.
const std::vector<harness::OptionSpec>& depthwise_conv2d_options() {
  static const std::vector<harness::OptionSpec> options{
      {"VH", 1, 16, "tiled kernel: output rows per thread"},
      {"VW", 1, 32, "tiled kernel: output columns per thread"},
      {"preload", 0, 1, "tiled kernel: 1 = every input row loaded before the arithmetic"},
      {"shfl", 0, 1, "tiled kernel with preload: 1 = halo columns by sub-group shuffle"},
      {"ahead", 0, 32, "tiled kernel with preload: rows loaded this far ahead of their arithmetic (0: all)"},
      {"smem", 0, 1, "1: one plane per work-group, staged in shared memory"},
      {"mma", 0, 1, "1: tensor cores (f16/bf16; f32 runs the tiled kernel)"},
      {"imgs", 1, 64, "tensor cores, smem with async: images per work-group (default 1)"},
      {"async", 0, 1, "tensor cores, smem: planes copied asynchronously through two buffers"},
      {"lm", 0, 1, "tensor cores: 1 = A fragments by load_matrix (ldmatrix)"},
      {"lmfirst", 0, 1, "tensor cores with lm: every tile's load_matrix of a tap row first"},
      {"os", 0, 1, "tensor cores: 1 = outputs through shared memory, 16-byte stores"},
      {"mw", 1, 8, "tensor cores: warps per work-group (default: the fewest for the least tiles)"},
      {"rp", 0, 1, "tensor cores: 1 = row-pair tiles (2 rows x 64 columns, A rows loaded once)"},
      {"il", 1, 32, "tensor cores with rp: pairs whose mma chains run side by side (at most the pairs)"},
      {"lq", 0, 2, "tensor cores with rp: row loads (0 pairs, 1 in A's order, 2 every row)"},
      launch_bounds_option()};
  return options;
}

// Absent VH/VW/preload take depthwise_conv2d_default_tile; absent mma: tensor cores for 16-bit
// windows of 5 or more rows, and for f16 any window, where they apply (docs/performance.md s6; 3x3: see mma_default
// below).
DepthwiseConv2dTile tile_of(DType t, const ConvSpec& sp, const Params& p) {
  // check_depthwise_conv2d_nchw gives the precise limits; this only keeps the values exact in 32 bits
  DepthwiseConv2dTile d =
      depthwise_conv2d_default_tile(bounded_param(p, "kh", 1, 1 << 20, 1, "depthwise_conv2d"), dtype_size(t));
  // (a case that names a tile of the tiled kernels runs them)
  bool tiled = false;
  for (const char* key : {"VH", "VW", "preload", "shfl", "smem", "ahead"}) tiled = tiled || p.count(key) > 0;
  // The staged-plane default (f32, windows of 5 or more rows) gives way to 2x8 row by row where the plane does not fit,
  // with smem = 0, and where the case names a tiling key without smem (the tiled kernels' own variants).
  const bool no_smem = p.count("smem")
                           ? harness::option_value(depthwise_conv2d_options(), p, "smem", 0, "depthwise_conv2d") == 0
                           : tiled || !depthwise_conv2d_smem_fits(sp, d, dtype_size(t));
  if (d.smem && no_smem) d = {2u, 8u, false};
  using Shuffle = DepthwiseConv2dTile::Shuffle;
  Shuffle shfl = d.halo_shuffle;
  if (p.count("shfl"))
    shfl = harness::option_value(depthwise_conv2d_options(), p, "shfl", 0, "depthwise_conv2d") == 1 ? Shuffle::On
                                                                                                    : Shuffle::Off;
  const bool smem =
      harness::option_value(depthwise_conv2d_options(), p, "smem", d.smem ? 1 : 0, "depthwise_conv2d") == 1;
  if (smem && shfl != Shuffle::On) shfl = Shuffle::Off;  // (shfl = 1: halos by shuffle from the staged rows)
  // (Every window where row-pair tiles apply: they load each input row once per band and beat the 2x8 tile and the
  // 16x8 tensor-core tiles for 3x3 and 7x7 alike, docs/performance.md s18; elsewhere windows of 5 or more rows, and
  // f16 any window, s6 and s17.)
  const bool mma_default = !tiled && dtype_size(t) == 2 &&
                           (depthwise_conv2d_mma_refusal(sp, 2, true).empty() ||
                            ((sp.ksize[0] >= 5 || t == DType::f16) && depthwise_conv2d_mma_refusal(sp, 2).empty()));
  const bool mma = dtype_size(t) == 2 && harness::option_value(depthwise_conv2d_options(), p, "mma",
                                                               mma_default ? 1 : 0, "depthwise_conv2d") == 1;
  if (mma && (smem || shfl == Shuffle::On)) {
    throw std::invalid_argument("depthwise_conv2d: mma = 1 is its own kernel: drop smem and shfl");
  }
  return {harness::option_value(depthwise_conv2d_options(), p, "VH", d.vh, "depthwise_conv2d"),
          harness::option_value(depthwise_conv2d_options(), p, "VW", d.vw, "depthwise_conv2d"),
          harness::option_value(depthwise_conv2d_options(), p, "preload", d.preload ? 1 : 0, "depthwise_conv2d") == 1,
          harness::option_value(depthwise_conv2d_options(), p, "ahead", d.ahead, "depthwise_conv2d"),
          mma ? Shuffle::Off : shfl,
          smem,
          mma};
}

// The tensor-core kernel's schedule where the case names none of imgs, async and mw: 4 warps per
// work-group (7 rounds of mma chains for a 56x56 plane), A fragments by load_matrix (lm) and, where rows
// admit vector copies, 4 images' planes through two buffers by asynchronous copies, so that the next plane's copy
// overlaps this one's products (docs/performance.md s12).
bool mma_tuned(const DepthwiseConv2dTile& tile, const Params& p) {
  return tile.mma && !p.count("imgs") && !p.count("async") && !p.count("mw");
}
// A fragments by load_matrix in the tensor-core kernel: "lm" (0 or 1; default 1 in the tuned schedule, mma_tuned, else
// 0: one load_matrix in place of four shared loads per fragment, docs/performance.md s12). Refused unless the case
// asks for tensor cores (ignored for f32 with mma = 1, like async).
bool mma_load_matrix(const DepthwiseConv2dTile& tile, const Params& p) {
  const bool mma_asked = harness::option_value(depthwise_conv2d_options(), p, "mma", 0, "depthwise_conv2d") == 1;
  if (p.count("lm") && !tile.mma && !mma_asked) {
    throw std::invalid_argument(
        "depthwise_conv2d: lm (A fragments by load_matrix) applies to the tensor-core kernel (mma = 1, f16/bf16); drop "
        "lm");
  }
  return tile.mma && harness::option_value(depthwise_conv2d_options(), p, "lm", mma_tuned(tile, p) ? 1 : 0,
                                           "depthwise_conv2d") == 1;
}
// Every tile's load_matrix of a tap row before the row's first mma: "lmfirst" (0 or 1, default 0); refused without
// load_matrix (ignored for f32 with mma = 1, like lm).
bool mma_lm_first(const DepthwiseConv2dTile& tile, const Params& p) {
  if (!p.count("lmfirst")) return false;
  const bool on = harness::option_value(depthwise_conv2d_options(), p, "lmfirst", 0, "depthwise_conv2d") == 1;
  const bool mma_asked = harness::option_value(depthwise_conv2d_options(), p, "mma", 0, "depthwise_conv2d") == 1;
  const bool lm = mma_load_matrix(tile, p);
  if (on && (tile.mma ? !lm : !mma_asked)) {
    throw std::invalid_argument(
        "depthwise_conv2d: lmfirst orders load_matrix ahead of the products: it needs the "
        "tensor-core kernel (mma = 1) with lm = 1; drop lmfirst");
  }
  return on && lm;
}
// Row-pair tiles in the tensor-core kernel (depthwise_conv2d_nchw_mma.hpp): "rp" (0 or 1; implies lm), and "il", the
// pairs whose mma chains run side by side (default 3, before lq 1 2 for windows under 5 rows; at most the pairs of a
// band). rp defaults to 1 in the tuned schedule (mma_tuned) unless the case names lm or lmfirst or the taller plane
// does not fit: each layout row loaded once per band, not kh times (docs/performance.md s18; il 3: s19, s20). Refused
// unless the case asks for tensor cores (ignored for f32 with mma = 1, like lm); il refused without rp. "lq" (0, 1 or
// 2, default 1): how the rows are loaded (RowPairLoads: pairs, pairs in A's register order, every row's A), refused
// without rp.
bool mma_row_pairs(const ConvSpec& sp, const DepthwiseConv2dTile& tile, const Params& p) {
  const bool mma_asked = harness::option_value(depthwise_conv2d_options(), p, "mma", 0, "depthwise_conv2d") == 1;
  if (p.count("rp") && !tile.mma && !mma_asked) {
    throw std::invalid_argument(
        "depthwise_conv2d: rp (row-pair tiles) applies to the tensor-core kernel (mma = 1, f16/bf16); drop rp");
  }
  const bool dflt = tile.mma && mma_tuned(tile, p) && !p.count("lm") && !p.count("lmfirst") &&
                    depthwise_conv2d_mma_refusal(sp, 2, true).empty();
  const bool rp =
      tile.mma && harness::option_value(depthwise_conv2d_options(), p, "rp", dflt ? 1 : 0, "depthwise_conv2d") == 1;
  for (const auto& [key, what] : {std::pair{"il", "row pairs interleaved"}, std::pair{"lq", "row loads"}}) {
    if (p.count(key) && !rp &&
        !(mma_asked && harness::option_value(depthwise_conv2d_options(), p, "rp", 0, "depthwise_conv2d") == 1)) {
      throw std::invalid_argument(std::string("depthwise_conv2d: ") + key + " (" + what +
                                  ") applies to row-pair tiles (mma = 1, rp = 1); drop it");
    }
  }
  return rp;
}
// The tensor-core kernel's outputs through shared memory, leaving each plane as 16-byte vectors: "os" (0 or 1, default
// 1 for 16 x 8 tiles of windows of fewer than 5 rows, else 0; applies where P * Q % 8 == 0 and the plane and its
// outputs fit shared memory): the 16 x 8 tiles' 4-byte pair stores write half sectors (docs/performance.md s17), while
// row pairs store whole 128-byte rows. Row pairs of windows of 5 or more rows take os = 1 too, with launch bounds for
// 6 work-groups per SM (the launch bounds in s.build; s24); 3x3 row pairs stay at os = 0 (s24). Refused unless the
// case asks for tensor cores (ignored for f32 with mma = 1, like lm).
bool mma_output_stage(const ConvSpec& sp, const DepthwiseConv2dTile& tile, const Params& p) {
  const bool mma_asked = harness::option_value(depthwise_conv2d_options(), p, "mma", 0, "depthwise_conv2d") == 1;
  if (p.count("os") && !tile.mma && !mma_asked && !tile.smem) {
    throw std::invalid_argument(
        "depthwise_conv2d: os (outputs through shared memory) applies to the tensor-core kernel (mma = 1, f16/bf16) "
        "and the staged-plane kernel (smem = 1); drop os");
  }
  const bool rp = mma_row_pairs(sp, tile, p);
  const bool dflt = sp.ksize[0] < 5 ? !rp : rp;
  return tile.mma && harness::option_value(depthwise_conv2d_options(), p, "os", dflt ? 1 : 0, "depthwise_conv2d") == 1;
}
// The staged-plane kernel's outputs through its plane buffer, leaving as vectors: "os" (0 or 1, default 0; refused
// where a plane has more tiles than the work-group has threads).
bool smem_output_stage(const DepthwiseConv2dTile& tile, const Params& p) {
  return tile.smem && !tile.mma &&
         harness::option_value(depthwise_conv2d_options(), p, "os", 0, "depthwise_conv2d") == 1;
}
bool mma_tuned_async(const ConvSpec& sp, const DepthwiseConv2dTile& tile, const Params& p) {
  const bool rp = mma_row_pairs(sp, tile, p);
  return mma_tuned(tile, p) &&
         plane_copies_async<bf16>(depthwise_conv2d_mma_geometry(sp, 2, 0, mma_load_matrix(tile, p), rp).plane);
}

// Images per work-group of the tensor-core kernel and of the staged-plane kernel with async: "imgs"
// (default 1; in the tensor-core kernel's tuned schedule (mma_tuned_async) 4, and with row pairs 2 for windows under 5
// rows, else 8, each the fastest measured, docs/performance.md s12 and s18; without async several images per
// work-group only serialise their planes), at most the batch.
std::uint32_t mma_images(const ConvSpec& sp, const DepthwiseConv2dTile& tile, const Params& p) {
  std::uint32_t dflt = 1;
  if (mma_tuned_async(sp, tile, p)) dflt = !mma_row_pairs(sp, tile, p) ? 4 : sp.ksize[0] < 5 ? 2 : 8;
  const std::uint32_t imgs = harness::option_value(depthwise_conv2d_options(), p, "imgs", dflt, "depthwise_conv2d");
  return std::min<std::uint32_t>(imgs, std::max<std::int64_t>(param(p, "B"), 1));
}

// Warps per work-group of the tensor-core kernel: "mw" (1..8; absent: as few as give the least tiles
// per warp, depthwise_conv2d_mma_geometry). Refused unless the case asks for tensor cores (like async, it is
// ignored for f32 with mma = 1, which runs the tiled kernel).
std::uint32_t mma_warps(const DepthwiseConv2dTile& tile, const Params& p) {
  const bool mma_asked = harness::option_value(depthwise_conv2d_options(), p, "mma", 0, "depthwise_conv2d") == 1;
  if (p.count("mw") && !tile.mma && !mma_asked) {
    throw std::invalid_argument(
        "depthwise_conv2d: mw (warps per work-group) applies to the tensor-core kernel (mma = 1, f16/bf16); drop mw");
  }
  return tile.mma ? harness::option_value(depthwise_conv2d_options(), p, "mw", mma_tuned(tile, p) ? 4 : 0,
                                          "depthwise_conv2d")
                  : 0;
}

// Planes copied asynchronously through two buffers: "async" (0 or 1, default 0), in the tensor-core
// kernel (depthwise_conv2d_nchw_mma.hpp) and the staged-plane kernel (depthwise_conv2d_nchw_smem.hpp).
// Refused unless the case asks for one of them (mma = 1 or smem = 1); like mma = 1 it does not
// apply to f32 with mma = 1, which runs the tiled kernel.
bool plane_async(const ConvSpec& sp, const DepthwiseConv2dTile& tile, const Params& p) {
  const bool async = harness::option_value(depthwise_conv2d_options(), p, "async", mma_tuned_async(sp, tile, p) ? 1 : 0,
                                           "depthwise_conv2d") == 1;
  const bool mma_asked = harness::option_value(depthwise_conv2d_options(), p, "mma", 0, "depthwise_conv2d") == 1;
  if (async && !tile.mma && !tile.smem && !mma_asked) {
    throw std::invalid_argument(
        "depthwise_conv2d: async = 1 applies to the tensor-core kernel (mma = 1, f16/bf16) and to the staged-plane "
        "kernel (smem = 1); drop async");
  }
  return async && (tile.mma || tile.smem);
}

// The tensor-core kernel's options from the case's parameters (each refused where it does not apply).
DepthwiseMmaOptions mma_options(const ConvSpec& sp, const DepthwiseConv2dTile& tile, const Params& p) {
  DepthwiseMmaOptions o;
  o.images = mma_images(sp, tile, p);
  o.async = plane_async(sp, tile, p);
  o.warps = mma_warps(tile, p);
  o.lm = mma_load_matrix(tile, p);
  o.lm_first = mma_lm_first(tile, p);
  o.os = mma_output_stage(sp, tile, p);
  o.rp = mma_row_pairs(sp, tile, p);
  if (o.rp && (o.lm_first || (p.count("lm") && harness::option_value(depthwise_conv2d_options(), p, "lm", 1,
                                                                     "depthwise_conv2d") == 0))) {
    throw std::invalid_argument(
        "depthwise_conv2d: row-pair tiles (rp = 1) load A by load_matrix once per row: drop lmfirst and lm = 0");
  }
  if (o.rp) {
    const std::uint32_t pb = depthwise_conv2d_mma_plan(sp, 2, o.warps, o.lm, true).pb;
    // (3: three independent mma chains hide the tensor pipe's latency at a few registers more, docs/performance.md
    // s19/s20)
    const std::uint32_t il = 3;
    o.il = harness::option_value(depthwise_conv2d_options(), p, "il", std::min(il, pb), "depthwise_conv2d");
    if (o.il > pb) {
      throw std::invalid_argument("depthwise_conv2d: il = " + std::to_string(o.il) + " must be in [1, " +
                                  std::to_string(pb) + "] (row pairs interleaved, at most a warp's pairs)");
    }
    // (1: the rows' matrices in A's register order, so that half the mma take a load's registers as they are, without
    // register moves; docs/performance.md s20)
    o.loads =
        static_cast<RowPairLoads>(harness::option_value(depthwise_conv2d_options(), p, "lq", 1, "depthwise_conv2d"));
  }
  return o;
}

Params with_tile(Params p, std::int64_t vh, std::int64_t vw) {
  p["VH"] = vh;
  p["VW"] = vw;
  return p;
}

}  // namespace

void register_depthwise_conv2d(harness::Registry& r) {
  const ConvForm f{"depthwise_conv2d", 2, ConvLayout::ChannelsFirst, ConvChannels::Depthwise};
  const ConvCase b3{.B = 32, .C = 384, .size = {56, 56}, .k = {3, 3}, .pad = {1, 1}};
  const ConvCase b7{.B = 32, .C = 384, .size = {56, 56}, .k = {7, 7}, .pad = {3, 3}};
  auto s = direct_conv_kernel(f,
                              "depthwise 2-D convolution, NCHW: x[B,C,H,W] * w[C,kh,kw] (+bias[C]) -> y[B,C,P,Q]; "
                              "stride, pad, dilation per axis; VH x VW outputs per thread",
                              depthwise_conv2d_cases(), {{"N32_C384_56x56_3x3", b3}, {"N32_C384_56x56_7x7", b7}});
  for (const auto& o : depthwise_conv2d_options()) s.add_option(o);
  // The general cases and the reference shapes' bench cases run the default tile (tile_of).
  // Tiles with vector loads (rows a multiple of the vector), partial tiles, 7x7, strides.
  const std::vector<std::tuple<std::string, ConvCase, std::int64_t, std::int64_t>> tiled = {
      {"c3_16x16_3x3_pad1_bias_t4x8",
       {.B = 2, .C = 3, .size = {16, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
       4,
       8},
      {"c3_12x16_7x7_pad3_bias_t4x8",
       {.B = 1, .C = 3, .size = {12, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
       4,
       8},
      {"c2_13x13_7x7_pad3_b2_t4x8", {.B = 2, .C = 2, .size = {13, 13}, .k = {7, 7}, .pad = {3, 3}}, 4, 8},
      {"c2_10x20_7x5_pad3x2_t3x4", {.B = 2, .C = 2, .size = {10, 20}, .k = {7, 5}, .pad = {3, 2}}, 3, 4},
      {"c3_16x32_3x5_s2_p1x2_t2x8",
       {.B = 2, .C = 3, .size = {16, 32}, .k = {3, 5}, .stride = {2, 2}, .pad = {1, 2}},
       2,
       8},
      {"c2_12x24_d2x3_p2x3_bias_t4x8",
       {.B = 1, .C = 2, .size = {12, 24}, .k = {3, 3}, .pad = {2, 3}, .dil = {2, 3}, .bias = true},
       4,
       8},
      {"c2_8x24_3x3_pad1_t2x16", {.B = 2, .C = 2, .size = {8, 24}, .k = {3, 3}, .pad = {1, 1}}, 2, 16},
      {"c2_9x8_7x7_pad3_t1x8", {.B = 1, .C = 2, .size = {9, 8}, .k = {7, 7}, .pad = {3, 3}}, 1, 8},
  };
  for (const auto& [name, c, vh, vw] : tiled) s.tests.push_back({name, with_tile(conv_params(f, c), vh, vw)});
  // The default tile of a 7-row window (2x8, tile_of): odd sizes leave partial tiles.
  s.tests.push_back({"c2_13x19_7x7_pad3_bias_default_tile",
                     conv_params(f, {.B = 2, .C = 2, .size = {13, 19}, .k = {7, 7}, .pad = {3, 3}, .bias = true})});
  {
    auto p = with_tile(conv_params(f, std::get<1>(tiled[0])), 1, 8);
    p["minb"] = 6;  // launch_bounds(256, 6)
    s.tests.push_back({"c3_16x16_3x3_pad1_bias_t1x8_minb6", p});
  }
  // Halo columns by shuffle: tiles of 8 and 4 columns, rows of 2 to 7 tiles (warps span rows and planes), tails,
  // bias, a 5x5 window (two halo columns each side).
  for (const auto& [name, c, vh, vw] : std::vector<std::tuple<std::string, ConvCase, std::int64_t, std::int64_t>>{
           {"c5_9x16_3x3_pad1_bias_t1x8_shfl",
            {.B = 3, .C = 5, .size = {9, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            1,
            8},
           {"c3_11x56_3x3_pad1_t2x8_shfl", {.B = 2, .C = 3, .size = {11, 56}, .k = {3, 3}, .pad = {1, 1}}, 2, 8},
           {"c4_7x20_5x5_pad2_t2x4_shfl", {.B = 1, .C = 4, .size = {7, 20}, .k = {5, 5}, .pad = {2, 2}}, 2, 4},
           {"c6_6x24_3x3_pad1_t1x8_shfl", {.B = 2, .C = 6, .size = {6, 24}, .k = {3, 3}, .pad = {1, 1}}, 1, 8},
           // 16 columns per tile over rows of 56: a half-full last tile
           {"c3_9x56_3x3_pad1_t1x16_shfl", {.B = 2, .C = 3, .size = {9, 56}, .k = {3, 3}, .pad = {1, 1}}, 1, 16}}) {
    auto p = with_tile(conv_params(f, c), vh, vw);
    p["shfl"] = 1;
    p["preload"] = 1;
    s.tests.push_back({name, p});
  }
  // Each path of the row loop (rows preloaded or loaded under their branch) with both windows.
  {
    auto p = with_tile(conv_params(f, std::get<1>(tiled[0])), 2, 8);
    p["preload"] = 0;
    s.tests.push_back({"c3_16x16_3x3_pad1_bias_t2x8_nopreload", p});
    p = with_tile(conv_params(f, std::get<1>(tiled[2])), 2, 8);
    p["preload"] = 1;
    s.tests.push_back({"c2_13x13_7x7_pad3_b2_t2x8_preload", p});
  }
  // Tall tiles with rows loaded 1 and 2 rows ahead of their arithmetic, halos by shuffle or loads:
  // partial row tiles, 7x7, bias.
  for (const auto& [name, c, vh, ahead, shfl] :
       std::vector<std::tuple<std::string, ConvCase, std::int64_t, std::int64_t, std::int64_t>>{
           {"c3_19x56_3x3_pad1_bias_t8x8_ahead1_shfl",
            {.B = 2, .C = 3, .size = {19, 56}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            8,
            1,
            1},
           {"c2_13x16_7x7_pad3_t6x8_ahead2", {.B = 2, .C = 2, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}}, 6, 2, 0},
           {"c3_21x24_3x3_pad1_t16x8_ahead2_shfl",
            {.B = 1, .C = 3, .size = {21, 24}, .k = {3, 3}, .pad = {1, 1}},
            16,
            2,
            1}}) {
    auto p = with_tile(conv_params(f, c), vh, 8);
    p["preload"] = 1;
    p["ahead"] = ahead;
    p["shfl"] = shfl;
    s.tests.push_back({name, p});
  }
  // One plane per work-group in shared memory: scalar rows (W odd), 16-byte rows with a partial
  // tile row, two rounds of tiles per work-group (392 tiles of 1x8), stride, dilation, no padding,
  // 7x7, bias, several planes.
  for (const auto& [name, c, vh, vw] : std::vector<std::tuple<std::string, ConvCase, std::int64_t, std::int64_t>>{
           {"c3_7x9_3x3_pad1_bias_smem_t2x8",
            {.B = 1, .C = 3, .size = {7, 9}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            2,
            8},
           {"c3_11x56_3x3_pad1_smem_t2x8", {.B = 2, .C = 3, .size = {11, 56}, .k = {3, 3}, .pad = {1, 1}}, 2, 8},
           {"c2_56x56_3x3_pad1_bias_smem_t1x8",
            {.B = 1, .C = 2, .size = {56, 56}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            1,
            8},
           {"kh3_kw5_s2x1_p1x2_batch2_smem_t2x4",
            {.B = 2, .C = 8, .size = {15, 17}, .k = {3, 5}, .stride = {2, 1}, .pad = {1, 2}},
            2,
            4},
           {"c3_16x32_3x5_s2_p1x2_smem_t2x8",
            {.B = 2, .C = 3, .size = {16, 32}, .k = {3, 5}, .stride = {2, 2}, .pad = {1, 2}},
            2,
            8},
           {"d2x3_p2x3_batch2_smem_t2x8",
            {.B = 2, .C = 5, .size = {12, 24}, .k = {3, 3}, .pad = {2, 3}, .dil = {2, 3}},
            2,
            8},
           {"k2x4_s2_nopad_smem_t1x4", {.B = 1, .C = 2, .size = {9, 16}, .k = {2, 4}, .stride = {2, 2}}, 1, 4},
           {"c2_13x16_7x7_pad3_bias_smem_t2x8",
            {.B = 2, .C = 2, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            2,
            8}}) {
    auto p = with_tile(conv_params(f, c), vh, vw);
    p["smem"] = 1;
    s.tests.push_back({name, p});
  }
  // The staged plane's outputs through its buffer (os): partial tiles in both axes with bias (13 x 19 outputs of 7x7
  // tiles), rows of 16-byte vectors (7x7 tiles of 14 x 28, 8 per row: whole rows per round), Q odd (scalar chunks),
  // a stride with 7x8 tiles, and five images three per work-group through two buffers (a buffer reused: its border
  // restored; the last work-group with one image past the batch); two buffers whose plane (25 rows of 26 elements:
  // 4-byte copies) ends off a 16-byte boundary while the stage leaves in 16-byte rows (the second buffer 16-byte
  // aligned: plane_buffer_stride; a shape the random sweep found misaligned, docs/performance.md s38).
  for (const auto& [name, c, vh, vw, imgs] : std::vector<std::tuple<std::string, ConvCase, int, int, int>>{
           {"c2_13x19_7x7_pad3_bias_smem_os_t7x7",
            {.B = 2, .C = 2, .size = {13, 19}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            7,
            7,
            0},
           {"c3_14x28_7x7_pad3_smem_os_t7x7", {.B = 1, .C = 3, .size = {14, 28}, .k = {7, 7}, .pad = {3, 3}}, 7, 7, 0},
           {"c2_9x15_3x5_pad1x2_smem_os_t2x8", {.B = 1, .C = 2, .size = {9, 15}, .k = {3, 5}, .pad = {1, 2}}, 2, 8, 0},
           {"c2_20x32_5x5_s2_pad2_smem_os_t7x8",
            {.B = 1, .C = 2, .size = {20, 32}, .k = {5, 5}, .stride = {2, 2}, .pad = {2, 2}},
            7,
            8,
            0},
           {"c3_14x28_7x7_pad3_b5_imgs3_async_smem_os_t7x7",
            {.B = 5, .C = 3, .size = {14, 28}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            7,
            7,
            3},
           {"c4_18x14_5x5_pad2x3_b3_imgs2_async_smem_os_t7x7",
            {.B = 3, .C = 4, .size = {18, 14}, .k = {5, 5}, .pad = {2, 3}, .bias = true},
            7,
            7,
            2}}) {
    auto p = with_tile(conv_params(f, c), vh, vw);
    p["smem"] = 1;
    p["os"] = 1;
    if (imgs) {
      p["async"] = 1;
      p["imgs"] = imgs;
    }
    s.tests.push_back({name, p});
  }
  // The staged plane with halo columns by shuffle: rows of 2 to 7 tiles (warps span rows), two
  // rounds of tiles (392 tiles of 1x8; the second partial), bias, a 5x5 window, several planes,
  // and with asynchronous copies of several images.
  for (const auto& [name, c, vh, vw, imgs] : std::vector<std::tuple<std::string, ConvCase, int, int, int>>{
           {"c3_11x56_3x3_pad1_smem_shfl_t2x8",
            {.B = 2, .C = 3, .size = {11, 56}, .k = {3, 3}, .pad = {1, 1}},
            2,
            8,
            0},
           {"c2_56x56_3x3_pad1_bias_smem_shfl_t1x8",
            {.B = 1, .C = 2, .size = {56, 56}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            1,
            8,
            0},
           {"c5_9x16_3x3_pad1_bias_smem_shfl_t1x8",
            {.B = 3, .C = 5, .size = {9, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            1,
            8,
            0},
           {"c4_7x20_5x5_pad2_smem_shfl_t2x4", {.B = 1, .C = 4, .size = {7, 20}, .k = {5, 5}, .pad = {2, 2}}, 2, 4, 0},
           {"c3_11x56_3x3_pad1_b5_imgs2_async_smem_shfl_t2x8",
            {.B = 5, .C = 3, .size = {11, 56}, .k = {3, 3}, .pad = {1, 1}},
            2,
            8,
            2}}) {
    auto p = with_tile(conv_params(f, c), vh, vw);
    p["smem"] = 1;
    p["shfl"] = 1;
    if (imgs) {
      p["imgs"] = imgs;
      p["async"] = 1;
    }
    s.tests.push_back({name, p});
  }
  // Tensor cores (f16/bf16; the f32 runs take the tiled kernel): odd sizes (partial bands and
  // column groups, Q odd: stores per element), even padding (s = 0), kh != kw, 7x7, 1x1, bias,
  // more tiles than warps (several rounds), several planes.
  for (const auto& [name, c] : std::vector<std::pair<std::string, ConvCase>>{
           {"c3_7x9_3x3_pad1_bias_mma", {.B = 1, .C = 3, .size = {7, 9}, .k = {3, 3}, .pad = {1, 1}, .bias = true}},
           {"c3_21x56_3x3_pad1_mma", {.B = 2, .C = 3, .size = {21, 56}, .k = {3, 3}, .pad = {1, 1}}},
           {"c2_40x72_3x3_pad1_bias_mma", {.B = 1, .C = 2, .size = {40, 72}, .k = {3, 3}, .pad = {1, 1}, .bias = true}},
           {"c2_13x16_7x7_pad3_bias_mma", {.B = 2, .C = 2, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true}},
           {"c2_10x20_5x4_pad2x2_mma", {.B = 1, .C = 2, .size = {10, 20}, .k = {5, 4}, .pad = {2, 2}}},
           {"c4_6x11_2x8_pad0x4_mma", {.B = 1, .C = 4, .size = {6, 11}, .k = {2, 8}, .pad = {0, 4}}},
           {"1x1_batch2_mma", {.B = 2, .C = 3, .size = {4, 5}, .k = {1, 1}}}}) {
    auto p = conv_params(f, c);
    p["mma"] = 1;
    p["rp"] = 0;  // the tuned schedule's 16 x 8 tiles (row pairs: the rp cases below)
    s.tests.push_back({name, p});
  }
  {
    auto p = conv_params(f, {.B = 5, .C = 3, .size = {9, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true});
    p["mma"] = 1;
    p["imgs"] = 2;
    s.tests.push_back({"c3_9x16_3x3_pad1_bias_b5_imgs2_mma", p});
    // Fewer warps than tiles: several rounds per warp, their mma chains interleaved (the last round clamped).
    p.erase("imgs");
    p["mw"] = 1;
    s.tests.push_back({"c3_9x16_3x3_pad1_bias_b5_mw1_mma", p});
  }
  {
    // 3 bands x 5 column groups = 15 tiles on 4 warps: the last round is clamped (its stores skipped).
    auto p = conv_params(f, {.B = 3, .C = 2, .size = {37, 34}, .k = {7, 7}, .pad = {3, 3}, .bias = true});
    p["mma"] = 1;
    p["mw"] = 4;
    s.tests.push_back({"c2_37x34_7x7_pad3_bias_b3_mw4_mma", p});
    p["async"] = 1;
    p["imgs"] = 2;
    s.tests.push_back({"c2_37x34_7x7_pad3_bias_b3_mw4_imgs2_async_mma", p});
    // The tuned schedule with every tile's load_matrix of a tap row first (a plane of 2 x 3 tiles: 2 rounds on 4
    // warps, the last clamped). (minb's launch bounds for it: a unit test, test_conv_kernels.cpp.)
    auto q = conv_params(f, {.B = 3, .C = 2, .size = {19, 20}, .k = {7, 7}, .pad = {3, 3}, .bias = true});
    q["mma"] = 1;
    q["lmfirst"] = 1;
    s.tests.push_back({"c2_19x20_7x7_pad3_bias_b3_lmfirst_mma", q});
  }
  {
    // Outputs through shared memory (os; the default for windows under 5 rows where P * Q % 8 == 0, named here for a
    // 7x7 window): three planes per work-group through the two asynchronous buffers (ys reused per plane, the last
    // plane past the batch). (The 7x7 cases above store from the fragments, the path of os = 0.)
    auto p = conv_params(f, {.B = 5, .C = 2, .size = {16, 24}, .k = {7, 7}, .pad = {3, 3}, .bias = true});
    p["mma"] = 1;
    p["mw"] = 4;
    p["async"] = 1;
    p["imgs"] = 3;
    p["os"] = 1;
    s.tests.push_back({"c2_16x24_7x7_pad3_bias_b5_imgs3_async_os_mma", p});
  }
  // A fragments by load_matrix (the plane shifted so that A's rows are 16-byte aligned, narrower copies): the tuned
  // schedule, one synchronous plane with several rounds, a 5-wide and an 8-wide window, odd rows (scalar copies).
  for (const auto& [name, c, mw] : std::vector<std::tuple<std::string, ConvCase, int>>{
           {"c2_37x34_7x7_pad3_bias_b5_lm_mma",
            {.B = 5, .C = 2, .size = {37, 34}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            0},
           {"c3_9x16_3x3_pad1_b2_mw1_lm_mma", {.B = 2, .C = 3, .size = {9, 16}, .k = {3, 3}, .pad = {1, 1}}, 1},
           {"c2_10x20_5x5_pad2_b3_lm_mma", {.B = 3, .C = 2, .size = {10, 20}, .k = {5, 5}, .pad = {2, 2}}, 0},
           {"c2_6x11_2x8_pad0x4_lm_mma", {.B = 1, .C = 2, .size = {6, 11}, .k = {2, 8}, .pad = {0, 4}}, 2},
           {"c2_13x17_7x7_pad3_b2_lm_mma", {.B = 2, .C = 2, .size = {13, 17}, .k = {7, 7}, .pad = {3, 3}}, 0}}) {
    auto p = conv_params(f, c);
    p["mma"] = 1;
    p["lm"] = 1;
    if (mw) p["mw"] = mw;
    s.tests.push_back({name, p});
  }
  // Row-pair tiles (rp): odd P (a last pair half outside), Q over 64 (a second strip of one group), Q odd (stores per
  // element), kh != kw, an 8-wide window, 1x1, bias; the tuned schedule (8 images through two buffers: B = 9 leaves the
  // second work-group one image and 7 past the batch), one warp with several bands (rounds) and 3 pairs interleaved,
  // more warps than bands (clamped rounds), the output stage.
  for (const auto& [name, c, extra] : std::vector<std::tuple<std::string, ConvCase, Params>>{
           {"c2_13x16_7x7_pad3_bias_rp",
            {.B = 2, .C = 2, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"imgs", 1}}},
           {"c3_21x72_3x3_pad1_rp", {.B = 1, .C = 3, .size = {21, 72}, .k = {3, 3}, .pad = {1, 1}}, {{"imgs", 1}}},
           {"c2_9x17_5x4_pad2_rp", {.B = 2, .C = 2, .size = {9, 17}, .k = {5, 4}, .pad = {2, 2}}, {{"imgs", 1}}},
           {"c4_6x11_2x8_pad0x4_rp", {.B = 1, .C = 4, .size = {6, 11}, .k = {2, 8}, .pad = {0, 4}}, {{"imgs", 1}}},
           {"1x1_batch2_rp", {.B = 2, .C = 3, .size = {4, 5}, .k = {1, 1}}, {{"imgs", 1}}},
           {"c2_19x24_7x7_pad3_bias_b9_rp_tuned",
            {.B = 9, .C = 2, .size = {19, 24}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {}},
           {"c3_23x16_3x3_pad1_b2_rp_mw1_il3",
            {.B = 2, .C = 3, .size = {23, 16}, .k = {3, 3}, .pad = {1, 1}},
            {{"mw", 1}, {"il", 3}}},
           {"c2_5x40_3x3_pad1_b3_rp_mw8", {.B = 3, .C = 2, .size = {5, 40}, .k = {3, 3}, .pad = {1, 1}}, {{"mw", 8}}},
           {"c2_14x24_3x3_pad1_bias_b5_rp_os",
            {.B = 5, .C = 2, .size = {14, 24}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"os", 1}}},
           // rows loaded in pairs (lq 0; the default, 1, loads them in A's register order: every case above) and
           // every row's A (lq 2): odd kh with bias, the tuned schedule, partial bands
           {"c2_13x16_7x7_pad3_bias_rp_lq0",
            {.B = 2, .C = 2, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"imgs", 1}, {"lq", 0}}},
           {"c2_11x16_5x5_pad2_bias_b2_rp_lq2",
            {.B = 2, .C = 2, .size = {11, 16}, .k = {5, 5}, .pad = {2, 2}, .bias = true},
            {{"lq", 2}}}}) {
    auto p = conv_params(f, c);
    p["mma"] = 1;
    p["rp"] = 1;
    for (const auto& [key, v] : extra) p[key] = v;
    s.tests.push_back({name, p});
  }
  // The staged-plane kernel with asynchronous copies (every dtype): one image per group, several
  // with a partial last group, strides and dilations, a partial tile row, 7x7.
  for (const auto& [name, c, vh, vw, imgs] : std::vector<std::tuple<std::string, ConvCase, int, int, int>>{
           {"c3_7x16_3x3_pad1_bias_b3_imgs1_async_smem_t2x8",
            {.B = 3, .C = 3, .size = {7, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            2,
            8,
            1},
           {"c3_11x56_3x3_pad1_b5_imgs2_async_smem_t2x8",
            {.B = 5, .C = 3, .size = {11, 56}, .k = {3, 3}, .pad = {1, 1}},
            2,
            8,
            2},
           {"c2_16x32_3x5_s2_p1x2_b7_imgs3_async_smem_t2x8",
            {.B = 7, .C = 2, .size = {16, 32}, .k = {3, 5}, .stride = {2, 2}, .pad = {1, 2}},
            2,
            8,
            3},
           {"d2x3_p2x3_b4_imgs4_async_smem_t1x8",
            {.B = 4, .C = 2, .size = {12, 24}, .k = {3, 3}, .pad = {2, 3}, .dil = {2, 3}},
            1,
            8,
            4},
           {"c2_13x16_7x7_pad3_bias_b3_imgs2_async_smem_t2x8",
            {.B = 3, .C = 2, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            2,
            8,
            2}}) {
    auto p = with_tile(conv_params(f, c), vh, vw);
    p["smem"] = 1;
    p["imgs"] = imgs;
    p["async"] = 1;
    s.tests.push_back({name, p});
  }
  // Asynchronous copies through two buffers: one image per group (one buffer), several with a
  // partial last group (images past the batch), 7x7, odd sizes (partial bands, Q odd).
  for (const auto& [name, c, imgs] : std::vector<std::tuple<std::string, ConvCase, int>>{
           {"c3_9x16_3x3_pad1_bias_b5_imgs1_async_mma",
            {.B = 5, .C = 3, .size = {9, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            1},
           {"c3_9x16_3x3_pad1_b5_imgs2_async_mma", {.B = 5, .C = 3, .size = {9, 16}, .k = {3, 3}, .pad = {1, 1}}, 2},
           {"c2_21x24_3x3_pad1_b7_imgs3_async_mma", {.B = 7, .C = 2, .size = {21, 24}, .k = {3, 3}, .pad = {1, 1}}, 3},
           {"c2_13x10_7x7_pad3_bias_b4_imgs4_async_mma",
            {.B = 4, .C = 2, .size = {13, 10}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            4},
           {"c3_17x6_5x3_pad2x1_b6_imgs4_async_mma",
            {.B = 6, .C = 3, .size = {17, 6}, .k = {5, 3}, .pad = {2, 1}},
            4}}) {
    auto p = conv_params(f, c);
    p["mma"] = 1;
    p["imgs"] = imgs;
    p["async"] = 1;
    s.tests.push_back({name, p});
  }
  // Bench: the first case per shape is the default; the variants let one GPU run compare (docs/performance.md
  // s2-s4).
  auto variant = [&](const ConvCase& c, const std::string& shape, int vh, int vw, int preload) {
    auto p = with_tile(conv_params(f, c), vh, vw);
    p["preload"] = preload;
    p["shfl"] = 0;  // (the f32 default exchanges halos where it can)
    s.bench.push_back({"N32_C384_56x56_" + shape + "_t" + std::to_string(vh) + "x" + std::to_string(vw) +
                           (preload ? "_pre" : "_nopre"),
                       p});
  };
  variant(b3, "3x3", 1, 8, 0);
  variant(b3, "3x3", 2, 8, 1);  // the tiled kernel's 16-bit tile (the 16-bit default is the tensor-core kernel, s18)
  // Halo by shuffle (the f32 default is 1x8 with it, s5).
  for (const int vh : {1, 2}) {
    auto p = with_tile(conv_params(f, b3), vh, 8);
    p["shfl"] = 1;
    s.bench.push_back({"N32_C384_56x56_3x3_t" + std::to_string(vh) + "x8_pre_shfl", p});
    if (vh != 2) continue;
    p["minb"] = 5;  // launch_bounds(256, 5): at most 51 registers (60 uncapped)
    s.bench.push_back({"N32_C384_56x56_3x3_t2x8_pre_shfl_minb5", p});
  }
  // Column-group probe (docs/performance.md s22): 64-column planes fill the row-pair tiles' 8 column groups, where
  // 56 columns leave the 8th computed and thrown away; the same mma count for 14% more bytes says whether the tensor
  // pipe or the bytes set the 7x7's time.
  for (const auto& [c, shape] : std::vector<std::pair<ConvCase, std::string>>{{b3, "3x3"}, {b7, "7x7"}}) {
    ConvCase w = c;
    w.size = {56, 64};
    s.bench.push_back({"N32_C384_56x64_" + shape, conv_params(f, w)});
  }
  // Fixed cost probe (as depthwise_conv2d_nhwc's): the 3x3 default at other batch sizes, the time per image against
  // the intercept.
  for (const int n : {28, 36}) {
    ConvCase c = b3;
    c.B = n;
    s.bench.push_back({"N" + std::to_string(n) + "_C384_56x56_3x3", conv_params(f, c)});
  }
  // Tensor cores (the 7x7 16-bit default) for 3x3, and with 4 images per work-group, synchronously (names imgs: not
  // the tuned schedule, mma_tuned).
  for (const auto& [c, shape] : std::vector<std::pair<ConvCase, std::string>>{{b3, "3x3"}, {b7, "7x7"}}) {
    auto p = conv_params(f, c);
    p["mma"] = 1;
    p["imgs"] = 4;
    s.bench.push_back({"N32_C384_56x56_" + shape + "_mma_imgs4", p});
    // The planes copied asynchronously (one buffer).
    p["async"] = 1;
    p["imgs"] = 1;
    s.bench.push_back({"N32_C384_56x56_" + shape + "_mma_async_imgs1", p});
    // Fewer warps per work-group (more rounds of interleaved mma chains per warp, more work-groups per SM), alone and
    // with the next plane copied during this one's products.
    // The tuned schedule (mma_tuned: 4 warps, load_matrix, 4 images through two buffers), the 7x7 default.
    if (shape == "3x3") {  // (16 x 8 tiles; the default is row pairs, s18)
      auto q = conv_params(f, c);
      q["mma"] = 1;
      q["rp"] = 0;
      s.bench.push_back({"N32_C384_56x56_3x3_mma", q});
    }
    // (Naming mw, async or imgs leaves lm at 0: {4, 4} is the tuned schedule without load_matrix; {0, 0}: 7 warps, one
    // synchronous plane, the schedule before s12.)
    for (const auto& [mw, imgs] : std::vector<std::pair<int, int>>{{0, 0}, {4, 0}, {2, 0}, {4, 2}, {4, 4}, {2, 4}}) {
      auto q = conv_params(f, c);
      q["mma"] = 1;
      if (mw) q["mw"] = mw;
      q["async"] = imgs ? 1 : 0;
      q["imgs"] = imgs ? imgs : 1;
      s.bench.push_back({"N32_C384_56x56_" + shape + "_mma_mw" + std::to_string(mw) +
                             (imgs ? "_async_imgs" + std::to_string(imgs) : "_sync1"),
                         q});
    }
  }
  // The tuned 7x7 schedule with every tile's load_matrix of a tap row first, and with registers capped for 8
  // work-groups per SM (64 registers against 76): neither faster (docs/performance.md s14).
  {
    auto q = conv_params(f, b7);
    q["mma"] = 1;
    q["lmfirst"] = 1;
    s.bench.push_back({"N32_C384_56x56_7x7_mma_lmfirst", q});
    q.erase("lmfirst");
    q["rp"] = 0;
    q["minb"] = 8;
    s.bench.push_back({"N32_C384_56x56_7x7_mma_minb8", q});
  }
  // The tuned tensor-core schedule of 16 x 8 tiles with its outputs stored directly from the fragments (os = 0; s17),
  // 7x7 and 3x3.
  for (const auto& [c, shape] : std::vector<std::pair<ConvCase, std::string>>{{b7, "7x7"}, {b3, "3x3"}}) {
    auto q = conv_params(f, c);
    q["mma"] = 1;
    q["rp"] = 0;
    q["os"] = 0;
    s.bench.push_back({"N32_C384_56x56_" + shape + "_mma_os0", q});
  }
  // The 7x7 schedule with os (not its default: 95 registers), alone and with registers capped for 6 work-groups.
  {
    auto q = conv_params(f, b7);
    q["mma"] = 1;
    q["rp"] = 0;
    q["os"] = 1;
    s.bench.push_back({"N32_C384_56x56_7x7_mma_os1", q});
    q["minb"] = 6;
    s.bench.push_back({"N32_C384_56x56_7x7_mma_os1_minb6", q});
  }
  // Row-pair tiles (rp; the 16-bit default, s18) in the tuned schedule: 2 rows x 64 columns per
  // mma, each layout row loaded once per band (7x7: 1 load_matrix per 7 mma against 7), il pairs side by side, 2 / 4 /
  // 8 warps (bands of 14 / 7 / 4 pairs), 2 / 4 / 8 / 16 images per work-group (also with il 3), with the output stage
  // (os 1) and without (os 0); -1: the default (os 1 for 7x7, 0 for 3x3, s24).
  for (const auto& [c, shape] : std::vector<std::pair<ConvCase, std::string>>{{b7, "7x7"}, {b3, "3x3"}}) {
    for (const auto& [mw, imgs, il, os] : std::vector<std::tuple<int, int, int, int>>{{0, 0, 0, -1},
                                                                                      {0, 0, 1, -1},
                                                                                      {0, 0, 2, -1},
                                                                                      {0, 0, 3, -1},
                                                                                      {0, 0, 4, -1},
                                                                                      {2, 4, 0, -1},
                                                                                      {8, 4, 0, -1},
                                                                                      {4, 2, 0, -1},
                                                                                      {4, 4, 0, -1},
                                                                                      {4, 8, 0, -1},
                                                                                      {4, 16, 0, -1},
                                                                                      {4, 4, 3, -1},
                                                                                      {4, 16, 3, -1},
                                                                                      {0, 0, 0, 0},
                                                                                      {0, 0, 0, 1}}) {
      auto q = conv_params(f, c);
      q["mma"] = 1;
      q["rp"] = 1;
      std::string name = "N32_C384_56x56_" + shape + "_mma_rp";
      if (mw) {
        q["mw"] = mw;
        q["async"] = 1;  // (naming mw leaves the tuned schedule: name its planes)
        q["imgs"] = imgs;
        name += "_mw" + std::to_string(mw) + "_imgs" + std::to_string(imgs);
      }
      if (il) {
        q["il"] = il;
        name += "_il" + std::to_string(il);
      }
      if (os >= 0) {
        q["os"] = os;
        name += "_os" + std::to_string(os);
      }
      s.bench.push_back({name, q});
    }
    // How the rows are loaded (lq 0: pairs; 1: pairs in A's register order, the default, s20; 2: every row's A).
    for (const int lq : {0, 2}) {
      auto q = conv_params(f, c);
      q["mma"] = 1;
      q["rp"] = 1;
      q["lq"] = lq;
      s.bench.push_back({"N32_C384_56x56_" + shape + "_mma_rp_lq" + std::to_string(lq), q});
    }
  }
  // One plane per work-group in shared memory.
  for (const auto& [c, shape, vh] : std::vector<std::tuple<ConvCase, std::string, int>>{
           {b3, "3x3", 1}, {b3, "3x3", 2}, {b3, "3x3", 4}, {b7, "7x7", 2}}) {
    auto p = with_tile(conv_params(f, c), vh, 8);
    p["smem"] = 1;
    s.bench.push_back({"N32_C384_56x56_" + shape + "_t" + std::to_string(vh) + "x8_smem", p});
    if (shape == "3x3" && vh <= 2) {  // halo columns by shuffle from the staged rows
      auto q = p;
      q["shfl"] = 1;
      s.bench.push_back({"N32_C384_56x56_3x3_t" + std::to_string(vh) + "x8_smem_shfl", q});
    }
    // Four images' planes through two buffers, copied asynchronously (s7: an option).
    if (shape != "3x3" || vh != 2) continue;
    p["async"] = 1;
    p["imgs"] = 4;
    s.bench.push_back({"N32_C384_56x56_3x3_t2x8_smem_async_imgs4", p});
  }
  // Tall tiles, rows loaded `ahead` rows ahead of their arithmetic, halos by shuffle (minb: register cap; s4, s6:
  // refuted, kept for comparison).
  for (const auto& [vh, ahead, shfl, minb] : std::vector<std::tuple<int, int, int, int>>{{4, 1, 1, 0},
                                                                                         {4, 2, 1, 0},
                                                                                         {4, 2, 1, 4},
                                                                                         {8, 1, 1, 0},
                                                                                         {8, 2, 1, 0},
                                                                                         {14, 2, 1, 0},
                                                                                         {8, 2, 0, 0},
                                                                                         {8, 1, 1, 4},
                                                                                         {4, 1, 0, 0}}) {
    auto p = with_tile(conv_params(f, b3), vh, 8);
    p["preload"] = 1;
    p["ahead"] = ahead;
    p["shfl"] = shfl;
    if (minb) p["minb"] = minb;
    s.bench.push_back({"N32_C384_56x56_3x3_t" + std::to_string(vh) + "x8_ahead" + std::to_string(ahead) +
                           (shfl ? "_shfl" : "") + (minb ? "_minb" + std::to_string(minb) : ""),
                       p});
  }
  // f32 7x7 (docs/performance.md s19): taller tiles from global memory and from a staged plane (VH x 8, 7 x 14), and
  // the 7x8 plane with four images through two buffers.
  for (const auto& [vh, vw, smem, imgs] : std::vector<std::tuple<int, int, int, int>>{{4, 8, 0, 0},
                                                                                      {7, 8, 0, 0},
                                                                                      {4, 8, 1, 0},
                                                                                      {7, 8, 1, 0},
                                                                                      {8, 8, 1, 0},
                                                                                      {7, 14, 1, 0},
                                                                                      {7, 8, 1, 4},
                                                                                      {7, 7, 1, 0},
                                                                                      {7, 7, 1, 2},
                                                                                      {7, 7, 2, 0},
                                                                                      {7, 8, 2, 0},
                                                                                      {4, 8, 2, 0},
                                                                                      {7, 7, 2, 2}}) {
    auto p = with_tile(conv_params(f, b7), vh, vw);
    p["preload"] = 0;
    std::string name = "N32_C384_56x56_7x7_t" + std::to_string(vh) + "x" + std::to_string(vw);
    if (smem) {  // 2: with the output stage
      p["smem"] = 1;
      name += "_smem";
      if (smem == 2) {
        p["os"] = 1;
        name += "_os";
      }
    }
    if (imgs) {
      p["async"] = 1;
      p["imgs"] = imgs;
      name += "_async_imgs" + std::to_string(imgs);
    }
    s.bench.push_back({name, p});
  }
  variant(b3, "3x3", 1, 8, 1);
  variant(b3, "3x3", 2, 8, 0);
  variant(b7, "7x7", 1, 8, 0);
  variant(b7, "7x7", 2, 8, 0);  // the tiled kernel's 16-bit 7x7 tile (the default is the tensor-core kernel, s6)
  s.build = [f](DType t, const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    sp.check_batch(static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "B"), 0)));
    const auto tile = tile_of(t, sp, p);
    (void)plane_async(sp, tile, p);    // refuses async without the tensor-core or staged-plane kernel
    (void)mma_warps(tile, p);          // refuses mw without the tensor-core kernel
    (void)mma_load_matrix(tile, p);    // refuses lm without the tensor-core kernel
    (void)mma_lm_first(tile, p);       // refuses lmfirst without load_matrix
    (void)mma_row_pairs(sp, tile, p);  // refuses rp without the tensor-core kernel, il without rp
    return trace_typed(t, f.name, p, [&](auto tag, KernelBuilder& k) {
      using T = typename decltype(tag)::type;
      if constexpr (sizeof(T) == 2) {
        if (tile.mma) {
          // With minb, bounds of the work-group it launches (4 warps in the tuned schedule), so that the registers fit
          // minb of those work-groups per multiprocessor; without, 256 threads (ptxas gives the tuned 7x7 schedule 76
          // registers under those bounds, the ones measured, and 64 with 16 bytes spilled under 128-thread bounds).
          // Row pairs of windows of 5 or more rows default to minb 6: with their default output stage (os = 1) the
          // registers fit 6 work-groups per SM, where uncapped they fit fewer (docs/performance.md s24).
          const DepthwiseMmaOptions o = mma_options(sp, tile, p);
          Params bounds = p;
          if (o.rp && sp.ksize[0] >= 5 && !bounds.count("minb")) bounds["minb"] = 6;
          const std::uint32_t group =
              bounds.count("minb") ? depthwise_conv2d_mma_plan(sp, sizeof(T), o.warps, o.lm, o.rp).group() : 256u;
          apply_launch_bounds(k, bounds, group, true);
          return depthwise_conv2d_nchw_mma<T>(k, sp, o);
        }
      }
      // (shuffles and mma need declared bounds; minb of the staged-plane kernel counts its own work-groups)
      const std::uint32_t bounds_group =
          tile.smem && p.count("minb") ? depthwise_conv2d_smem_layout(sp, tile, sizeof(T)).group : 256u;
      apply_launch_bounds(k, p, bounds_group, tile.may_shuffle() || tile.mma);
      if (tile.smem) {
        depthwise_conv2d_nchw_smem<T>(k, sp, tile, mma_images(sp, tile, p), plane_async(sp, tile, p),
                                      smem_output_stage(tile, p));
      } else {
        depthwise_conv2d_nchw<T>(k, sp, tile);
      }
    });
  };
  s.geometry = [f](DType t, const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    const DepthwiseConv2dTile tile = tile_of(t, sp, p);
    const auto planes = static_cast<std::uint64_t>(param(p, "B")) * sp.in_channels;
    if (tile.mma) {
      const std::uint32_t group = depthwise_conv2d_mma_plan(sp, dtype_size(t), mma_warps(tile, p),
                                                            mma_load_matrix(tile, p), mma_row_pairs(sp, tile, p))
                                      .group();
      return runtime::grid_1d(
          depthwise_conv2d_mma_groups(sp, static_cast<std::uint64_t>(param(p, "B")), mma_images(sp, tile, p)) * group,
          group);
    }
    if (tile.smem) {
      const std::uint32_t group = depthwise_conv2d_smem_layout(sp, tile, dtype_size(t)).group;
      return runtime::grid_1d(depthwise_conv2d_smem_groups(sp, static_cast<std::uint64_t>(param(p, "B")),
                                                           mma_images(sp, tile, p), plane_async(sp, tile, p)) *
                                  group,
                              group);
    }
    return runtime::grid_1d(planes * depthwise_conv2d_nchw_tiles(sp, tile), 256);
  };
  route_wide_windows(s, f);  // (a large dilation: the direct kernel)
  r.add(std::move(s));
}

}  // namespace ingot::kernels
