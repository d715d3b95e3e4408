// kernels/conv/grouped_conv_nchw.hpp — grouped convolution, channels-first, any rank >= 2 (the
// kernel behind conv2d_grouped and conv3d_grouped): OC output channels of one group x a VH x VW
// patch of one output plane per thread, input rows read once per input channel with vector
// loads and each input value reused for every output channel and tap it feeds.
//
//   x [B, C, (D,) H, W], w [O, C/groups, (kd,) kh, kw], optional bias [O] -> y [B, O, (P0,) P, Q]
//   y[b,o,p] = bias[o] + sum_{ci < C/groups} sum_t x[b, g*(C/groups) + ci, p*stride + t*dil - pad] * w[o,ci,t],
//   g = o / (O/groups), x = 0 outside the input (zero padding). Parameters: batch (run-time u32),
//   x, w, [bias], y — as direct_conv.hpp, whose ConvSpec this takes.
//
// Mapping. The last two spatial axes (H, W) are tiled: tiles = ceil(P/VH) * ceil(Q/VW) per
// output plane, row-major. Axes before them ("outer", the depth of a 3-D convolution) take one
// output position per thread. Thread i takes tile i % tiles of outer position
// (i / tiles) % outer, channel block ob = (i / (tiles*outer)) % (groups*OBg) and batch b =
// i / (tiles*outer*groups*OBg), OBg = ceil(Og/OC), Og = O/groups; the channel block is group
// g = ob / OBg, output channels g*Og + (ob % OBg)*OC + [0, OC). The spatial index is fastest, so
// a warp shares one group and one set of output channels (except where it straddles two
// blocks): its weight loads are warp-uniform (one transaction each). OC is capped at Og.
// Per thread: OC*VH*VW f32 accumulators (bias first, then fma in input-channel, tap order).
// The input channels of the group are walked with a run-time loop (none when there is one);
// per input channel the thread walks the outer taps and, in order, the input rows its VH output
// rows need; each row segment is read with aligned vector loads of Wv = 2, 4 or 8 elements (the
// widest 4-, 8- or 16-byte vector dividing VW and W; scalar loads when none does), each needed
// element converted to f32 once and used OC x (taps it feeds) times; the weights of the row's
// taps are scalar (warp-uniform) loads converted once per thread and input channel and used
// VH x VW times (each weight is loaded where first needed). Chunk column offsets are trace-time
// constants because the tile's first column is a multiple of VW. Bounds known at trace time
// emit no test; a chunk that can lie outside the input loads a clamped in-range address and
// select()s 0; an input row or outer tap that can lie outside skips its taps with an if_
// (uniform over a tile; the row's weights are loaded before it). Stores: aligned vectors of Wo
// elements (the widest dividing VW and Q) for whole column groups, guarded scalar stores for a
// partial last group or a scalar layout; rows past P and channels past the group's end
// (Og % OC != 0; their weights read channel g*Og instead) are skipped. Tail threads clamp onto
// thread 0's operands and skip every store. Launch with grid_1d(batch *
// grouped_conv_nchw_threads_per_batch(), any group size). Default tile OC=2, VH=4, VW=8
// (bf16 56x56 3x3: 0.37 non-FMA PTX instructions per FMA in the channel loop, 128 registers).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "direct_conv.hpp"
#include "ingot/dsl.hpp"
#include "tile_columns.hpp"
#include "vector_width.hpp"

