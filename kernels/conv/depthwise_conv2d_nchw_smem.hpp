// kernels/conv/depthwise_conv2d_nchw_smem.hpp — depthwise 2-D convolution, NCHW, one (b, c)
// plane per work-group staged in shared memory (depthwise_conv2d with smem = 1).
//
// Work-group g takes plane g = b*C + c with G threads (DepthwiseSmemLayout::group). The plane is
// staged in a shared array with its zero border (plane_smem.hpp: every input element read from
// global memory once). After the barrier each thread computes VH x VW tiles t = local id + r*G
// (tiles as depthwise_conv2d_nchw.hpp: the same chunk layout of a tile row, tile_columns.hpp,
// read from the shared array without bounds, the border being zero), one input row at a time,
// and stores each output row after its last input row like that kernel.
// Against it: no input row is read from L2 once per tile row that needs it (a 2-row tile of a 3x3
// window reads 4 rows for 2), and the halo columns are shared-memory reads, not L1 wavefronts.
// With async (copy_async, ir.hpp): work-group g takes channel c = g % C of images
// (g / C) * images .. + images - 1, whose planes go through two buffers (for_planes_async: the
// next plane copied while this one is read, the weights and the border set up once).
// With os: every tile of the plane in one round, then the outputs through the plane's buffer (at a bank-friendly
// row stride) and out as 16-byte vectors (for tiles whose rows are not whole vectors: 7x7).
// Layout: the row stride with the fewest bank conflicts for the tiles' row reads (smem_banks.hpp), the plane copied
// in row-aligned rounds (plane_smem.hpp).
// Slower than the register kernel for 3x3 (shared-memory wavefronts and ~23 instructions per output;
// docs/performance.md s6), faster for f32 7x7 with 7x8 tiles (s19): the f32 default for windows of 5 or more rows where
// the plane fits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "depthwise_conv2d_nchw.hpp"
#include "direct_conv.hpp"
#include "ingot/dsl.hpp"
#include "plane_smem.hpp"
#include "smem_banks.hpp"
#include "tile_columns.hpp"
#include "vector_width.hpp"

