// kernels/conv/tile_columns.hpp — the columns (and rows) of a 2-D output tile of VH x VW outputs,
// VW consecutive along the innermost (W) axis, shared by the tiled channels-first convolutions
// (depthwise_conv2d_nchw.hpp, grouped_conv_nchw.hpp).
//
// Input columns. The VW windows of a tile row read input columns ow0*SW - PW + j*SW + e*DW
// (j < VW, e < KW). They are covered by aligned chunks of Wv elements (Wv = 1: scalar loads):
// chunk ch starts at cbase + ch*Wv with cbase = ow0*SW - PW - shift, shift = (-PW) mod Wv, a
// trace-time constant because ow0 is a multiple of VW (and VW of Wv). A chunk is wholly inside
// or outside a row (rows are multiples of Wv); chunks that can lie outside (trace-time bounds
// over every tile) load a clamped in-range column and carry an `ok` flag. Column c (relative to
// cbase) is element c % Wv of chunk c / Wv. Of each chunk only the narrowest aligned part that
// holds every column a window reads is loaded (a 3x3 window's halo chunks need one column: a
// 2-byte load instead of 16 bytes, a quarter of the L1 traffic of the row).
// Output columns. A tile row is stored with aligned vectors of Wo elements when it lies wholly
// inside the output row, else with guarded scalar stores (the last tile of a row when Q % VW != 0).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ingot/dsl.hpp"

namespace ingot::kernels {

// The tile helpers unroll per input column chunk and per input row of a tile's span: the span (which a dilation
// widens) is bounded so that a trace never grows with a scalar's value; wider windows run the direct kernel
// (direct_conv_registry.hpp, route_wide_windows).
inline constexpr std::uint32_t kMaxTileChunks = 4096;

struct TileColumns {
  std::uint32_t VW, KW, SW, DW;                   // outputs per tile row, taps, stride, dilation along W
  std::uint32_t Wv;                               // input chunk width (1 = scalar loads)
  std::uint32_t shift;                            // column of the first input, relative to cbase
  std::vector<bool> used;                         // chunks some window reads
  std::vector<std::uint32_t> first, width;        // loaded part of each used chunk: [first, first+width)
  std::vector<dsl::Val<u32>> idx;                 // column of each used chunk in its row
  std::vector<std::optional<dsl::Val<bool>>> ok;  // chunks that can lie outside the row