namespace ingot::kernels {

struct GroupedConvTile {
  // The default, 8 output channels x 1 row x 8 columns: faster than 2 x 4 x 8 in f32 in 2-D and 3-D
  // (docs/performance.md s10).
  std::uint32_t oc = 8;          // output channels per thread (capped at O/groups)
  std::uint32_t vh = 1, vw = 8;  // outputs per thread and channel: VH rows x VW columns
};

// Output channels per thread after capping at O/groups.
inline std::uint32_t grouped_conv_oc(const ConvSpec& s, const GroupedConvTile& t) {
  return t.oc < s.out_per_group() ? t.oc : s.out_per_group();
}

// Throws std::invalid_argument unless s is a channels-first spec of rank >= 2 and the tile is in
// range (1 <= OC <= 16, 1 <= VH <= 16, 1 <= VW <= 32, OC*VH*VW <= 128 after capping OC).
inline void check_grouped_conv_nchw(const ConvSpec& s, const GroupedConvTile& t) {
  s.validate();
  if (s.rank() < 2 || s.layout != ConvLayout::ChannelsFirst) {
    throw std::invalid_argument(s.name +
                                ": grouped_conv_nchw needs a channels-first spec with at least 2 spatial axes");
  }
  if (t.oc < 1 || t.oc > 16 || t.vh < 1 || t.vh > 16 || t.vw < 1 || t.vw > 32) {
    throw std::invalid_argument(s.name + ": tile OC=" + std::to_string(t.oc) + " VH=" + std::to_string(t.vh) + " VW=" +
                                std::to_string(t.vw) + " must have 1 <= OC <= 16, 1 <= VH <= 16, 1 <= VW <= 32");
  }
  if (grouped_conv_oc(s, t) * t.vh * t.vw > 128) {
    throw std::invalid_argument(s.name + ": OC*VH*VW = " + std::to_string(grouped_conv_oc(s, t) * t.vh * t.vw) +
                                " accumulators per thread; lower OC, VH or VW so that it is <= 128");
  }
}

// Threads per batch.
inline std::uint64_t grouped_conv_nchw_threads_per_batch(const ConvSpec& s, const GroupedConvTile& t) {
  const std::size_t R = s.rank();
  std::uint64_t n = ((s.out_len(R - 2) + t.vh - 1) / t.vh) * ((s.out_len(R - 1) + t.vw - 1) / t.vw);
  for (std::size_t a = 0; a + 2 < R; ++a) n *= s.out_len(a);
  const std::uint32_t oc = grouped_conv_oc(s, t);
  return n * s.groups * ((s.out_per_group() + oc - 1) / oc);
}

template <class T>
void grouped_conv_nchw(dsl::KernelBuilder& k, const ConvSpec& s, const GroupedConvTile& tile) {
  using namespace ingot::dsl;
  check_grouped_conv_nchw(s, tile);
  const auto u = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
  const auto i32c = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  const std::size_t R = s.rank(), RO = R - 2;  // RO outer axes
  const std::uint32_t O = s.out_channels, Cg = s.in_per_group(), Og = s.out_per_group();
  const std::uint32_t H = s.in_size[RO], Wd = s.in_size[RO + 1], P = u(s.out_len(RO)), Q = u(s.out_len(RO + 1));
  const std::uint32_t KH = s.ksize[RO], KW = s.ksize[RO + 1], SH = s.stride[RO], SW = s.stride[RO + 1];
  const std::uint32_t PH = s.pad[RO], PW = s.pad[RO + 1], DH = s.dilation[RO], DW = s.dilation[RO + 1];
  const std::uint32_t OC = grouped_conv_oc(s, tile), VH = tile.vh, VW = tile.vw;
  const std::uint32_t TH = (P + VH - 1) / VH, TW = (Q + VW - 1) / VW, tiles = TH * TW;
  const std::uint32_t OBg = (Og + OC - 1) / OC, OB = s.groups * OBg;
  const std::uint32_t taps = u(s.taps()), in_sp = u(s.in_spatial()), out_sp = u(s.out_spatial());
  const std::uint32_t Wv = row_vector_width(sizeof(T), VW, Wd);  // input vector width
  const std::uint32_t Wo = row_vector_width(sizeof(T), VW, Q);   // output vector width
  const auto Pv = s.out_size();
  std::uint32_t outer = 1, outer_taps = 1;
  for (std::size_t a = 0; a < RO; ++a) {
    outer *= u(Pv[a]);
    outer_taps *= s.ksize[a];
  }
  const std::uint32_t HWin = H * Wd, HWout = P * Q;  // one input / output plane of the tiled axes

  const auto prm = declare_dense_conv_params<T>(k, s);
  const auto& batch = prm.io.batch;
  const auto& x = prm.io.x;
  const auto& w = prm.w;
  const auto& bias = prm.io.bias;
  const auto& y = prm.io.y;

  auto gid = k.let("gid", k.program_id(0));
  auto n = k.let("n", batch * (OB * outer * tiles));
  auto live = k.let("live", gid < n);
  auto i = k.let("i", select(live, gid, 0u));  // tail threads take thread 0's operands
  auto t = k.let("t", i % tiles);
  auto rest = k.let("rest", i / tiles);
  Val<u32> opos = 0u;  // flat outer output position
  if (outer > 1) {
    opos = k.let("opos", rest % outer);
    rest = k.let("rest_o", rest / outer);
  }
  auto ob = k.let("ob", rest % OB);
  auto b = k.let("b", rest / OB);
  auto g = k.let("g", ob / OBg);
  Val<u32> oc_in_g = 0u;
  if (OBg > 1) oc_in_g = k.let("ocg", (ob % OBg) * OC);
  auto oc0 = k.let("oc0", g * Og + oc_in_g);
  auto oh0 = k.let("oh0", (t / TW) * VH);
  auto ow0 = k.let("ow0", (t % TW) * VW);
  // Per output channel of the thread: whether it exists, and its weight row (clamped).
  std::vector<std::optional<Val<bool>>> oc_ok(OC);
  std::vector<Val<u32>> oc_c(OC), w_row(OC);
  for (std::uint32_t j = 0; j < OC; ++j) {
    const std::string tag = std::to_string(j);
    if (Og % OC == 0) {
      oc_c[j] = oc0 + j;
    } else {
      oc_ok[j] = k.let("ocok" + tag, oc_in_g + j < Og);
      oc_c[j] = k.let("occ" + tag, select(*oc_ok[j], oc0 + j, oc0));
    }
    w_row[j] = k.let("wr" + tag, oc_c[j] * (Cg * taps));
  }

  // Outer axes: per axis and tap, the clamped input coordinate and whether it is inside.
  std::vector<std::vector<detail::AxisTap>> otaps(RO);
  {
    std::vector<Val<u32>> pos(RO);
    Val<u32> r = opos;
    for (std::size_t a = RO; a-- > 0;) {
      const std::string ax = detail::conv_axis_name(a, R);
      pos[a] = a == 0 ? r : k.let("o" + ax, r % u(Pv[a]));
      if (a > 0) r = k.let("r" + ax, r / u(Pv[a]));
    }
    for (std::size_t a = 0; a < RO; ++a) {
      const std::string ax = detail::conv_axis_name(a, R);
      const std::int64_t in = s.in_size[a], last_out = static_cast<std::int64_t>(Pv[a]) - 1;
      for (std::uint32_t tp = 0; tp < s.ksize[a]; ++tp) {
        const std::int64_t off = static_cast<std::int64_t>(tp) * s.dilation[a] - s.pad[a];
        const bool lo_safe = off >= 0, hi_safe = last_out * s.stride[a] + off < in;
        const std::string tag = ax + std::to_string(tp);
        detail::AxisTap at;
        if (lo_safe && hi_safe) {
          at.index = k.let("p" + tag, pos[a] * s.stride[a] + static_cast<std::uint32_t>(off));
        } else {
          auto p = k.let("p" + tag, cast<i32>(pos[a] * s.stride[a]) + i32c(off));
          at.ok = k.let("ok" + tag, cast<u32>(p) < u(in));  // negative wraps past the size
          at.index = k.let("q" + tag, select(*at.ok, cast<u32>(p), 0u));
        }
        otaps[a].push_back(at);
      }
    }
  }
  // Per outer tap (row-major over the outer kernel axes): plane offset and validity.
  std::vector<Val<u32>> o_off(outer_taps);
  std::vector<std::optional<Val<bool>>> o_ok(outer_taps);
  for (std::uint32_t ot = 0; ot < outer_taps; ++ot) {
    Val<u32> off = 0u;
    std::optional<Val<bool>> ok;
    std::uint32_t rem = ot;
    std::uint64_t in_stride = HWin;
    for (std::size_t a = RO; a-- > 0;) {
      const auto& at = otaps[a][rem % s.ksize[a]];
      rem /= s.ksize[a];
      off = off + at.index * u(in_stride);
      in_stride *= s.in_size[a];
      if (at.ok) ok = ok ? Val<bool>(*ok && *at.ok) : *at.ok;
    }
    if (RO > 0) o_off[ot] = k.let("po" + std::to_string(ot), off);
    if (ok) ok = k.let("pok" + std::to_string(ot), *ok);
    o_ok[ot] = ok;
  }

  const TileColumns tc = tile_columns(k, ow0, VW, KW, SW, DW, PW, Wv, Wd, TW, sizeof(T));

  const TileRows tr = tile_rows(k, oh0, VH, KH, SH, DH, PH, H, TH);
  std::vector<Val<u32>> row_off(tr.uses.size());  // outside the channel loop: ih * W per row
  for (std::uint32_t rr = 0; rr < tr.uses.size(); ++rr) {
    if (!tr.uses[rr].empty()) row_off[rr] = k.let("xr" + std::to_string(rr), cast<u32>(tr.ih[rr]) * Wd);
  }

  // Accumulators [OC][VH][VW], starting at the bias.
  std::vector<Var<f32>> acc;
  acc.reserve(static_cast<std::size_t>(OC) * VH * VW);  // a reallocation would copy (re-declare) them
  for (std::uint32_t j = 0; j < OC; ++j) {
    Val<f32> init = 0.0f;
    if (s.bias) init = k.let("bias" + std::to_string(j), cast<f32>(load(bias, oc_c[j])));
    for (std::uint32_t r = 0; r < VH; ++r) {
      for (std::uint32_t q = 0; q < VW; ++q) {
        acc.emplace_back(k, init, "acc" + std::to_string(j) + "_" + std::to_string(r) + "_" + std::to_string(q));
      }
    }
  }
  auto A = [&](std::uint32_t j, std::uint32_t r, std::uint32_t q) -> Var<f32>& { return acc[(j * VH + r) * VW + q]; };

  auto x_base = k.let("xg", b * u(s.in_per_batch()) + g * (Cg * in_sp));
  // One input channel ci of the group: every tap of every output of the thread.
  auto channel = [&](const Val<u32>& ci) {
    auto xc = k.let("xc", x_base + ci * in_sp);
    auto wc = k.let("wc", ci * taps);
    for (std::uint32_t ot = 0; ot < outer_taps; ++ot) {
      auto body = [&] {
        Val<u32> xp = xc;
        if (RO > 0) xp = k.let("xp", xc + o_off[ot]);
        // Weights of (j, ot, a, e), loaded where first needed, converted once.
        std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Val<f32>>> wts;
        auto weights = [&](std::uint32_t j, std::uint32_t a) -> const std::vector<Val<f32>>& {
          auto it = wts.find({j, a});
          if (it != wts.end()) return it->second;
          std::vector<Val<f32>> v;
          for (std::uint32_t e = 0; e < KW; ++e) {
            v.push_back(k.let("w" + std::to_string(j) + "_" + std::to_string(a) + "_" + std::to_string(e),
                              cast<f32>(load(w, w_row[j] + wc + ((ot * KH + a) * KW + e)))));
          }
          return wts.emplace(std::make_pair(j, a), std::move(v)).first->second;
        };
        for (std::uint32_t rr = 0; rr < tr.uses.size(); ++rr) {
          if (tr.uses[rr].empty()) continue;
          // A row that can lie outside skips its taps (its weights are loaded before the if_,
          // so that later rows can reuse them).
          if (tr.ok[rr]) {
            for (std::uint32_t j = 0; j < OC; ++j) {
              for (const auto& ra : tr.uses[rr]) weights(j, ra.second);
            }
          }
          auto row_body = [&] {
            auto xrow = k.let("xrow", xp + row_off[rr]);
            const auto xs = load_tile_row(k, x, xrow, tc, std::to_string(rr));
            for (std::uint32_t j = 0; j < OC; ++j) {
              for (const auto& [r, a] : tr.uses[rr]) {
                const auto& wv = weights(j, a);
                for (std::uint32_t q = 0; q < VW; ++q) {
                  Val<f32> sum = A(j, r, q);
                  for (std::uint32_t e = 0; e < KW; ++e) sum = fma(xs.at(tc.col(q, e)), wv[e], sum);
                  A(j, r, q) = sum;
                }
              }
            }
          };
          if (tr.ok[rr]) {
            if_(*tr.ok[rr], row_body);
          } else {
            row_body();
          }
        }
      };
      if (o_ok[ot]) {
        if_(*o_ok[ot], body);
      } else {
        body();
      }
    }
  };
  if (Cg == 1) {
    channel(Val<u32>(&k, k.kernel().exprs.const_u32(0)));
  } else {
    const Val<u32> zero(&k, k.kernel().exprs.const_u32(0));
    for_(zero, Cg, [&](Val<u32> ci) { channel(ci); });
  }

  // Stores, one output row of one channel at a time.
  auto y_base = k.let("y0", (b * O + oc0) * out_sp + opos * HWout + oh0 * Q + ow0);
  std::optional<Val<bool>> cols_full;
  if (Q % VW != 0) cols_full = k.let("cols_full", ow0 + VW <= Q);
  for (std::uint32_t j = 0; j < OC; ++j) {
    Val<bool> ch_live = live;
    if (oc_ok[j]) ch_live = k.let("live" + std::to_string(j), live && *oc_ok[j]);
    for (std::uint32_t r = 0; r < VH; ++r) {
      Val<bool> row_live = ch_live;
      if (P % VH != 0) row_live = ch_live && oh0 + r < P;
      auto at = k.let("y" + std::to_string(j) + "_" + std::to_string(r), y_base + (j * out_sp + r * Q));
      store_tile_row(y, at, VW, Wo, ow0, Q, row_live, cols_full, [&](std::uint32_t q) { return Val<f32>(A(j, r, q)); });
    }
  }
}

}  // namespace ingot::kernels
