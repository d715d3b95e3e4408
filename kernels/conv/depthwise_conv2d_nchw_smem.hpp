// kernels/conv/depthwise_conv2d_nchw_smem.hpp — depthwise 2-D convolution, NCHW, one (b, c)
// plane per work-group staged in shared memory (depthwise_conv2d with smem = 1).
//
// Work-group g takes plane g = b*C + c with G threads (DepthwiseSmemLayout::group). The plane is
// copied into a shared array with aligned vector loads of Vc elements (every input element read
// from global memory exactly once; Vc divides the row length, so no vector crosses a row) to row
// PH + ih, column off + iw of a layout of `rows` x `ws` elements whose border — the rows and
// columns a window reads outside the plane — holds zeros. After a barrier each thread computes
// VH x VW tiles t = local id + r*G (tiles as depthwise_conv2d_nchw.hpp: the same chunk layout of a
// tile row, tile_columns.hpp, read from the shared array without bounds, the border being zero),
// one input row at a time, and stores each output row after its last input row like that kernel.
// Against it: no input row is read from L2 once per tile row that needs it (a 2-row tile of a 3x3
// window reads 4 rows for 2), and the halo columns are shared-memory reads, not L1 wavefronts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "depthwise_conv2d_nchw.hpp"
#include "direct_conv.hpp"
#include "ingot/dsl.hpp"
#include "tile_columns.hpp"
#include "vector_width.hpp"