  // Column (relative to cbase) of tap e of output j.
  [[nodiscard]] std::uint32_t col(std::uint32_t j, std::uint32_t e) const { return shift + j * SW + e * DW; }
  [[nodiscard]] std::size_t chunks() const { return used.size(); }
};

// The chunk layout alone (used, first, width, shift: trace-time), without the index expressions
// (idx and ok are sized but unset); tile_columns fills them for a global row.
inline TileColumns tile_column_layout(std::uint32_t VW, std::uint32_t KW, std::uint32_t SW, std::uint32_t DW,
                                      std::uint32_t PW, std::uint32_t Wv, std::uint32_t elem_bytes) {
  TileColumns tc{VW, KW, SW, DW, Wv, (Wv - PW % Wv) % Wv, {}, {}, {}, {}, {}};
  const std::uint32_t nch = tc.col(VW - 1, KW - 1) / Wv + 1;
  if (nch > kMaxTileChunks) {
    throw std::invalid_argument("tiled convolution: a tile row spans " + std::to_string(nch) +
                                " input chunks (at most " + std::to_string(kMaxTileChunks) +
                                "): a narrower tile or a smaller dilation");
  }
  tc.used.assign(nch, false);
  tc.idx.resize(nch);
  tc.ok.resize(nch);
  std::vector<std::uint32_t> lo(nch, Wv), hi(nch, 0);  // lowest and highest element read per chunk
  for (std::uint32_t j = 0; j < VW; ++j) {
    for (std::uint32_t e = 0; e < KW; ++e) {
      const std::uint32_t ch = tc.col(j, e) / Wv, el = tc.col(j, e) % Wv;
      tc.used[ch] = true;
      lo[ch] = std::min(lo[ch], el);
      hi[ch] = std::max(hi[ch], el);
    }
  }
  // Narrowest aligned power-of-two part holding [lo, hi]; a vector part is at least 4 bytes.
  tc.first.assign(nch, 0);
  tc.width.assign(nch, Wv);
  for (std::uint32_t ch = 0; ch < nch; ++ch) {
    if (!tc.used[ch] || Wv == 1) continue;
    std::uint32_t wd = 1;
    while (lo[ch] / wd != hi[ch] / wd || (wd > 1 && wd * elem_bytes < 4)) wd *= 2;
    tc.width[ch] = wd;
    tc.first[ch] = lo[ch] / wd * wd;
  }
  return tc;
}

// The first column (relative to cbase) some chunk part of the layout loads.
inline std::uint32_t tile_first_loaded_column(const TileColumns& tc) {
  for (std::uint32_t ch = 0; ch < tc.chunks(); ++ch) {
    if (tc.used[ch]) return ch * tc.Wv + tc.first[ch];
  }
  return 0;
}

// The last column (relative to cbase) some chunk part of the layout loads.
inline std::uint32_t tile_last_loaded_column(const TileColumns& tc) {
  std::uint32_t last = 0;
  for (std::uint32_t ch = 0; ch < tc.chunks(); ++ch) {
    if (tc.used[ch]) last = std::max(last, ch * tc.Wv + tc.first[ch] + tc.width[ch] - 1);
  }
  return last;
}

// Declares the chunk columns of the tile starting at output column ow0. Wd: input row length;
// PW: left padding; TW: tiles per row (for the trace-time bounds); elem_bytes: size of an input element.
inline TileColumns tile_columns(dsl::KernelBuilder& k, const dsl::Val<u32>& ow0, std::uint32_t VW, std::uint32_t KW,
                                std::uint32_t SW, std::uint32_t DW, std::uint32_t PW, std::uint32_t Wv,
                                std::uint32_t Wd, std::uint32_t TW, std::uint32_t elem_bytes) {
  using namespace ingot::dsl;
  const auto i32c = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  TileColumns tc = tile_column_layout(VW, KW, SW, DW, PW, Wv, elem_bytes);
  auto cbase = k.let("cbase", cast<i32>(ow0 * SW) - i32c(PW + tc.shift));
  const std::int64_t cb_min = -static_cast<std::int64_t>(PW + tc.shift);
  const std::int64_t cb_max = static_cast<std::int64_t>(TW - 1) * VW * SW + cb_min;
  for (std::uint32_t ch = 0; ch < tc.chunks(); ++ch) {
    if (!tc.used[ch]) continue;
    const std::string tag = std::to_string(ch);
    auto pos = k.let("cp" + tag, cbase + i32c(ch * Wv));
    if (cb_min + static_cast<std::int64_t>(ch) * Wv >= 0 && cb_max + static_cast<std::int64_t>(ch + 1) * Wv <= Wd) {
      tc.idx[ch] = k.let("cx" + tag, cast<u32>(pos));
    } else {
      tc.ok[ch] = k.let("cok" + tag, cast<u32>(pos) < Wd);  // negative wraps past W
      tc.idx[ch] = k.let("cx" + tag, select(*tc.ok[ch], cast<u32>(pos), 0u));
    }
  }
  return tc;
}

// The row side of the tile: output rows [oh0, oh0+VH) read input rows rbase + rr, rr < rows,
// rbase = oh0*SH - PH; input row rr feeds output row r through tap row a when r*SH + a*DH == rr.
struct TileRows {
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> uses;  // per rr: (output row, tap row)
  std::vector<dsl::Val<i32>> ih;                                           // per used rr: rbase + rr
  std::vector<std::optional<dsl::Val<bool>>> ok;  // rows that can lie outside [0, H): ih < H (read only under it)
  // Per used rr: the row clamped into [0, H) (ih itself where ok is unset): a row that can always be
  // loaded, so a kernel may issue every load of its tile first and skip only the arithmetic of
  // rows outside the input (the clamped row is the nearest in-range one, usually already cached).
  std::vector<dsl::Val<u32>> in_range;
};

// Per input row rr of a tile of VH output rows ((VH-1)*SH + (KH-1)*DH + 1 rows): the (output row,
// tap row) pairs it feeds, r*SH + a*DH == rr.
inline std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> tile_row_uses(std::uint32_t VH,
                                                                                       std::uint32_t KH,
                                                                                       std::uint32_t SH,
                                                                                       std::uint32_t DH) {
  const std::uint64_t span = std::uint64_t{VH - 1} * SH + std::uint64_t{KH - 1} * DH + 1;
  if (span > kMaxTileChunks) {
    throw std::invalid_argument("tiled convolution: a tile spans " + std::to_string(span) + " input rows (at most " +
                                std::to_string(kMaxTileChunks) + "): a shorter tile or a smaller dilation");
  }
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> uses(span);
  for (std::uint32_t r = 0; r < VH; ++r) {
    for (std::uint32_t a = 0; a < KH; ++a) uses[r * SH + a * DH].emplace_back(r, a);
  }
  return uses;
}

// Declares the input rows of the tile starting at output row oh0. H: input height; TH: tiles per
// column (for the trace-time bounds).
inline TileRows tile_rows(dsl::KernelBuilder& k, const dsl::Val<u32>& oh0, std::uint32_t VH, std::uint32_t KH,
                          std::uint32_t SH, std::uint32_t DH, std::uint32_t PH, std::uint32_t H, std::uint32_t TH) {
  using namespace ingot::dsl;
  const auto i32c = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  TileRows tr;
  tr.uses = tile_row_uses(VH, KH, SH, DH);
  const auto rows = static_cast<std::uint32_t>(tr.uses.size());
  tr.ih.resize(rows);
  tr.ok.resize(rows);
  tr.in_range.resize(rows);
  auto rbase = k.let("rbase", cast<i32>(oh0 * SH) - i32c(PH));
  const std::int64_t rb_min = -static_cast<std::int64_t>(PH);
  const std::int64_t rb_max = static_cast<std::int64_t>(TH - 1) * VH * SH + rb_min;
  for (std::uint32_t rr = 0; rr < rows; ++rr) {
    if (tr.uses[rr].empty()) continue;
    const std::string rt = std::to_string(rr);
    tr.ih[rr] = k.let("ih" + rt, rbase + i32c(rr));
    const bool below = rb_min + rr < 0, above = rb_max + rr >= H;
    if (!below && !above) {
      tr.in_range[rr] = cast<u32>(tr.ih[rr]);
      continue;
    }
    tr.ok[rr] = k.let("rok" + rt, cast<u32>(tr.ih[rr]) < H);  // negative wraps
    Val<u32> clamped = below && above ? cast<u32>(min(max(tr.ih[rr], 0), i32c(H) - 1))
                                      : select(*tr.ok[rr], cast<u32>(tr.ih[rr]), below ? 0u : H - 1);
    tr.in_range[rr] = k.let("rin" + rt, clamped);
  }
  return tr;
}

// Halo exchange between neighbouring lanes (load_tile_row). With stride 1 along W, consecutive
// threads that hold consecutive tiles of one tile row read overlapping columns: a narrow halo
// chunk of a tile is part of a whole chunk its left or right neighbour loads (chunk ch of a tile
// is chunk ch + VW/Wv of the tile to its left). Such a chunk comes by sub-group shuffle from the
// neighbour lane instead of a load; the lanes at the two ends of each 32-lane sub-group load
// theirs (one lane of 32, a predicated load). Where the neighbour lane holds another tile row's
// tile, the halo columns lie outside the input row (the tile is the first or last of its row, and
// the chunk's ok flag selects 0) — kernels use it only when that holds (halo_exchange_applies).
// Every thread of the work-group must reach the row loads (no branch around them), work-groups
// are 1-D and hold whole warps, and the kernel declares launch bounds (ir.hpp, "Shuffles").
struct HaloExchange {
  dsl::Val<u32> lane;  // local_id(0) % 32
};
inline constexpr std::uint32_t kHaloLanes = ir::kShuffleGroupMultiple;  // the sub-group of the exchange

// Per chunk: where a halo exchange takes it from: 0 its own load, -1 the left neighbour's chunk
// ch + VW/Wv, +1 the right neighbour's chunk ch - VW/Wv (only narrow chunks whose source is a
// whole chunk; stride 1 along W and vector chunks only).
inline std::vector<int> halo_sources(const TileColumns& tc) {
  std::vector<int> src(tc.chunks(), 0);
  if (tc.SW != 1 || tc.Wv == 1 || tc.VW % tc.Wv != 0) return src;
  const std::uint32_t D = tc.VW / tc.Wv;
  auto whole = [&](std::uint32_t ch) { return ch < tc.chunks() && tc.used[ch] && tc.width[ch] == tc.Wv; };
  for (std::uint32_t ch = 0; ch < tc.chunks(); ++ch) {
    if (!tc.used[ch] || tc.width[ch] == tc.Wv) continue;
    if (whole(ch + D)) {
      src[ch] = -1;
    } else if (ch >= D && whole(ch - D)) {
      src[ch] = 1;
    }
  }
  return src;
}

// Whether a halo exchange gives exact results for these columns: some chunk comes from a
// neighbour, every chunk from the left neighbour lies left of column 0 for a row's first tile and
// every chunk from the right neighbour right of the last column (Wd - 1) for a row's last tile
// (where the neighbour lane may hold a tile of another row). TW: tiles per row; PW: left padding.
inline bool halo_exchange_applies(const TileColumns& tc, std::uint32_t PW, std::uint32_t Wd, std::uint32_t TW) {
  const std::vector<int> src = halo_sources(tc);
  const std::int64_t first_base = -static_cast<std::int64_t>(PW + tc.shift);
  const std::int64_t last_base = static_cast<std::int64_t>(TW - 1) * tc.VW * tc.SW + first_base;
  bool any = false;
  for (std::uint32_t ch = 0; ch < tc.chunks(); ++ch) {
    const std::int64_t lo = static_cast<std::int64_t>(ch) * tc.Wv + tc.first[ch], hi = lo + tc.width[ch] - 1;
    if (src[ch] < 0 && first_base + hi >= 0) return false;
    if (src[ch] > 0 && last_base + lo < static_cast<std::int64_t>(Wd)) return false;
    any = any || src[ch] != 0;
  }
  return any;
}

// The loads of one input row of a tile (start_tile_row), before any conversion or exchange.
template <class T>
struct PendingTileRow {
  std::vector<std::vector<dsl::Val<T>>> raw;  // per chunk loaded here: its loaded part
  std::map<std::uint32_t, dsl::Var<T>> edge;  // exchanged columns: the end lane's own element (0 elsewhere)
};

// Issues the loads of the used chunks of the input row starting at `row` (of a buffer or shared
// array): with hx, halo chunks come from the neighbour lanes (HaloExchange) and only the end lanes
// load their own (one lane of 32 each: a predicated load, issued here with the row's so that its
// latency overlaps theirs). Nothing here waits for a load: a kernel may start every row of its
// tile before it finishes the first (finish_tile_row), which is where the exchange waits.
template <class T, dsl::Access A>
PendingTileRow<T> start_tile_row(dsl::KernelBuilder& k, const dsl::Buffer<T, A>& x, const dsl::Val<u32>& row,
                                 const TileColumns& tc, const std::string& tag,
                                 const std::optional<HaloExchange>& hx = std::nullopt) {
  using namespace ingot::dsl;
  const std::vector<int> from = hx ? halo_sources(tc) : std::vector<int>(tc.chunks(), 0);
  PendingTileRow<T> pr;
  pr.raw.resize(tc.chunks());
  for (std::uint32_t ch = 0; ch < tc.chunks(); ++ch) {
    if (!tc.used[ch] || from[ch] != 0) continue;
    const auto at = tc.first[ch] == 0 ? row + tc.idx[ch] : row + tc.idx[ch] + tc.first[ch];
    pr.raw[ch] = tc.width[ch] == 1 ? std::vector<Val<T>>{load(x, at)} : load_vec(x, at, tc.width[ch]);
  }
  for (std::uint32_t j = 0; hx && j < tc.VW; ++j) {
    for (std::uint32_t e = 0; e < tc.KW; ++e) {
      const std::uint32_t c = tc.col(j, e), ch = c / tc.Wv;
      if (from[ch] == 0 || pr.edge.count(c)) continue;
      auto& got = pr.edge.try_emplace(c, k, Val<T>(0.0f), "edge" + tag + "_" + std::to_string(c)).first->second;
      if_(hx->lane == (from[ch] < 0 ? 0u : kHaloLanes - 1), [&] { got = load(x, row + tc.idx[ch] + c % tc.Wv); });
    }
  }
  return pr;
}

// Converts every column a window reads of a started row to f32 once (halo columns by shuffle with
// hx, as started); chunk ch reads 0 where tc.ok[ch] (if set) is false. Returns column -> value.
// With hx every thread of the work-group must reach it (no branch around it).
template <class T>
std::map<std::uint32_t, dsl::Val<f32>> finish_tile_row(dsl::KernelBuilder& k, const PendingTileRow<T>& pr,
                                                       const TileColumns& tc, const std::string& tag,
                                                       const std::optional<HaloExchange>& hx = std::nullopt) {
  using namespace ingot::dsl;
  const std::vector<int> from = hx ? halo_sources(tc) : std::vector<int>(tc.chunks(), 0);
  std::map<std::uint32_t, Val<f32>> xs;
  for (std::uint32_t j = 0; j < tc.VW; ++j) {
    for (std::uint32_t e = 0; e < tc.KW; ++e) {
      const std::uint32_t c = tc.col(j, e);
      if (xs.count(c)) continue;
      const std::uint32_t ch = c / tc.Wv, el = c % tc.Wv;
      Val<f32> v;
      if (from[ch] == 0) {
        v = cast<f32>(pr.raw[ch][el - tc.first[ch]]);
      } else {
        // What this lane holds for its neighbour, sent across; the end lanes take their own (edge).
        const std::uint32_t D = tc.VW / tc.Wv, src_ch = from[ch] < 0 ? ch + D : ch - D;
        const Val<u32> src_lane = from[ch] < 0 ? Val<u32>((hx->lane + (kHaloLanes - 1)) % kHaloLanes)
                                               : Val<u32>((hx->lane + 1u) % kHaloLanes);
        auto got = k.let("halo", shuffle(cast<f32>(pr.raw[src_ch][el]), src_lane, kHaloLanes));
        v = select(hx->lane == (from[ch] < 0 ? 0u : kHaloLanes - 1), cast<f32>(pr.edge.at(c).get()), got);
      }
      if (tc.ok[ch]) v = select(*tc.ok[ch], v, 0.0f);
      xs.emplace(c, k.let("x" + tag + "_" + std::to_string(c), v));
    }
  }
  return xs;
}

// Loads one input row and converts it at once (start_tile_row, then finish_tile_row).
template <class T, dsl::Access A>
std::map<std::uint32_t, dsl::Val<f32>> load_tile_row(dsl::KernelBuilder& k, const dsl::Buffer<T, A>& x,
                                                     const dsl::Val<u32>& row, const TileColumns& tc,
                                                     const std::string& tag,
                                                     const std::optional<HaloExchange>& hx = std::nullopt) {
  return finish_tile_row(k, start_tile_row(k, x, row, tc, tag, hx), tc, tag, hx);
}

// Stores one tile row value(q), q < VW, at y[at + q] under `live`: Wo-wide vectors when the row
// is whole (cols_full unset means every tile row is), guarded scalars for a partial last tile.
template <class T, class ValueAt>
void store_tile_row(const dsl::Out<T>& y, const dsl::Val<u32>& at, std::uint32_t VW, std::uint32_t Wo,
                    const dsl::Val<u32>& ow0, std::uint32_t Q, const dsl::Val<bool>& live,
                    const std::optional<dsl::Val<bool>>& cols_full, const ValueAt& value) {
  using namespace ingot::dsl;
  const auto whole = [&] {
    if (Wo == 1) {
      for (std::uint32_t q = 0; q < VW; ++q) store(y, at + q, value(q));
      return;
    }
    for (std::uint32_t m = 0; m < VW / Wo; ++m) {
      std::vector<Val<f32>> v;
      for (std::uint32_t q = m * Wo; q < (m + 1) * Wo; ++q) v.push_back(value(q));
      store_vec(y, at + m * Wo, v);
    }
  };
  if (!cols_full) {
    if_(live, whole);
    return;
  }
  if_(live && *cols_full, whole);
  if_(live && !*cols_full, [&] {
    for (std::uint32_t q = 0; q < VW; ++q) {
      if_(ow0 + q < Q, [&] { store(y, at + q, value(q)); });
    }
  });
}

}  // namespace ingot::kernels
