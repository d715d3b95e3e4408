// kernels/conv/depthwise_conv2d_nhwc.hpp — a dedicated depthwise 2-D convolution for
// channels-last (NHWC) tensors, written for memory bandwidth: vector loads along channels, several
// outputs per thread, every input element loaded and converted once per thread.
//
//   x [B, H, W, C], w [C, kh, kw], optional bias [C] -> y [B, P, Q, C]
//   P = (H + 2*pad_h - dil_h*(kh-1) - 1) / stride_h + 1 (Q likewise along W)
//   y[b,p,q,c] = bias[c] + sum_{ty<kh, tx<kw} x[b, p*sh + ty*dh - ph, q*sw + tx*dw - pw, c] * w[c,ty,tx]
//   (zero padding). Any kh, kw, stride, padding and dilation per axis.
//
// Mapping. Each thread owns a vector of VC consecutive channels c0 = cv*VC .. c0+VC-1, V
// consecutive output columns q0 = qg*V .. q0+V-1 and VH consecutive output rows p0 = pg*VH ..
// p0+VH-1 of one image b. The CV = C/VC channel vectors of a pixel are split into CB blocks of CL
// (cv = cb*CL + cl, CL from the tiling; default: CB = 1, CL = CV). Thread index
// i = (((b*CB + cb)*QG + qg)*PG + pg)*CL + cl with QG = ceil(Q/V), PG = ceil(P/VH): consecutive threads take
// consecutive channel vectors of one pixel, so a warp reads and writes contiguous bytes; then the next row group of the
// same column group and channel block (with CL*VC < C a work-group covers a column of pixels and shares the input rows
// between its tiles through L1; with CL = CV it covers about 256/CV pixels of one column). The thread walks its
// (VH-1)*sh + (kh-1)*dh + 1 input rows in order. Of each it loads every distinct input column its V windows touch once
// (V + kw - 1 columns at stride and dilation 1), one VC-wide vector load per column, converts each element to f32 once
// and feeds it to every (output row, tap row) and (output column, tap column) that reads it. An output row is stored
// (vector stores, VC channels per output column) right after its last input row, so about
// ceil(kh*dh/sh) rows of V*VC f32 accumulators are live at a time; a tall tile (VH > 1) loads and
// converts each input row once for up to kh output rows instead of kh times.
// The weights of the VC channels, w[c0 .. c0+VC) x [kh, kw], are VC*kh*kw consecutive elements
// starting at a multiple of VC: they are read as vector loads of that block, each loaded and
// converted once per thread (before the first input row that needs it, outside any branch).
//
// Spec parameters (besides the convolution's): V (outputs per thread along Q, 1..16), VC
// (channels per thread, a power of two in [1, 16]) and VH (output rows per thread, 1..16);
// default depthwise_nhwc_default_tiling(kw). The kernel uses the largest power of two <= VC that
// divides C (channel_vector_width; 1 = scalar accesses for odd C); a thread's VC channels are
// read and written in accesses of at most 16 bytes (8 elements of f16/bf16: one access; 4 of
// f32: two). None depends on the element type, so neither does the launch.
//
// Contract (the library's rules):
// - launch grid_1d(B * ceil(P/VH) * ceil(Q/V) * C/VC, any group size); the batch B is a
//   run-time u32 scalar ("batch"), every other size is a specialisation constant;
// - tail threads (index >= the thread count) take thread 0's coordinates for every read and skip
//   their stores; outputs past Q (Q not a multiple of V) or past P (P not a multiple of VH) are
//   not stored; their input columns are read at clamped in-range indices, their input rows
//   outside [0, H) skipped;
// - padding: an input column outside [0, W) is read at column 0 and select()ed to 0; an input
//   row outside [0, H) is skipped by a (warp-uniform) branch; bounds that hold for every
//   thread (known at trace time) emit no test;
// - f32 accumulation (fused multiply-add, taps in row-major order) for every element type,
//   rounded once to T on the store;
// - std::invalid_argument for a bad spec or tiling (ConvSpec::validate, not depthwise, V or VH
//   outside [1, 16], bad VC, V*VC > 128).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "channel_vectors.hpp"
#include "direct_conv.hpp"
#include "ingot/dsl.hpp"
#include "tile_columns.hpp"
#include "vector_width.hpp"

