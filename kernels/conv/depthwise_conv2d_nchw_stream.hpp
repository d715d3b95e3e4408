// kernels/conv/depthwise_conv2d_nchw_stream.hpp — depthwise 2-D convolution, NCHW, input rows of
// several planes streamed through a work-group's shared ring by asynchronous copies
// (depthwise_conv2d with stream = 1). The NCHW counterpart of depthwise_conv2d_nhwc_stream.hpp.
//
//   x [B, C, H, W], w [C, kh, kw], optional bias [C] -> y [B, C, P, Q] (as depthwise_conv2d_nchw.hpp).
//
// Mapping. Work-group g takes NP consecutive planes (b*C + c) pb*NP .. + NP, one band of PB output
// rows and one strip of QS = NQ*V output columns: g = (pb*NB + band)*NS + s. Its G = NP*NQ threads:
// lid = pl*NQ + qg takes plane pb*NP + pl and the V output columns s*QS + qg*V .. + V of every row
// of the band (a V x PB tile; the kh*kw weights of its channel in registers, f32 accumulation in
// tap order, an output row stored after its last input row, as the register kernel).
// Ring. The band reads NR = (PB-1)*SH + (KH-1)*DH + 1 input rows ih = band*PB*SH - PH + u. Slot
// u % S (S = ahead + 2) holds, per plane, RW elements of row ih: input columns col0 - lead ..
// col0 - lead + RW (col0 = s*QS*SW), copied in aligned chunks of cw elements (cw divides W and
// QS*SW, so a chunk lies wholly inside or outside the row; outside, and rows outside [0, H), land
// as zeros). A thread reads its tile's columns from there with the chunk layout of tile_columns.hpp
// (aligned vectors of Wv, narrow parts for the halo columns): no bounds, no selects.
// The copies, waits and barriers follow row_ring.hpp (rows `ahead` ahead, one barrier per row).
//
// Contract (the library's rules):
// - launch depthwise_nchw_stream_groups(spec, tile, B) work-groups of the layout's G threads (launch
//   bounds declare it); batch is a run-time u32 scalar, every other size a specialisation constant;
// - planes past batch*C (the last plane block), work-groups past the last, outputs past P or Q are
//   not stored (their operands are clamped in range);
// - std::invalid_argument for what it does not take: V or PB outside [1, 16], NP outside [1, 64],
//   no vector copy (W or QS*SW without an even factor of at least 4 bytes), a ring over
//   kStreamSmemBytes or more than 1024 threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "depthwise_conv2d_nchw.hpp"
#include "depthwise_conv2d_nhwc_stream.hpp"
#include "direct_conv.hpp"
#include "ingot/dsl.hpp"
#include "row_ring.hpp"
#include "tile_columns.hpp"
#include "vector_width.hpp"

