// kernels/conv/depthwise_conv2d_nhwc_stream.hpp — depthwise 2-D convolution, NHWC, input rows
// streamed through a work-group's shared ring by asynchronous copies (depthwise_conv2d_nhwc's default where it
// applies).
//
//   x [B, H, W, C], w [C, kh, kw], optional bias [C] -> y [B, P, Q, C] (as depthwise_conv2d_nhwc.hpp).
//
// Why: the register kernel (depthwise_conv2d_nhwc.hpp) holds every input row in flight in
// registers, so in 16-bit types a tall tile runs latency-bound at 24 warps per SM. Here the bytes
// in flight sit in shared memory: a row's copies are started `ahead` rows before its arithmetic and
// cost no register, each input element is fetched from global memory once per work-group (not once
// per thread whose window reads it), rows and columns outside the input land as zeros (no
// selects, no branches), and a copy moves up to 16 bytes.
//
// Mapping. Work-group g takes one image b, one block of CBC = CL*VC channels (cb), one strip of
// QS = NQ*V output columns (s) and one band of PB output rows (band):
// g = ((b*CB + cb)*NB + band)*NS + s. Its G = CL*NQ threads: lid = qgl*CL + cl takes the channel
// vector cl (channels cb*CBC + cl*VC .. + VC) and the V output columns s*QS + qgl*V .. + V of every
// row of the band: a VC x V x PB tile, accumulated in f32 as the register kernel does (each input
// row converted once per thread and fed to every (output row, tap row) that reads it; an output row
// stored right after its last input row, so about kh*dh/sh rows of accumulators are live).
// Ring. The band reads NR = (PB-1)*SH + (KH-1)*DH + 1 input rows ih = band*PB*SH - PH + u, of the
// strip's IWS = (QS-1)*SW + (KW-1)*DW + 1 columns: S = ahead + 2 slots of IWS x CBC elements,
// row u in slot u % S, element (column j, channel c) at slot*IWS*CBC + j*CBC + c. Each row is
// IWS * CBC/cw copies of cw elements (the largest power of two dividing CBC, up to 16 bytes), spread
// over the G threads; a copy outside the input writes zeros. The copies, waits and barriers follow
// row_ring.hpp (rows `ahead` ahead of their arithmetic, one barrier per row).
// With we (the default wherever ring and weights fit), the block's CBC x taps weights are copied into shared memory
// in row 0's commit group and each thread reads its own after row 0's barrier. (Loaded from global memory, ptxas moves
// most of those loads past that barrier, where every work-group then waits for them: docs/performance.md s40.)
//
// Contract (the library's rules):
// - launch depthwise_nhwc_stream_groups(spec, B) work-groups of depthwise_nhwc_stream_group(...)
//   threads (launch bounds declare it: larger work-groups are refused); batch is a run-time u32
//   scalar, every other size a specialisation constant;
// - a work-group past the last (a larger grid) takes work-group 0's operands and stores nothing;
//   outputs past P (band) or Q (strip) are not stored;
// - f32 accumulation (fused multiply-add, taps in row-major order), rounded once to T on the
//   store: the same values as the register kernel;
// - std::invalid_argument for a spec or tiling it does not take: bad VC, no vector copy (of 2 or more channels and 4 or
// more bytes: an odd C), a ring over kStreamSmemBytes or
//   more than 1024 threads.
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
#include "depthwise_conv2d_nhwc.hpp"
#include "direct_conv.hpp"
#include "ingot/dsl.hpp"
#include "plane_smem.hpp"
#include "row_ring.hpp"
#include "tile_columns.hpp"
#include "vector_width.hpp"