namespace ingot::kernels {

// Largest shared array the kernel uses (the portable static limit of CUDA, HIP and OpenCL devices).
inline constexpr std::uint64_t kDepthwiseSmemBytes = 48 * 1024;

// The padded plane in shared memory and the work-group (trace-time, from the spec and the tile).
struct DepthwiseSmemLayout {
  std::uint32_t vc = 1;     // copy vector width (elements; 1 = scalar copies)
  std::uint32_t wv = 1;     // compute chunk width (tile_columns.hpp Wv)
  std::uint32_t off = 0;    // column of input column 0
  std::uint32_t base = 0;   // a tile's columns are relative to cbase = ow0*SW - base (tile_columns.hpp)
  std::uint32_t ws = 0;     // row stride (elements, a multiple of max(vc, wv))
  std::uint32_t rows = 0;   // rows of the layout: PH zero rows, H rows, zero rows below
  std::uint32_t left = 0;   // zero columns [off - left, off) of each input row (those a window reads)
  std::uint32_t right = 0;  // zero columns [off + W, off + W + right) of each input row
  std::uint32_t group = 0;  // G: threads per work-group (a multiple of 32, at most 256)
  std::uint64_t tiles = 0;  // tiles per plane
  [[nodiscard]] std::uint64_t elements() const { return static_cast<std::uint64_t>(rows) * ws; }
};

// Throws std::invalid_argument (check_depthwise_conv2d_nchw's, or the padded plane exceeding
// kDepthwiseSmemBytes, saying to use smem = 0).
inline DepthwiseSmemLayout depthwise_conv2d_smem_layout(const ConvSpec& s, const DepthwiseConv2dTile& t,
                                                        std::size_t elem_bytes) {
  check_depthwise_conv2d_nchw(s, t);
  const auto es = static_cast<std::uint32_t>(elem_bytes);
  const auto P = static_cast<std::uint32_t>(s.out_len(0)), Q = static_cast<std::uint32_t>(s.out_len(1));
  const std::uint32_t H = s.in_size[0], Wd = s.in_size[1], KH = s.ksize[0], KW = s.ksize[1];
  const std::uint32_t SH = s.stride[0], SW = s.stride[1], PH = s.pad[0], PW = s.pad[1];
  const std::uint32_t DH = s.dilation[0], DW = s.dilation[1];
  const std::uint32_t TH = (P + t.vh - 1) / t.vh, TW = (Q + t.vw - 1) / t.vw;
  DepthwiseSmemLayout L;
  L.vc = row_vector_width(es, Wd, Wd);
  L.wv = row_vector_width(es, t.vw, Wd);
  const TileColumns tc = tile_column_layout(t.vw, KW, SW, DW, PW, L.wv, es);
  const std::uint32_t a = std::max(L.vc, L.wv);
  const auto round_up = [a](std::uint64_t v) { return (v + a - 1) / a * a; };
  // Tile columns are relative to cbase = ow0*SW - (PW + shift): the first tile reads from column
  // first - (PW + shift); off keeps cbase's chunks aligned (off = PW + shift mod wv) and vc-aligned rows.
  L.base = PW + tc.shift;
  const std::uint32_t base = L.base, first = tile_first_loaded_column(tc);
  L.left = base > first ? base - first : 0u;
  L.off = static_cast<std::uint32_t>(round_up(base));
  // last column read (relative to input column 0) by the last tile of a row
  const std::uint64_t last = static_cast<std::uint64_t>(TW - 1) * t.vw * SW + tile_last_loaded_column(tc);
  const std::uint64_t last_col = last >= base ? last - base : 0;
  L.right = last_col + 1 > Wd ? static_cast<std::uint32_t>(last_col + 1 - Wd) : 0u;
  const std::uint64_t ws = round_up(L.off + std::max<std::uint64_t>(Wd, last_col + 1));
  // last row read, relative to row -PH, by the last tile of a column
  const std::uint64_t last_row =
      static_cast<std::uint64_t>(TH * t.vh - 1) * SH + static_cast<std::uint64_t>(KH - 1) * DH;
  const std::uint64_t rows = std::max<std::uint64_t>(static_cast<std::uint64_t>(PH) + H, last_row + 1);
  L.tiles = static_cast<std::uint64_t>(TH) * TW;
  L.group = static_cast<std::uint32_t>(std::min<std::uint64_t>(256, (L.tiles + 31) / 32 * 32));
  if (rows * ws * es > kDepthwiseSmemBytes) {
    throw std::invalid_argument(
        s.name + ": smem = 1 (depthwise_conv2d) stages a whole " + std::to_string(H) + "x" + std::to_string(Wd) +
        " plane with its border in shared memory: " + std::to_string(rows * ws * es) + " bytes, more than " +
        std::to_string(kDepthwiseSmemBytes) + "; use smem = 0 for planes this large");
  }
  L.ws = static_cast<std::uint32_t>(ws);
  L.rows = static_cast<std::uint32_t>(rows);
  return L;
}

template <class T>
void depthwise_conv2d_nchw_smem(dsl::KernelBuilder& k, const ConvSpec& s, const DepthwiseConv2dTile& tile) {
  using namespace ingot::dsl;
  const DepthwiseSmemLayout L = depthwise_conv2d_smem_layout(s, tile, sizeof(T));
  const auto u = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
  const std::uint32_t C = s.in_channels, H = s.in_size[0], Wd = s.in_size[1], P = u(s.out_len(0)), Q = u(s.out_len(1));
  const std::uint32_t KH = s.ksize[0], KW = s.ksize[1], SH = s.stride[0], SW = s.stride[1];
  const std::uint32_t PH = s.pad[0], PW = s.pad[1], DH = s.dilation[0], DW = s.dilation[1];
  const std::uint32_t VH = tile.vh, VW = tile.vw, TW = (Q + VW - 1) / VW, G = L.group;
  const std::uint32_t Wo = row_vector_width(sizeof(T), VW, Q);  // output vector width

  auto batch = k.scalar<u32>("batch");
  auto x = k.in<T>("x", batch * (C * H * Wd));
  auto w = k.in<T>("w", C * KH * KW);
  In<T> bias;
  if (s.bias) bias = k.in<T>("bias", C);
  auto y = k.out<T>("y", batch * (C * P * Q));
  auto xs = k.shared<T>("xs", u(L.elements()));

  // A group past the planes (a launch larger than the geometry) takes plane 0's operands and
  // stores nothing; every thread reaches the barrier.
  auto g = k.let("g", k.group_id(0));
  auto plane_ok = k.let("plane_ok", g < batch * C);
  auto plane = k.let("plane", select(plane_ok, g, 0u));
  auto lid = k.let("lid", k.local_id(0));
  auto c = k.let("c", plane % C);
  auto x_plane = k.let("x_plane", plane * (H * Wd));
  auto y_plane = k.let("y_plane", plane * (P * Q));

  std::vector<Val<f32>> wv;
  for (std::uint32_t a = 0; a < KH * KW; ++a) {
    wv.push_back(k.let("w" + std::to_string(a), cast<f32>(load(w, c * (KH * KW) + a))));
  }
  Val<f32> init = 0.0f;
  if (s.bias) init = k.let("bias_c", cast<f32>(load(bias, c)));

  // Runs body(index, round) for index = lid + round*G < n, the rounds unrolled at trace time; only
  // a partial last round tests the bound (under `guarded`, or clamping the index when unguarded).
  const auto rounds = [&](std::uint32_t n, const std::string& tag, bool guarded,
                          const std::function<void(const Val<u32>&, std::uint32_t)>& body) {
    for (std::uint32_t r = 0; r * G < n; ++r) {
      auto idx = k.let(tag + std::to_string(r), lid + r * G);
      if ((r + 1) * G <= n) {
        body(idx, r);
      } else if (guarded) {
        if_(idx < n, [&] { body(idx, r); });
      } else {
        body(k.let(tag + "c" + std::to_string(r), min(idx, n - 1)), r);
      }
    }
  };

  // 1. Every copy load first (all of them in flight), then the border zeros, then the copy stores.
  const std::uint32_t per_row = Wd / L.vc, chunks = H * per_row;
  std::vector<std::vector<Val<T>>> got;
  rounds(chunks, "ld", false, [&](const Val<u32>& ch, std::uint32_t) {
    const auto at = x_plane + ch * L.vc;
    got.push_back(L.vc == 1 ? std::vector<Val<T>>{load(x, at)} : load_vec(x, at, L.vc));
  });
  const std::uint32_t zrows = L.rows - H;  // PH above, the rest below
  const std::uint32_t zv = L.vc * sizeof(T) >= 4 && L.vc >= 2 ? L.vc : 1;
  rounds(zrows * L.ws / zv, "zr", true, [&](const Val<u32>& i, std::uint32_t) {
    auto at = k.let("zr_at", i * zv);
    at = select(at < PH * L.ws, at, at + H * L.ws);
    if (zv == 1) {
      store(xs, at, 0.0f);
    } else {
      store_vec(xs, at, std::vector<Val<f32>>(zv, Val<f32>(0.0f)));
    }
  });
  const std::uint32_t side = L.left + L.right;
  if (side) {
    rounds(H * side, "zc", true, [&](const Val<u32>& i, std::uint32_t) {
      auto row = k.let("zc_row", i / side);
      auto kk = k.let("zc_k", i % side);
      auto col = select(kk < L.left, kk + (L.off - L.left), kk + (L.off + Wd - L.left));
      store(xs, (row + PH) * L.ws + col, 0.0f);
    });
  }
  rounds(chunks, "st", true, [&](const Val<u32>& ch, std::uint32_t r) {
    auto at = k.let("st_at", (ch / per_row + PH) * L.ws + (ch % per_row) * L.vc + L.off);
    if (L.vc == 1) {
      store(xs, at, got[r][0]);
    } else {
      store_vec(xs, at, got[r]);
    }
  });
  k.barrier();

  // 2. The tiles from the shared plane.
  const auto uses = tile_row_uses(VH, KH, SH, DH);
  const std::uint32_t tiles = u(L.tiles);
  rounds(tiles, "t", false, [&](const Val<u32>& t, std::uint32_t r) {
    const std::string rt = "r" + std::to_string(r) + "_";
    Val<bool> live = plane_ok;
    if ((r + 1) * G > tiles) live = k.let(rt + "live", plane_ok && lid + r * G < tiles);
    auto oh0 = k.let(rt + "oh0", (t / TW) * VH);
    auto ow0 = k.let(rt + "ow0", (t % TW) * VW);
    TileColumns tc = tile_column_layout(VW, KW, SW, DW, PW, L.wv, sizeof(T));
    for (std::uint32_t ch = 0; ch < tc.chunks(); ++ch) {
      if (tc.used[ch]) tc.idx[ch] = k.let(rt + "cx" + std::to_string(ch), ow0 * SW + (L.off - L.base + ch * L.wv));
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
      auto row_at = k.let(rt + "xr" + std::to_string(rr), (oh0 * SH + rr) * L.ws);
      const auto xrow = load_tile_row(k, xs, row_at, tc, rt + std::to_string(rr));
      for (const auto& [i, a] : uses[rr]) {
        for (std::uint32_t j = 0; j < VW; ++j) {
          Val<f32> sum = acc[i][j];
          for (std::uint32_t e = 0; e < KW; ++e) sum = fma(xrow.at(tc.col(j, e)), wv[a * KW + e], sum);
          acc[i][j] = sum;
        }
        if (a != KH - 1) continue;  // output row i is complete after its last input row
        Val<bool> row_live = live;
        if (P % VH != 0) row_live = live && oh0 + i < P;
        auto at = k.let(rt + "y" + std::to_string(i), y_plane + (oh0 + i) * Q + ow0);
        store_tile_row(y, at, VW, Wo, ow0, Q, row_live, cols_full,
                       [&](std::uint32_t q) { return Val<f32>(acc[i][q]); });
      }
    }
  });
}

}  // namespace ingot::kernels