namespace ingot::kernels {

struct DepthwiseNchwStream {
  std::uint32_t V = 8;      // output columns per thread
  std::uint32_t NP = 8;     // planes per work-group
  std::uint32_t NQ = 7;     // column groups per work-group
  std::uint32_t PB = 8;     // output rows per work-group (and per thread)
  std::uint32_t ahead = 2;  // rows whose copies are in flight while one row is read
};

struct NchwStreamLayout {
  std::uint32_t QS = 1, NS = 1, NB = 1, NR = 1, S = 2, G = 1;
  std::uint32_t cw = 2;    // copy width (elements)
  std::uint32_t Wv = 1;    // read chunk width (tile_columns.hpp)
  std::uint32_t lead = 0;  // the ring row starts `lead` columns left of col0
  std::uint32_t RW = 0;    // elements of a plane's row in a slot (a multiple of cw)
  std::uint32_t off = 0;   // ring column of a tile's chunk 0, less qg*V*SW
  std::uint64_t bytes = 0;
};

inline NchwStreamLayout depthwise_nchw_stream_layout(const ConvSpec& s, const DepthwiseNchwStream& t,
                                                     std::uint32_t es) {
  check_depthwise_conv2d_nchw(s, {1, std::min<std::uint32_t>(t.V, 32)});
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument(s.name + ": stream = 1 (depthwise_conv2d) " + why);
  };
  if (t.V < 1 || t.V > 16) fail("V (output columns per thread) = " + std::to_string(t.V) + " must be in [1, 16]");
  if (t.PB < 1 || t.PB > 16) fail("PB (output rows per work-group) = " + std::to_string(t.PB) + " must be in [1, 16]");
  if (t.NP < 1 || t.NP > 64) fail("NP (planes per work-group) = " + std::to_string(t.NP) + " must be in [1, 64]");
  if (t.NQ < 1 || t.NQ > 64)
    fail("NQ (column groups per work-group) = " + std::to_string(t.NQ) + " must be in [1, 64]");
  if (t.ahead < 1 || t.ahead > 8) fail("ahead = " + std::to_string(t.ahead) + " must be in [1, 8]");
  NchwStreamLayout L;
  const std::uint32_t W = s.in_size[1], SW = s.stride[1];
  const auto P = static_cast<std::uint32_t>(s.out_len(0)), Q = static_cast<std::uint32_t>(s.out_len(1));
  L.QS = t.NQ * t.V;
  L.NS = (Q + L.QS - 1) / L.QS;
  L.NB = (P + t.PB - 1) / t.PB;
  L.NR = (t.PB - 1) * s.stride[0] + (s.ksize[0] - 1) * s.dilation[0] + 1;
  L.S = ring_slots(t.ahead);
  L.G = t.NP * t.NQ;
  if (L.G > 1024) fail("NP*NQ = " + std::to_string(L.G) + " threads per work-group must be <= 1024");
  // The copy width: the largest power of two dividing W and QS*SW, at most 16 bytes.
  L.cw = 1;
  while (W % (L.cw * 2) == 0 && (L.QS * SW) % (L.cw * 2) == 0 && L.cw * 2 * es <= 16) L.cw *= 2;
  if (L.cw < 2 || L.cw * es < 4) {
    fail("copies vectors of 2 or more elements and 4 or more bytes: W = " + std::to_string(W) +
         " and the strip's QS*stride_w = " + std::to_string(L.QS * SW) + " allow only " + std::to_string(L.cw) +
         "-element copies; use stream = 0");
  }
  L.Wv = row_vector_width(es, t.V, W);
  const TileColumns tc = tile_column_layout(t.V, s.ksize[1], SW, s.dilation[1], s.pad[1], L.Wv, es);
  const std::uint32_t a = std::max(L.cw, L.Wv);
  L.lead = (s.pad[1] + tc.shift + a - 1) / a * a;
  L.off = L.lead - s.pad[1] - tc.shift;
  const std::uint32_t last = (t.NQ - 1) * t.V * SW + L.off + tile_last_loaded_column(tc);
  L.RW = (last + 1 + L.cw - 1) / L.cw * L.cw;
  L.bytes = static_cast<std::uint64_t>(L.S) * t.NP * L.RW * es;
  if (L.bytes > kStreamSmemBytes) {
    fail("ring of " + std::to_string(L.S) + " rows x " + std::to_string(t.NP) + " planes x " + std::to_string(L.RW) +
         " columns = " + std::to_string(L.bytes) + " bytes exceeds " + std::to_string(kStreamSmemBytes) +
         ": lower ahead, NP or NQ");
  }
  return L;
}

inline std::uint64_t depthwise_nchw_stream_groups(const ConvSpec& s, const DepthwiseNchwStream& t, std::uint32_t es,
                                                  std::uint64_t batch) {
  const NchwStreamLayout L = depthwise_nchw_stream_layout(s, t, es);
  return (batch * s.in_channels + t.NP - 1) / t.NP * L.NB * L.NS;
}