namespace ingot::kernels {

// The staged plane and the work-group of the kernel (trace-time, from the spec and the tile).
struct DepthwiseSmemLayout {
  PlaneSmem plane;
  std::uint32_t wv = 1;     // compute chunk width (tile_columns.hpp Wv)
  std::uint32_t base = 0;   // a tile's columns are relative to cbase = ow0*SW - base (tile_columns.hpp)
  std::uint32_t group = 0;  // G: threads per work-group (a multiple of 32, at most 256)
  std::uint64_t tiles = 0;  // tiles per plane
  // The output stage (os): output (oh, ow) at oh * ows of the plane's buffer once every tile has read it, leaving as
  // vectors of ov elements; ows = 0 where it does not apply (more tiles than threads, or the outputs do not fit).
  std::uint32_t ows = 0, ov = 1;
};

// Throws std::invalid_argument (check_depthwise_conv2d_nchw's, or the padded plane exceeding kPlaneSmemBytes).
inline DepthwiseSmemLayout depthwise_conv2d_smem_layout(const ConvSpec& s, const DepthwiseConv2dTile& t,
                                                        std::size_t elem_bytes) {
  check_depthwise_conv2d_nchw(s, t);
  const auto es = static_cast<std::uint32_t>(elem_bytes);
  const auto P = static_cast<std::int64_t>(s.out_len(0)), Q = static_cast<std::int64_t>(s.out_len(1));
  const std::uint32_t H = s.in_size[0], Wd = s.in_size[1], KH = s.ksize[0], KW = s.ksize[1];
  const std::int64_t SH = s.stride[0], SW = s.stride[1], PH = s.pad[0], DH = s.dilation[0];
  const std::int64_t TH = (P + t.vh - 1) / t.vh, TW = (Q + t.vw - 1) / t.vw;
  DepthwiseSmemLayout L;
  L.wv = row_vector_width(es, t.vw, Wd);
  const TileColumns tc = tile_column_layout(t.vw, KW, s.stride[1], s.dilation[1], s.pad[1], L.wv, es);
  L.base = s.pad[1] + tc.shift;
  // columns: the first tile's first loaded one, the last tile's last; rows likewise
  const std::int64_t col_lo = static_cast<std::int64_t>(tile_first_loaded_column(tc)) - L.base;
  const std::int64_t col_hi = (TW - 1) * t.vw * SW + tile_last_loaded_column(tc) - L.base;
  const std::int64_t row_hi = (TH * t.vh - 1) * SH + static_cast<std::int64_t>(KH - 1) * DH - PH;
  L.plane =
      plane_smem_layout(s.name + ": smem = 1 (depthwise_conv2d)", H, Wd, elem_bytes, -PH, row_hi, col_lo, col_hi, L.wv);
  L.tiles = static_cast<std::uint64_t>(TH * TW);
  L.group = static_cast<std::uint32_t>(std::min<std::uint64_t>(256, (L.tiles + 31) / 32 * 32));
  // The row stride with the fewest bank conflicts for the tiles' row reads (a warp's 32 tiles span rows of tiles:
  // with 64 elements per row, 7-column tiles of 4 tile rows hit each bank 4 times; 72 makes it conflict-free), within
  // the shared-memory limit; copies in row-aligned rounds.
  const auto ws_max = static_cast<std::uint32_t>(kPlaneSmemBytes / (elem_bytes * L.plane.rows));
  const std::uint32_t ws = bank_friendly_row_stride(
      L.plane.ws, ws_max, std::max(L.plane.vc, L.wv), es, L.wv * es, L.tiles, static_cast<std::uint32_t>(TW),
      static_cast<std::uint64_t>(t.vh * SH), static_cast<std::uint64_t>(t.vw * SW));
  L.plane = with_row_stride(L.plane, ws, elem_bytes);
  L.plane.row_rounds = true;
  // The output stage: rows of whole vectors of ov (the widest of 16, 8 or 4 bytes dividing Q), the stride with the
  // fewest conflicts for the tiles' scalar stores.
  L.ov = row_vector_width(es, static_cast<std::uint32_t>(Q), static_cast<std::uint32_t>(Q));
  const auto q_vec = static_cast<std::uint32_t>((Q + L.ov - 1) / L.ov * L.ov);
  const auto ows_max = static_cast<std::uint32_t>(L.plane.elements() / static_cast<std::uint64_t>(P));
  if (L.tiles <= L.group && q_vec <= ows_max) {
    L.ows = bank_friendly_row_stride(q_vec, ows_max, L.ov, es, es, L.tiles, static_cast<std::uint32_t>(TW),
                                     static_cast<std::uint64_t>(t.vh), static_cast<std::uint64_t>(t.vw));
  }
  return L;
}

// Whether the staged-plane kernel takes spec s with tile t (its plane within kPlaneSmemBytes, the tile in range).
inline bool depthwise_conv2d_smem_fits(const ConvSpec& s, const DepthwiseConv2dTile& t, std::size_t elem_bytes) {
  try {
    (void)depthwise_conv2d_smem_layout(s, t, elem_bytes);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

// Work-groups for a batch of `batch` images: one per plane, or with async one per channel and `images` images one
// after another.
inline std::uint64_t depthwise_conv2d_smem_groups(const ConvSpec& s, std::uint64_t batch, std::uint32_t images,
                                                  bool async) {
  if (!async) return batch * s.in_channels;
  return static_cast<std::uint64_t>(s.in_channels) * ((batch + images - 1) / images);
}

template <class T>
void depthwise_conv2d_nchw_smem(dsl::KernelBuilder& k, const ConvSpec& s, const DepthwiseConv2dTile& tile,
                                std::uint32_t images = 1, bool async = false, bool output_stage = false) {
  using namespace ingot::dsl;
  const DepthwiseSmemLayout L = depthwise_conv2d_smem_layout(s, tile, sizeof(T));
  if (output_stage && L.ows == 0) {
    throw std::invalid_argument(s.name +
                                ": os = 1 (depthwise_conv2d smem) stages a plane's outputs in its buffer "
                                "after one round of tiles: it needs at most " +
                                std::to_string(L.group) + " tiles per plane (has " + std::to_string(L.tiles) +
                                ") and the outputs within the buffer; use os = 0 or a larger tile");
  }
  const auto u = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
  const std::uint32_t C = s.in_channels, H = s.in_size[0], Wd = s.in_size[1], P = u(s.out_len(0)), Q = u(s.out_len(1));
  const std::uint32_t KH = s.ksize[0], KW = s.ksize[1], SH = s.stride[0], SW = s.stride[1];
  const std::uint32_t PW = s.pad[1], DH = s.dilation[0], DW = s.dilation[1];
  const std::uint32_t VH = tile.vh, VW = tile.vw, TW = (Q + VW - 1) / VW, G = L.group;
  const std::uint32_t Wo = row_vector_width(sizeof(T), VW, Q);  // output vector width

  const auto prm = declare_dense_conv_params<T>(k, s);  // batch, x, w [C, kh, kw], bias, y
  const auto& batch = prm.io.batch;
  const auto& x = prm.io.x;
  const auto& y = prm.io.y;
  if (images < 1) throw std::invalid_argument(s.name + ": images per work-group must be >= 1");
  if (async && !plane_copies_async<T>(L.plane)) {
    throw std::invalid_argument(s.name + ": async = 1 (depthwise_conv2d smem) copies rows in vectors: rows of " +
                                std::to_string(Wd) + " elements admit none; use async = 0");
  }
  const std::uint32_t buffers = async && images > 1 ? 2 : 1;
  const std::uint64_t xs_elements = plane_buffers_elements(L.plane, sizeof(T), buffers);
  if (buffers > 1 && xs_elements * sizeof(T) > kPlaneSmemBytes) {
    throw std::invalid_argument(s.name + ": async = 1 with " + std::to_string(images) +
                                " images (depthwise_conv2d smem) stages two planes of " +
                                std::to_string(L.plane.bytes) + " bytes, more than " + std::to_string(kPlaneSmemBytes) +
                                " in all; use imgs = 1 or async = 0");
  }
  auto xs = k.shared<T>("xs", u(xs_elements));

  // Without async: group g takes plane g (a group past the planes, from a launch larger than the
  // geometry, takes plane 0's operands and stores nothing; every thread reaches the barrier). With async: channel
  // g % C, images (g / C) * images ...
  auto g = k.let("g", k.group_id(0));
  auto lid = k.let("lid", k.local_id(0));
  auto plane_ok = k.let("plane_ok", g < batch * C);
  auto c = async ? k.let("c", g % C) : k.let("c", select(plane_ok, g, 0u) % C);

  const auto weights = depthwise_channel_weights(k, prm, s, c);  // no structured binding: lambdas use them
  const std::vector<Val<f32>>& wv = weights.first;
  const Val<f32>& init = weights.second;

  // Halo columns by shuffle (tile.halo_shuffle On): lanes hold consecutive tiles of a round, so a
  // tile's narrow halo chunks are whole chunks of its neighbour lanes' rows (tile_columns.hpp
  // HaloExchange); every thread reaches every row read (the rounds clamp, they do not branch).
  std::optional<HaloExchange> hx;
  if (tile.halo_shuffle == DepthwiseConv2dTile::Shuffle::On) {
    const auto refuse = [&](const std::string& why) {
      throw std::invalid_argument(s.name + ": halo shuffle with smem = 1 (depthwise_conv2d_nchw_smem) " + why);
    };
    if (!halo_exchange_applies(tile_column_layout(VW, KW, SW, DW, PW, L.wv, sizeof(T)), PW, Wd, TW)) {
      refuse(
          "does not apply: it needs stride 1 along W, vector chunks and halo columns outside the row for its "
          "first and last tiles (padding >= the halo); use shfl = 0");
    }
    if (k.kernel().bounds.max_group_threads % ir::kShuffleGroupMultiple != 0 || !k.kernel().bounds.max_group_threads) {
      refuse("needs launch bounds of a multiple of 32 threads");
    }
    hx = HaloExchange{k.let("lane", lid % kHaloLanes)};
  }

  // The tiles of one plane from xs[buf ..) (input row ih = oh0*SH - PH + rr at layout row
  // oh0*SH + rr); live_plane says whether its stores happen.
  const auto uses = tile_row_uses(VH, KH, SH, DH);
  const std::uint32_t tiles = u(L.tiles);
  const auto plane_tiles = [&](const Val<bool>& live_plane, const Val<u32>& y_plane, const Val<u32>& buf) {
    for_group_rounds(k, lid, G, tiles, "t", false, [&](const Val<u32>& t, std::uint32_t r) {
      const std::string rt = "r" + std::to_string(r) + "_";
      Val<bool> live = live_plane;
      if ((r + 1) * G > tiles) live = k.let(rt + "live", live_plane && lid + r * G < tiles);
      auto oh0 = k.let(rt + "oh0", (t / TW) * VH);
      auto ow0 = k.let(rt + "ow0", (t % TW) * VW);
      TileColumns tc = tile_column_layout(VW, KW, SW, DW, PW, L.wv, sizeof(T));
      const std::vector<int> from = hx ? halo_sources(tc) : std::vector<int>(tc.chunks(), 0);
      for (std::uint32_t ch = 0; ch < tc.chunks(); ++ch) {
        if (!tc.used[ch]) continue;
        tc.idx[ch] = k.let(rt + "cx" + std::to_string(ch), ow0 * SW + (L.plane.off - L.base + ch * L.wv));
        // An exchanged halo chunk of a row's first or last tile comes from a lane holding another
        // row's tile: it reads 0 where its columns lie outside the row (the border's zeros).
        if (from[ch] != 0) {
          const auto col =
              cast<i32>(ow0 * SW) - static_cast<std::int32_t>(L.base) + static_cast<std::int32_t>(ch * L.wv);
          tc.ok[ch] = k.let(rt + "cok" + std::to_string(ch), cast<u32>(col) < Wd);  // negative wraps past W
        }
      }
      std::vector<std::vector<Var<f32>>> acc(VH);
      for (std::uint32_t i = 0; i < VH; ++i) {
        acc[i].reserve(VW);  // a reallocation would copy (re-declare) the variables
        for (std::uint32_t j = 0; j < VW; ++j)
          acc[i].emplace_back(k, init, "acc" + std::to_string(i) + "_" + std::to_string(j));
      }
      std::optional<Val<bool>> cols_full;
      if (Q % VW != 0) cols_full = k.let(rt + "cols_full", ow0 + VW <= Q);
      for (std::uint32_t rr = 0; rr < uses.size(); ++rr) {
        if (uses[rr].empty()) continue;
        auto row_at = k.let(rt + "xr" + std::to_string(rr), (oh0 * SH + rr) * L.plane.ws + buf);
        const auto xrow = load_tile_row(k, xs, row_at, tc, rt + std::to_string(rr), hx);
        for (const auto& use : uses[rr]) {
          const std::uint32_t i = use.first, a = use.second;  // output row, tap row
          for (std::uint32_t j = 0; j < VW; ++j) {
            Val<f32> sum = acc[i][j];
            for (std::uint32_t e = 0; e < KW; ++e) sum = fma(xrow.at(tc.col(j, e)), wv[a * KW + e], sum);
            acc[i][j] = sum;
          }
          if (a != KH - 1 || output_stage) continue;  // output row i is complete after its last input row
          Val<bool> row_live = live;
          if (P % VH != 0) row_live = live && oh0 + i < P;
          auto at = k.let(rt + "y" + std::to_string(i), y_plane + (oh0 + i) * Q + ow0);
          store_tile_row(y, at, VW, Wo, ow0, Q, row_live, cols_full,
                         [&](std::uint32_t q) { return Val<f32>(acc[i][q]); });
        }
      }
      if (!output_stage) return;
      // (one round: every tile of the plane is done when all threads pass the barrier)
      k.barrier();
      // (threads past the plane's tiles hold a clamped copy of the last tile: they store nothing, nor does a plane
      // past the batch)
      for (std::uint32_t i = 0; i < VH; ++i) {
        for (std::uint32_t j = 0; j < VW; ++j) {
          Val<bool> in = live;
          if (P % VH != 0) in = in && oh0 + i < P;
          if (Q % VW != 0) in = in && ow0 + j < Q;
          if_(in, [&] { store(xs, buf + (oh0 + i) * L.ows + ow0 + j, cast<T>(Val<f32>(acc[i][j]))); });
        }
      }
    });
    if (!output_stage) return;
    k.barrier();
    // the stage leaves in vectors of ov: row-aligned rounds where a row's chunks fit the work-group
    const std::uint32_t per_row = Q / L.ov;
    const auto out = [&](const Val<u32>& row, const Val<u32>& chunk) {
      if_(live_plane, [&] {
        if (L.ov == 1) {
          store(y, y_plane + row * Q + chunk, load(xs, buf + row * L.ows + chunk));
        } else {
          store_vec(y, y_plane + row * Q + chunk * L.ov, load_vec(xs, buf + row * L.ows + chunk * L.ov, L.ov));
        }
      });
    };
    if (G >= per_row) {
      for_row_rounds(k, lid, G, P, per_row, "oc", [&](const Val<u32>& row0, const Val<u32>& ch, std::uint32_t r) {
        out(row0 + r * (G / per_row), ch);
      });
    } else {
      for_group_rounds(k, lid, G, P * per_row, "oc", true,
                       [&](const Val<u32>& c, std::uint32_t) { out(c / per_row, c % per_row); });
    }
    if (async && images > 2) {  // the buffer's border, zeroed once by for_planes_async, is read again: restore it
      k.barrier();
      zero_plane_border(k, xs, L.plane, lid, G, buf);
    }
  };

  if (async) {
    auto b0 = k.let("b0", (g / C) * images);
    const auto plane_of = [&](const Val<u32>& img) {
      auto ok = k.let("img_ok", b0 + img < batch);
      return std::pair{ok, k.let("plane", select(ok, (b0 + img) * C + c, c))};
    };
    for_planes_async(
        k, x, xs, L.plane, lid, G, images, [&](const Val<u32>& img) { return plane_of(img).second * (H * Wd); },
        [&](const Val<u32>& img, const Val<u32>& buf) {
          const auto cur = plane_of(img);
          plane_tiles(cur.first, k.let("y_plane", cur.second * (P * Q)), buf);
        });
    return;
  }
  auto plane = k.let("plane", select(plane_ok, g, 0u));
  stage_plane(k, x, xs, L.plane, k.let("x_plane", plane * (H * Wd)), lid, G);
  plane_tiles(plane_ok, k.let("y_plane", plane * (P * Q)), Val<u32>(0u));
}

}  // namespace ingot::kernels