namespace ingot::kernels {

// Largest ring (the portable static shared-memory limit of CUDA, HIP and OpenCL devices).
inline constexpr std::uint64_t kStreamSmemBytes = std::uint64_t{48} * 1024;

// A tiling (the library's default per window and dtype: depthwise_nhwc_stream_default below).
struct DepthwiseNhwcStream {
  std::uint32_t V = 4;      // output columns per thread
  std::uint32_t VC = 2;     // channels per thread (requested: channel_vector_width of it is used)
  std::uint32_t CL = 32;    // channel vectors per work-group (the largest power of two <= CL dividing C/VC)
  std::uint32_t NQ = 2;     // column groups per work-group
  std::uint32_t PB = 8;     // output rows per work-group (and per thread)
  std::uint32_t ahead = 2;  // rows whose copies are in flight while one row is read
  // 1: the block's weights (CBC x taps) copied into shared memory with the band's first row and read from there after
  // its barrier (else each thread loads its own from global memory; ptxas moves most of those loads past the first
  // barrier, where every work-group then waits for them: the grouped kernels' "we", step 40).
  std::uint32_t we = 0;
};

// The geometry of a spec and tiling (trace time).
struct NhwcStreamLayout {
  std::uint32_t VC = 1, CL = 1, CBC = 1, CB = 1;  // channels per thread, lanes, channels and blocks
  std::uint32_t QS = 1, NS = 1, PB = 1, NB = 1;   // strip width and strips, band height and bands
  std::uint32_t IWS = 1, NR = 1, S = 2;           // strip input columns, band input rows, ring slots
  std::uint32_t cw = 1, G = 1;                    // copy width (elements), threads per work-group
  std::uint32_t ws = 0, wcw = 1;                  // we: the block's weights (elements) and their copy width
  std::uint64_t bytes = 0;                        // the ring (and the weights)
};

// The default tiling per window and element size, the fastest measured (docs/performance.md s11, s23, s24, s28,
// s30): narrow windows (kw < 5) 4 columns x 2 channels per thread, in 16-bit 64 channel vectors x 1 column group per
// work-group and 6 rows per thread copied three ahead, in f32 32 x 2 and 4 rows two ahead; wide windows 4 columns x 1
// channel, 32 x 2, in f32 10 rows four ahead, in 16-bit (whose default is the tensor-core kernel) 14 rows two ahead.
inline DepthwiseNhwcStream depthwise_nhwc_stream_default(std::uint32_t kw, std::size_t elem_bytes) {
  if (kw >= 5)
    return elem_bytes == 4 ? DepthwiseNhwcStream{4, 1, 32, 2, 10, 4} : DepthwiseNhwcStream{4, 1, 32, 2, 14, 2};
  return elem_bytes == 2 ? DepthwiseNhwcStream{4, 2, 64, 1, 6, 3} : DepthwiseNhwcStream{4, 2, 32, 2, 4, 2};
}

// Throws std::invalid_argument for a spec or tiling the kernel does not take.
inline NhwcStreamLayout depthwise_nhwc_stream_layout(const ConvSpec& s, const DepthwiseNhwcStream& t,
                                                     std::uint32_t elem_bytes) {
  check_depthwise_nhwc(s, {t.V, t.VC, 1});
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument(s.name + ": the stream kernel (depthwise_conv2d_nhwc_stream.hpp) " + why);
  };
  NhwcStreamLayout L;
  const std::uint32_t C = s.in_channels;
  L.VC = channel_vector_width("depthwise_conv2d_nhwc", C, t.VC);
  L.CL = depthwise_nhwc_channel_lanes(C / L.VC, t.CL == 0 ? C / L.VC : t.CL);
  L.CBC = L.CL * L.VC;
  L.CB = C / L.CBC;
  // The copy width: the largest power of two dividing CBC, at most 16 bytes.
  L.cw = 1;
  while (L.CBC % (L.cw * 2) == 0 && L.cw * 2 * elem_bytes <= 16) L.cw *= 2;
  if (L.cw < 2 || L.cw * elem_bytes < 4) {
    fail("copies vectors of 2 or more channels and 4 or more bytes of a pixel: CL*VC = " + std::to_string(L.CBC) +
         " channels of " + std::to_string(elem_bytes) + " bytes (C = " + std::to_string(C) + ") allow only " +
         std::to_string(L.cw) + "-channel copies");
  }
  const auto P = static_cast<std::uint32_t>(s.out_len(0)), Q = static_cast<std::uint32_t>(s.out_len(1));
  L.QS = t.NQ * t.V;
  L.NS = (Q + L.QS - 1) / L.QS;
  L.PB = t.PB;
  L.NB = (P + L.PB - 1) / L.PB;
  L.IWS = (L.QS - 1) * s.stride[1] + (s.ksize[1] - 1) * s.dilation[1] + 1;
  L.NR = (L.PB - 1) * s.stride[0] + (s.ksize[0] - 1) * s.dilation[0] + 1;
  L.S = ring_slots(t.ahead);
  L.G = L.CL * t.NQ;
  if (L.G > 1024) fail("CL*NQ = " + std::to_string(L.G) + " threads per work-group must be <= 1024");
  L.bytes = static_cast<std::uint64_t>(L.S) * L.IWS * L.CBC * elem_bytes;
  if (t.we > 1) fail("we = " + std::to_string(t.we) + " must be 0 or 1");
  if (t.we == 1) {
    // The block's weights are CBC * taps consecutive elements from cb * CBC * taps: copies of the largest width (at
    // most 16 bytes) dividing that count; at least 4 bytes, since CBC * elem_bytes is a multiple of 4 (the copy width
    // check above).
    L.ws = L.CBC * s.ksize[0] * s.ksize[1];
    L.wcw = 1;
    while (L.ws % (L.wcw * 2) == 0 && L.wcw * 2 * elem_bytes <= 16) L.wcw *= 2;
    L.bytes += static_cast<std::uint64_t>(L.ws) * elem_bytes;
  }
  if (L.bytes > kStreamSmemBytes) {
    fail("ring of " + std::to_string(L.S) + " rows x " + std::to_string(L.IWS) + " columns x " + std::to_string(L.CBC) +
         " channels" + (t.we ? std::string(" and the block's weights") : std::string()) + " = " +
         std::to_string(L.bytes) + " bytes exceeds " + std::to_string(kStreamSmemBytes));
  }
  return L;
}