template <class T>
void depthwise_conv2d_nchw_stream(dsl::KernelBuilder& k, const ConvSpec& s, const DepthwiseNchwStream& t) {
  using namespace ingot::dsl;
  const auto es = static_cast<std::uint32_t>(sizeof(T));
  const NchwStreamLayout L = depthwise_nchw_stream_layout(s, t, es);
  const std::uint32_t C = s.in_channels, H = s.in_size[0], W = s.in_size[1];
  const std::uint32_t KH = s.ksize[0], KW = s.ksize[1], SH = s.stride[0], SW = s.stride[1];
  const std::uint32_t PH = s.pad[0], PW = s.pad[1], DW = s.dilation[1];
  const auto P = static_cast<std::uint32_t>(s.out_len(0)), Q = static_cast<std::uint32_t>(s.out_len(1));
  const std::uint32_t V = t.V, NP = t.NP, NQ = t.NQ, G = L.G, S = L.S, cw = L.cw, RW = L.RW;
  const std::uint32_t SL = NP * RW, NC = RW / cw;
  const std::uint32_t Wo = row_vector_width(es, V, Q);

  const auto prm = declare_dense_conv_params<T>(k, s);  // batch, x, w [C, kh, kw], bias, y
  const auto& batch = prm.io.batch;
  const auto& x = prm.io.x;
  const auto& y = prm.io.y;
  auto xs = k.shared<T>("xs", S * SL);

  auto g0 = k.let("g0", k.group_id(0));
  auto lid = k.let("lid", k.local_id(0));
  auto planes = k.let("planes", batch * C);
  auto groups = k.let("groups", (planes + (NP - 1)) / NP * (L.NB * L.NS));
  auto live_group = k.let("live_group", g0 < groups);
  auto g = k.let("g", select(live_group, g0, 0u));  // a work-group past the last takes work-group 0's operands
  auto strip = L.NS == 1 ? Val<u32>(0u) : k.let("strip", g % L.NS);
  auto r1 = L.NS == 1 ? Val<u32>(g) : k.let("r1", g / L.NS);
  auto band = L.NB == 1 ? Val<u32>(0u) : k.let("band", r1 % L.NB);
  auto pb = L.NB == 1 ? r1 : k.let("pb", r1 / L.NB);
  auto pl = NQ == 1 ? Val<u32>(lid) : k.let("pl", lid / NQ);
  auto qg = NQ == 1 ? Val<u32>(0u) : k.let("qg", lid % NQ);
  auto plane0 = k.let("plane0", pb * NP);
  auto my_plane = k.let("my_plane", plane0 + pl);
  auto live = k.let("live", live_group && my_plane < planes);
  auto plane = k.let("plane", select(live, my_plane, 0u));
  auto c = k.let("c", plane % C);
  auto p0 = L.NB == 1 ? Val<u32>(0u) : k.let("p0", band * t.PB);
  auto ow0 = k.let("ow0", strip * L.QS + qg * V);

  // The copies of one row: units m = lid + r*G < NP*NC; unit m = plane m / NC, chunk m % NC (input
  // columns col0 - lead + chunk*cw ..), per round computed once: the plane and column part of the
  // source (clamped in range), whether both are inside, and the destination in a slot.
  const std::uint32_t units = NP * NC;
  std::vector<RingCopy> rounds;
  auto col0 = k.let("col0", strip * (L.QS * SW));
  for (std::uint32_t r = 0; r * G < units; ++r) {
    const auto rt = std::to_string(r);
    RingCopy rd;
    auto m = k.let("m" + rt, lid + r * G);
    if ((r + 1) * G > units) rd.valid = k.let("mv" + rt, m < units);
    auto mp = k.let("mp" + rt, m / NC);
    auto chunk = k.let("mc" + rt, m % NC);
    auto iw = k.let("iw" + rt, col0 + chunk * cw - L.lead);  // u32: a column left of 0 wraps past W
    auto pp = k.let("pp" + rt, plane0 + mp);
    rd.ok = k.let("okc" + rt, iw < W && pp < planes);
    rd.src = k.let("src" + rt, select(rd.ok, pp * (H * W) + iw, 0u));
    rd.dst = k.let("dst" + rt, mp * RW + chunk * cw);
    rounds.push_back(rd);
  }
  auto rbase = k.let("rbase", p0 * SH);  // input row of band row u: rbase - PH + u
  const std::int64_t rb_max = static_cast<std::int64_t>(L.NB - 1) * t.PB * SH - PH;
  auto issue_row = [&](std::uint32_t u) {
    issue_ring_row(k, xs, x, rounds, cw, (u % S) * SL, std::nullopt, rbase, u, PH, rb_max, H, W);
  };

  const auto weights = depthwise_channel_weights(k, prm, s, c);
  const std::vector<Val<f32>>& wv = weights.first;
  std::vector<std::vector<Var<f32>>> acc(t.PB);
  for (std::uint32_t r = 0; r < t.PB; ++r) {
    acc[r].reserve(V);  // a reallocation would copy (re-declare) the variables
    for (std::uint32_t j = 0; j < V; ++j) acc[r].emplace_back(k, weights.second, "acc" + std::to_string(r));
  }

  // The thread's chunks in a slot: plane row pl*RW, column qg*V*SW + off + ch*Wv.
  TileColumns tc = tile_column_layout(V, KW, SW, DW, PW, L.Wv, es);
  auto tb = k.let("tb", pl * RW + qg * (V * SW) + L.off);
  for (std::uint32_t ch = 0; ch < tc.chunks(); ++ch) tc.idx[ch] = Val<u32>(ch * L.Wv);

  std::optional<Val<bool>> cols_full;
  if (Q % L.QS != 0) cols_full = k.let("cols_full", ow0 + V <= Q);
  auto y_plane = k.let("y_plane", plane * (P * Q));
  auto store_row = [&](std::uint32_t r) {
    Val<bool> row_live = live;
    if (P % t.PB != 0) row_live = live && p0 + r < P;
    auto at = k.let("y" + std::to_string(r), y_plane + (p0 + r) * Q + ow0);
    store_tile_row(y, at, V, Wo, ow0, Q, row_live, cols_full, [&](std::uint32_t j) { return Val<f32>(acc[r][j]); });
  };

  const auto uses = tile_row_uses(t.PB, KH, SH, s.dilation[0]);
  for_ring_rows(k, L.NR, t.ahead, issue_row, [&](std::uint32_t u) {
    if (uses[u].empty()) return;
    const std::uint32_t slot = (u % S) * SL;
    const auto xrow = load_tile_row(k, xs, slot == 0 ? Val<u32>(tb) : Val<u32>(tb + slot), tc, std::to_string(u));
    for (const auto& [r, a] : uses[u]) {
      for (std::uint32_t j = 0; j < V; ++j) {
        Val<f32> sum = acc[r][j];
        for (std::uint32_t e = 0; e < KW; ++e) sum = fma(xrow.at(tc.col(j, e)), wv[a * KW + e], sum);
        acc[r][j] = sum;
      }
    }
    for (const auto& [r, a] : uses[u]) {
      if (a == KH - 1) store_row(r);
    }
  });
}

}  // namespace ingot::kernels