namespace ingot::kernels {

// The tiling: V outputs per thread along Q, VC channels per thread (requested: the kernel uses
// channel_vector_width of it), VH output rows per thread.
struct DepthwiseNhwcTiling {
  std::uint32_t V;
  std::uint32_t VC;
  std::uint32_t VH = 1;
  // Load (and convert) every input row of the tile before the first multiply-add, so all of the
  // thread's loads are in flight at once; else each row is loaded just before its arithmetic.
  bool preload = true;
  // Consecutive threads take CL consecutive channel vectors of one pixel (the largest power of two
  // <= CL dividing C/VC; 0 or >= C/VC: all of them), then the next row group: with CL*VC < C a
  // work-group covers a column of pixels of CL*VC channels (less L2 traffic, no faster: docs/performance.md s4;
  // so the default is 0: every channel of a pixel, then the next row group).
  std::uint32_t CL = 0;
  // With preload: 0 loads every row first; n > 0 loads each row n rows ahead of its arithmetic
  // (tall tiles: rows u .. u + n in flight while row u is multiplied).
  std::uint32_t ahead = 0;
};
// The register kernel's default tiling (the library's default is the stream kernel where it applies,
// depthwise_conv2d_nhwc_stream.hpp; this one runs for an odd C or a case naming its tiling). Narrow windows: V = 4
// columns x VC = 2 channels x VH = 8 rows per thread, each input row loaded two rows before its arithmetic
// (docs/performance.md s10: the earlier V2 VC2 VH4 preloaded was issue-bound in 16-bit at 33 PTX instructions per
// output, the tall tile needs 23; with rows one ahead it is latency-bound). Wide windows (kw >= 5, FMA-bound): 8
// columns x 2 channels x 1 row, rows loaded one at a time (preloading 7 rows needs 159 registers). None depends on the
// element type, so neither does the launch.
inline constexpr DepthwiseNhwcTiling kDepthwiseNhwcDefaultTiling{4, 2, 8, true, 0, 2};
inline constexpr DepthwiseNhwcTiling kDepthwiseNhwcWideDefaultTiling{8, 2, 1, false};
inline constexpr DepthwiseNhwcTiling depthwise_nhwc_default_tiling(std::uint32_t kw) {
  return kw >= 5 ? kDepthwiseNhwcWideDefaultTiling : kDepthwiseNhwcDefaultTiling;
}

// Channel vectors per pixel that consecutive threads take: the largest power of two <= requested
// that divides CV (the channel vectors of a pixel); CV when requested is 0 or >= CV.
inline constexpr std::uint32_t depthwise_nhwc_channel_lanes(std::uint32_t CV, std::uint32_t requested) {
  if (requested == 0 || requested >= CV) return CV;
  std::uint32_t l = 1;
  while (l * 2 <= requested && CV % (l * 2) == 0) l *= 2;
  return l;
}

// Throws std::invalid_argument for a spec or tiling the kernel does not take.
inline void check_depthwise_nhwc(const ConvSpec& s, const DepthwiseNhwcTiling& t) {
  s.validate();
  auto fail = [&](const std::string& why) { throw std::invalid_argument(s.name + ": " + why); };
  if (s.rank() != 2 || s.layout != ConvLayout::ChannelsLast) fail("needs a 2-D channels-last spec");
  if (s.groups != s.in_channels || s.out_channels != s.in_channels) fail("needs groups = C = O (depthwise)");
  if (t.V < 1 || t.V > 16) fail("V (outputs per thread) = " + std::to_string(t.V) + " must be in [1, 16]");
  if (t.VH < 1 || t.VH > 16) fail("VH (output rows per thread) = " + std::to_string(t.VH) + " must be in [1, 16]");
  const std::uint32_t VC = channel_vector_width("depthwise_conv2d_nhwc", s.in_channels, t.VC);
  if (t.V * VC > 128) fail("V*VC = " + std::to_string(t.V * VC) + " accumulators per row must be <= 128");
}

// Threads of one batch: ceil(P/VH) * ceil(Q/V) * C/VC (VC as the kernel uses it).
inline std::uint64_t depthwise_nhwc_threads_per_batch(const ConvSpec& s, const DepthwiseNhwcTiling& t) {
  const std::uint64_t p = s.out_len(0), q = s.out_len(1);
  return ((p + t.VH - 1) / t.VH) * ((q + t.V - 1) / t.V) *
         (s.in_channels / channel_vector_width("depthwise_conv2d_nhwc", s.in_channels, t.VC));
}

template <class T>
void depthwise_conv2d_nhwc(dsl::KernelBuilder& k, const ConvSpec& s, const DepthwiseNhwcTiling& tiling) {
  using namespace ingot::dsl;
  check_depthwise_nhwc(s, tiling);
  const std::uint32_t V = tiling.V, VH = tiling.VH;
  const std::uint32_t VC = channel_vector_width("depthwise_conv2d_nhwc", s.in_channels, tiling.VC);
  const std::uint32_t VW = channel_access_width(VC, static_cast<std::uint32_t>(sizeof(T)));

  const std::uint32_t C = s.in_channels, H = s.in_size[0], W = s.in_size[1];
  const std::uint32_t KH = s.ksize[0], KW = s.ksize[1], SH = s.stride[0], SW = s.stride[1];
  const std::uint32_t PH = s.pad[0], PW = s.pad[1], DH = s.dilation[0], DW = s.dilation[1];
  const auto P = static_cast<std::uint32_t>(s.out_len(0)), Q = static_cast<std::uint32_t>(s.out_len(1));
  const std::uint32_t CV = C / VC, QG = (Q + V - 1) / V, PG = (P + VH - 1) / VH, taps = KH * KW;
  const std::uint32_t CL = depthwise_nhwc_channel_lanes(CV, tiling.CL), CB = CV / CL;
  // validate() bounds P*Q*C and H*W*C by 2^32; the thread count per batch is at most P*Q*C.

  auto batch = k.scalar<u32>("batch");
  auto x = k.in<T>("x", batch * (H * W * C));
  auto w = k.in<T>("w", C * taps);
  In<T> bias;
  if (s.bias) bias = k.in<T>("bias", C);
  auto y = k.out<T>("y", batch * (P * Q * C));

  auto gid = k.let("gid", k.program_id(0));
  auto n = k.let("n", batch * (PG * QG * CV));
  auto live = k.let("live", gid < n);
  auto i = k.let("i", select(live, gid, 0u));  // tail threads read with thread 0's coordinates
  // i = (((b*CB + cb)*QG + qg)*PG + pg)*CL + cl; channel vector cv = cb*CL + cl.
  auto cl = CL == 1 ? Val<u32>(0u) : k.let("cl", i % CL);
  auto r = CL == 1 ? Val<u32>(i) : k.let("r", i / CL);
  auto pg = PG == 1 ? Val<u32>(0u) : k.let("pg", r % PG);
  auto r2 = PG == 1 ? r : k.let("r2", r / PG);
  auto qg = QG == 1 ? Val<u32>(0u) : k.let("qg", r2 % QG);
  auto bc = QG == 1 ? r2 : k.let("bc", r2 / QG);  // b*CB + cb
  auto cb = CB == 1 ? Val<u32>(0u) : k.let("cb", bc % CB);
  auto b = CB == 1 ? bc : k.let("b", bc / CB);
  auto cv = CB == 1 ? cl : CL == 1 ? cb : k.let("cv", cb * CL + cl);
  auto c0 = VC == 1 ? cv : k.let("c0", cv * VC);
  auto q0 = V == 1 ? qg : k.let("q0", qg * V);
  auto p0 = VH == 1 ? pg : k.let("p0", pg * VH);
  auto xb = k.let("xb", b * (H * W * C) + c0);

  // VC consecutive elements at index (a multiple of VC): VC / VW accesses.
  auto load_c = [&](const In<T>& buf, const Val<u32>& index) { return load_channels(buf, index, VC, VW); };

  // Accumulators acc[r][j*VC + e] of output row p0+r, column q0+j, channel c0+e.
  std::vector<Val<f32>> init(std::size_t{V} * VC, Val<f32>(0.0f));
  if (s.bias) {
    const auto bv = load_c(bias, c0);
    for (std::uint32_t e = 0; e < VC; ++e) {
      auto be = k.let("bias" + std::to_string(e), cast<f32>(bv[e]));
      for (std::uint32_t j = 0; j < V; ++j) init[j * VC + e] = be;
    }
  }
  std::vector<std::vector<Var<f32>>> acc(VH);
  for (std::uint32_t rr = 0; rr < VH; ++rr) {
    acc[rr].reserve(std::size_t{V} * VC);  // a reallocation would copy (re-declare) the variables
    for (std::uint32_t a = 0; a < V * VC; ++a) acc[rr].emplace_back(k, init[a], "acc" + std::to_string(rr));
  }

  // Weights: chunk m holds w[c0*taps + m*VW .. + VW), loaded and converted once, before the first
  // input row that needs it (outside any branch, so later rows may use it). c0*taps is a multiple
  // of VC.
  std::map<std::uint32_t, std::vector<Val<f32>>> wchunk;
  auto wbase = k.let("wb", c0 * taps);
  auto need_weight_row = [&](std::uint32_t ty) {
    for (std::uint32_t e = 0; e < VC; ++e) {
      for (std::uint32_t tx = 0; tx < KW; ++tx) {
        const std::uint32_t m = (e * taps + ty * KW + tx) / VW;
        if (wchunk.count(m)) continue;
        std::vector<Val<f32>> wf;
        for (const auto& v : load_channels(w, m == 0 ? wbase : Val<u32>(wbase + m * VW), VW, VW)) {
          wf.push_back(k.let("w" + std::to_string(m), cast<f32>(v)));
        }
        wchunk.emplace(m, std::move(wf));
      }
    }
  };
  auto weight = [&](std::uint32_t e, std::uint32_t ty, std::uint32_t tx) {
    const std::uint32_t off = e * taps + ty * KW + tx;
    return wchunk.at(off / VW)[off % VW];
  };

  // Distinct input column offsets of the V windows (relative to q0*SW - PW), each with its
  // element offset into the row (clamped in range) and whether it is inside [0, W).
  std::set<std::uint32_t> col_offsets;
  for (std::uint32_t j = 0; j < V; ++j) {
    for (std::uint32_t tx = 0; tx < KW; ++tx) col_offsets.insert(j * SW + tx * DW);
  }
  struct Col {
    Val<u32> elem;  // column * C
    std::optional<Val<bool>> ok;
  };
  std::map<std::uint32_t, Col> cols;
  const std::int64_t last_q0 = static_cast<std::int64_t>(QG - 1) * V;  // the largest q0 of any thread
  auto qs = k.let("qs", q0 * SW);
  for (const std::uint32_t off : col_offsets) {
    const std::int64_t delta = static_cast<std::int64_t>(off) - PW;
    const bool lo_safe = delta >= 0;
    const bool hi_safe = last_q0 * SW + delta < static_cast<std::int64_t>(W);
    const auto tag = std::to_string(off);
    // u32 arithmetic wraps: a column left of 0 becomes a huge value, caught by one "< W" test.
    Val<u32> ix = delta >= 0 ? Val<u32>(qs + static_cast<std::uint32_t>(delta))
                             : Val<u32>(qs - static_cast<std::uint32_t>(-delta));
    Col col;
    if (lo_safe && hi_safe) {
      col.elem = k.let("cx" + tag, ix * C);
    } else {
      auto ixl = k.let("ix" + tag, ix);
      col.ok = k.let("okx" + tag, ixl < W);
      col.elem = k.let("cx" + tag, select(*col.ok, ixl, 0u) * C);
    }
    cols.emplace(off, col);
  }

  // Stores of output row rr of the tile (VC channels per output column).
  auto yb = k.let("yb", ((b * P + p0) * Q + q0) * C + c0);
  auto store_row = [&](std::uint32_t rr) {
    Val<bool> row_live = live;
    if (P % VH != 0) row_live = live && p0 + rr < P;
    if_(row_live, [&] {
      for (std::uint32_t j = 0; j < V; ++j) {
        auto put = [&] {
          const std::uint32_t off = rr * Q * C + j * C;
          const Val<u32> at = off == 0 ? Val<u32>(yb) : Val<u32>(yb + off);
          std::vector<Val<f32>> v;
          for (std::uint32_t e = 0; e < VC; ++e) v.push_back(acc[rr][j * VC + e]);
          store_channels(y, at, v, VW);
        };
        if (Q % V == 0 || j == 0) {
          put();
        } else if (QG == 1) {
          if (j < Q) put();  // one group per row: q0 = 0 is known
        } else {
          if_(q0 + j < Q, put);
        }
      }
    });
  };

  // Input rows in order; each is loaded and converted once and feeds every (output row, tap row)
  // that reads it. An output row is stored right after its last input row, so only about
  // KH*DH/SH rows of accumulators are live at a time.
  const TileRows tr = tile_rows(k, p0, VH, KH, SH, DH, PH, H, PG);
  // Input row u: column offset -> its VC elements as f32 (0 outside the input).
  std::vector<std::map<std::uint32_t, std::vector<Val<f32>>>> xrows(tr.uses.size());
  auto load_row = [&](std::uint32_t u, const Val<u32>& iy) {
    const auto ut = std::to_string(u);
    auto rb = k.let("xr" + ut, xb + iy * (W * C));
    for (const auto& [off, col] : cols) {
      const auto xv = load_c(x, rb + col.elem);
      auto& vals = xrows[u][off];
      for (std::uint32_t e = 0; e < VC; ++e) {
        Val<f32> xf = cast<f32>(xv[e]);
        if (col.ok) xf = select(*col.ok, xf, 0.0f);
        vals.push_back(k.let("x" + ut + "_" + std::to_string(off), xf));
      }
    }
  };
  const auto rows = static_cast<std::uint32_t>(tr.uses.size());
  std::uint32_t loaded = 0;  // preload: rows [0, loaded) are loaded
  const auto load_through = [&](std::uint32_t last) {
    for (; tiling.preload && loaded < rows && loaded <= last; ++loaded) {
      if (!tr.uses[loaded].empty()) load_row(loaded, tr.in_range[loaded]);
    }
  };
  load_through(tiling.ahead ? tiling.ahead - 1 : rows - 1);
  for (std::uint32_t u = 0; u < rows; ++u) {
    if (tr.uses[u].empty()) continue;
    load_through(u + tiling.ahead);
    for (const auto& [rr, ty] : tr.uses[u]) need_weight_row(ty);
    auto row = [&] {
      if (!tiling.preload) load_row(u, cast<u32>(tr.ih[u]));  // under the row's branch
      std::map<std::uint32_t, Val<f32>> sum;                  // acc index rr*V*VC + a -> running sum
      for (const auto& [off, vals] : xrows[u]) {
        for (std::uint32_t e = 0; e < VC; ++e) {
          // Every (output row rr, tap row ty; output j, tap tx) that reads this element.
          for (const auto& [rr, ty] : tr.uses[u]) {
            for (std::uint32_t tx = 0; tx < KW; ++tx) {
              const std::uint32_t t = tx * DW;
              if (off < t || (off - t) % SW != 0 || (off - t) / SW >= V) continue;
              const std::uint32_t j = (off - t) / SW;
              const std::uint32_t a = rr * V * VC + j * VC + e;
              const auto it = sum.find(a);
              const Val<f32> prev = it == sum.end() ? Val<f32>(acc[rr][j * VC + e]) : it->second;
              sum.insert_or_assign(a, fma(vals[e], weight(e, ty, tx), prev));
            }
          }
        }
      }
      for (const auto& [a, v] : sum) acc[a / (V * VC)][a % (V * VC)] = v;
    };
    if (tr.ok[u]) {
      if_(*tr.ok[u], row);  // a row above or below the input adds nothing
    } else {
      row();
    }
    for (const auto& [rr, ty] : tr.uses[u]) {
      if (ty == KH - 1) store_row(rr);  // the last input row of output row rr
    }
  }
}

}  // namespace ingot::kernels