// Why the kernel does not take this spec and tiling ("" when it does).
inline std::string depthwise_nhwc_stream_refusal(const ConvSpec& s, const DepthwiseNhwcStream& t,
                                                 std::uint32_t elem_bytes) {
  try {
    (void)depthwise_nhwc_stream_layout(s, t, elem_bytes);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

inline std::uint32_t depthwise_nhwc_stream_group(const ConvSpec& s, const DepthwiseNhwcStream& t,
                                                 std::uint32_t elem_bytes) {
  return depthwise_nhwc_stream_layout(s, t, elem_bytes).G;
}
inline std::uint64_t depthwise_nhwc_stream_groups(const ConvSpec& s, const DepthwiseNhwcStream& t,
                                                  std::uint32_t elem_bytes, std::uint64_t batch) {
  const NhwcStreamLayout L = depthwise_nhwc_stream_layout(s, t, elem_bytes);
  return batch * L.CB * L.NB * L.NS;
}

template <class T>
void depthwise_conv2d_nhwc_stream(dsl::KernelBuilder& k, const ConvSpec& s, const DepthwiseNhwcStream& t) {
  using namespace ingot::dsl;
  const NhwcStreamLayout L = depthwise_nhwc_stream_layout(s, t, static_cast<std::uint32_t>(sizeof(T)));
  const std::uint32_t V = t.V, VC = L.VC, CL = L.CL, CBC = L.CBC, G = L.G, S = L.S, IWS = L.IWS, cw = L.cw;
  const std::uint32_t VW = channel_access_width(VC, static_cast<std::uint32_t>(sizeof(T)));
  const std::uint32_t C = s.in_channels, H = s.in_size[0], W = s.in_size[1];
  const std::uint32_t KH = s.ksize[0], KW = s.ksize[1], SH = s.stride[0], SW = s.stride[1];
  const std::uint32_t PH = s.pad[0], PW = s.pad[1], DW = s.dilation[1];
  const auto P = static_cast<std::uint32_t>(s.out_len(0)), Q = static_cast<std::uint32_t>(s.out_len(1));
  const std::uint32_t taps = KH * KW, SL = IWS * CBC, per_batch = L.CB * L.NB * L.NS;

  auto batch = k.scalar<u32>("batch");
  auto x = k.in<T>("x", batch * (H * W * C));
  auto w = k.in<T>("w", C * taps);
  In<T> bias;
  if (s.bias) bias = k.in<T>("bias", C);
  auto y = k.out<T>("y", batch * (P * Q * C));
  auto xs = k.shared<T>("xs", S * SL);
  std::optional<Shared<T>> ws;  // we: the block's weights
  if (t.we) ws = k.shared<T>("ws", L.ws);

  auto g0 = k.let("g0", k.group_id(0));
  auto lid = k.let("lid", k.local_id(0));
  auto live = k.let("live", g0 < batch * per_batch);
  auto g = k.let("g", select(live, g0, 0u));  // a work-group past the last takes work-group 0's operands
  auto strip = L.NS == 1 ? Val<u32>(0u) : k.let("strip", g % L.NS);
  auto r1 = L.NS == 1 ? Val<u32>(g) : k.let("r1", g / L.NS);
  auto band = L.NB == 1 ? Val<u32>(0u) : k.let("band", r1 % L.NB);
  auto bc = L.NB == 1 ? r1 : k.let("bc", r1 / L.NB);  // b*CB + cb
  auto cb = L.CB == 1 ? Val<u32>(0u) : k.let("cb", bc % L.CB);
  auto b = L.CB == 1 ? bc : k.let("b", bc / L.CB);
  auto cl = CL == 1 ? Val<u32>(0u) : k.let("cl", lid % CL);
  auto qgl = t.NQ == 1 ? Val<u32>(0u) : k.let("qgl", lid / CL);
  auto c0 = k.let("c0", cb * CBC + cl * VC);
  auto p0 = L.NB == 1 ? Val<u32>(0u) : k.let("p0", band * L.PB);
  auto q0 = k.let("q0", strip * L.QS + qgl * V);

  // The copies of one row: units m = lid + r*G < IWS * CBC/cw, unit m = column m / upc, chunk
  // m % upc; per round the column part of the source (clamped into the row), whether the column
  // is inside [0, W), and the destination in the slot, computed once.
  const std::uint32_t upc = CBC / cw, units = IWS * upc;
  std::vector<RingCopy> rounds;
  auto col0 = k.let("col0", strip * (L.QS * SW));  // input column of strip column j: col0 - PW + j
  auto xb = k.let("xb", b * (H * W * C) + cb * CBC);
  for (std::uint32_t r = 0; r * G < units; ++r) {
    const auto rt = std::to_string(r);
    RingCopy rd;
    auto m = k.let("m" + rt, lid + r * G);
    if ((r + 1) * G > units) rd.valid = k.let("mv" + rt, m < units);
    auto j = upc == 1 ? m : Val<u32>(k.let("mj" + rt, m / upc));
    auto iw = k.let("iw" + rt, col0 + j - PW);  // u32: a column left of 0 wraps past W
    rd.ok = k.let("okc" + rt, iw < W);
    const Val<u32> chunk = upc == 1 ? Val<u32>(0u) : Val<u32>(m % upc);
    rd.src = k.let("src" + rt, select(rd.ok, iw, 0u) * C + chunk * cw);
    rd.dst = k.let("dst" + rt, j * CBC + chunk * cw);
    rounds.push_back(rd);
  }
  auto rbase = k.let("rbase", p0 * SH);  // input row of band row u: rbase - PH + u
  const std::int64_t rb_max = static_cast<std::int64_t>(L.NB - 1) * L.PB * SH - PH;
  auto issue_row = [&](std::uint32_t u) {
    issue_ring_row(k, xs, x, rounds, cw, (u % S) * SL, xb, rbase, u, PH, rb_max, H, W * C);
  };

  // Weights of the thread's VC channels: w[c0*taps ..) of VC*taps elements, in chunks of VW; with we, the same from the
  // block's copy in shared memory (its elements cl*VC*taps ..), once the first row's barrier has passed.
  std::vector<Val<f32>> wf;
  const auto load_weights = [&](const auto& from, const Val<u32>& base) {
    for (std::uint32_t m = 0; m < VC * taps; m += VW) {
      for (const auto& v : load_channels(from, m == 0 ? base : Val<u32>(base + m), VW, VW)) {
        wf.push_back(k.let("w" + std::to_string(m), cast<f32>(v)));
      }
    }
  };
  if (!ws) load_weights(w, k.let("wb", c0 * taps));
  auto weight = [&](std::uint32_t e, std::uint32_t ty, std::uint32_t tx) { return wf[e * taps + ty * KW + tx]; };

  std::vector<Val<f32>> init(std::size_t{V} * VC, Val<f32>(0.0f));
  if (s.bias) {
    const auto bv = load_channels(bias, c0, VC, VW);
    for (std::uint32_t e = 0; e < VC; ++e) {
      auto be = k.let("bias" + std::to_string(e), cast<f32>(bv[e]));
      for (std::uint32_t j = 0; j < V; ++j) init[j * VC + e] = be;
    }
  }
  std::vector<std::vector<Var<f32>>> acc(L.PB);
  for (std::uint32_t rr = 0; rr < L.PB; ++rr) {
    acc[rr].reserve(std::size_t{V} * VC);  // a reallocation would copy (re-declare) the variables
    for (std::uint32_t a = 0; a < V * VC; ++a) acc[rr].emplace_back(k, init[a], "acc" + std::to_string(rr));
  }

  // The thread's columns in the strip: offsets (from its first column qgl*V*SW) its V windows read.
  std::set<std::uint32_t> col_offsets;
  for (std::uint32_t j = 0; j < V; ++j) {
    for (std::uint32_t tx = 0; tx < KW; ++tx) col_offsets.insert(j * SW + tx * DW);
  }
  auto tb = k.let("tb", qgl * (V * SW * CBC) + cl * VC);

  // Stores of output row rr (VC channels per output column), after its last input row.
  auto yb = k.let("yb", ((b * P + p0) * Q + q0) * C + c0);
  auto store_row = [&](std::uint32_t rr) {
    Val<bool> row_live = live;
    if (P % L.PB != 0) row_live = live && p0 + rr < P;
    if_(row_live, [&] {
      for (std::uint32_t j = 0; j < V; ++j) {
        auto put = [&] {
          const std::uint32_t off = rr * Q * C + j * C;
          std::vector<Val<f32>> v;
          for (std::uint32_t e = 0; e < VC; ++e) v.push_back(acc[rr][j * VC + e]);
          store_channels(y, off == 0 ? Val<u32>(yb) : Val<u32>(yb + off), v, VW);
        };
        if (Q % L.QS == 0) {
          put();
        } else {
          if_(q0 + j < Q, put);
        }
      }
    });
  };

  const auto uses = tile_row_uses(L.PB, KH, SH, s.dilation[0]);
  const auto issue_rows = [&](std::uint32_t u) {
    if (u == 0 && ws) copy_range_async(k, *ws, w, cb * L.ws, L.ws, L.wcw, lid, G);  // in row 0's commit group
    issue_row(u);
  };
  for_ring_rows(k, L.NR, t.ahead, issue_rows, [&](std::uint32_t u) {
    if (u == 0 && ws) load_weights(*ws, k.let("wb", cl * (VC * taps)));  // (row 0's wait brought them)
    if (uses[u].empty()) return;
    const std::uint32_t slot = (u % S) * SL;
    std::map<std::uint32_t, Val<f32>> sum;  // acc index rr*V*VC + a -> running sum
    for (const std::uint32_t off : col_offsets) {
      const auto xv = load_channels(xs, tb + (slot + off * CBC), VC, VW);
      for (std::uint32_t e = 0; e < VC; ++e) {
        auto xf = k.let("x" + std::to_string(u) + "_" + std::to_string(off), cast<f32>(xv[e]));
        for (const auto& [rr, ty] : uses[u]) {
          for (std::uint32_t tx = 0; tx < KW; ++tx) {
            const std::uint32_t tt = tx * DW;
            if (off < tt || (off - tt) % SW != 0 || (off - tt) / SW >= V) continue;
            const std::uint32_t j = (off - tt) / SW;
            const std::uint32_t a = rr * V * VC + j * VC + e;
            const auto it = sum.find(a);
            const Val<f32> prev = it == sum.end() ? Val<f32>(acc[rr][j * VC + e]) : it->second;
            sum.insert_or_assign(a, fma(xf, weight(e, ty, tx), prev));
          }
        }
      }
    }
    for (const auto& [a, v] : sum) acc[a / (V * VC)][a % (V * VC)] = v;
    for (const auto& [rr, ty] : uses[u]) {
      if (ty == KH - 1) store_row(rr);
    }
  });
}

}  // namespace ingot::kernels
