// kernels/conv/depthwise_conv2d_nhwc_rows.hpp — depthwise 2-D convolution, NHWC, on persistent
// work-groups that each stream one run of output rows through a shared ring (depthwise_conv2d_nhwc
// with stream = 1 and pw > 0).
//
//   x [B, H, W, C], w [C, kh, kw], optional bias [C] -> y [B, P, Q, C] (as depthwise_conv2d_nhwc.hpp).
//
// Why: the band kernel (depthwise_conv2d_nhwc_stream.hpp) gives each work-group PB output rows, so
// the work-groups of the last wave finish at scattered times and the device drains for about one
// work-group's lifetime (on the H200 the 3x3 default's time is ~4 us over a same-size copy's slope,
// 2026-12-03), and each band re-reads kh-1 halo rows. Here pw work-groups per strip and channel
// block (in all about as many as the device holds at once) split the output rows evenly, so they all end
// together, and a work-group reads kh-1 halo rows per segment of a run, not per PB rows.
//
// Mapping. The threads, their VC x V tiles, strips (s) of QS = NQ*V output columns and channel
// blocks (cb) of CBC = CL*VC channels are the band kernel's. Work-group g = (run*CB + cb)*NS + s
// takes strip s, channel block cb, and run `run` of their B*P output rows (b*P + p), cut into pw
// runs of per = ceil(B*P / pw) rows: one or more segments (the part of a run in one image). So the
// work-groups of one run index, adjacent in g, walk the same rows of every strip and channel block
// together: they share each halo column through L2 and read whole pixel rows at once. (Measured on
// the H200, 2026-12-03: cutting all rows into one sequence lost both, 62% of copy against the band
// kernel's 83%; strips adjacent but channel blocks in sequence, 75%.) The copies (up to 16 bytes,
// zeros outside the input) and the ring's rows-ahead schedule are the band kernel's (row_ring.hpp),
// with these differences:
// - a segment of n output rows p0 .. p0+n-1 streams its n + kh - 1 input rows in a run-time loop
//   unrolled by the ring's S slots (a multiple of kh, at least ahead + 2), so input row u of the
//   segment sits in slot u % S and output row o accumulates in register row o % kh: both fixed per
//   sub-step;
// - input row u feeds output rows u - ty (ty < kh); the first tap row (ty = 0) starts from the bias
//   (or 0), so a register row needs no reset; an output row is stored right after its last input row
//   (u = o + kh - 1); sums for rows outside the segment are dropped;
// - every step commits one group, empty past the segment's last row, so each wait names a fixed count;
//   a barrier closes each segment before the next one's copies start.
// Stride and dilation along H are 1 (refused otherwise: depthwise_nhwc_stream_layout).
//
// Contract: launch pw * CB * NS work-groups of depthwise_nhwc_stream_group(...) threads (a work-group
// past those stores nothing); batch is a run-time u32 scalar, every other size a specialisation
// constant; the caller keeps B*P*Q*C + pw below 2^32 (the geometry checks it); f32 accumulation, taps
// in row-major order, rounded once to T on the store: the band kernel's values.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "channel_vectors.hpp"
#include "depthwise_conv2d_nhwc_stream.hpp"
#include "direct_conv.hpp"
#include "ingot/dsl.hpp"
#include "row_ring.hpp"

namespace ingot::kernels {

template <class T>
void depthwise_conv2d_nhwc_rows(dsl::KernelBuilder& k, const ConvSpec& s, const DepthwiseNhwcStream& t) {
  using namespace ingot::dsl;
  const NhwcStreamLayout L = depthwise_nhwc_stream_layout(s, t, static_cast<std::uint32_t>(sizeof(T)));
  if (t.pw == 0) throw std::invalid_argument(s.name + ": the rows kernel needs pw > 0");
  const std::uint32_t V = t.V, VC = L.VC, CL = L.CL, CBC = L.CBC, G = L.G, S = L.S, IWS = L.IWS, cw = L.cw;
  const std::uint32_t VW = channel_access_width(VC, static_cast<std::uint32_t>(sizeof(T)));
  const std::uint32_t C = s.in_channels, H = s.in_size[0], W = s.in_size[1];
  const std::uint32_t KH = s.ksize[0], KW = s.ksize[1], SW = s.stride[1];
  const std::uint32_t PH = s.pad[0], PW = s.pad[1], DW = s.dilation[1];
  const auto P = static_cast<std::uint32_t>(s.out_len(0)), Q = static_cast<std::uint32_t>(s.out_len(1));
  const std::uint32_t taps = KH * KW, SL = IWS * CBC, ahead = t.ahead, pw = t.pw;

  auto batch = k.scalar<u32>("batch");
  auto x = k.in<T>("x", batch * (H * W * C));
  auto w = k.in<T>("w", C * taps);
  In<T> bias;
  if (s.bias) bias = k.in<T>("bias", C);
  auto y = k.out<T>("y", batch * (P * Q * C));
  auto xs = k.shared<T>("xs", S * SL);

  auto g = k.let("g", k.group_id(0));
  auto lid = k.let("lid", k.local_id(0));
  auto cl = CL == 1 ? Val<u32>(0u) : k.let("cl", lid % CL);
  auto qgl = t.NQ == 1 ? Val<u32>(0u) : k.let("qgl", lid / CL);
  auto strip = L.NS == 1 ? Val<u32>(0u) : k.let("strip", g % L.NS);
  auto r1 = L.NS == 1 ? Val<u32>(g) : k.let("r1", g / L.NS);
  auto cb = L.CB == 1 ? Val<u32>(0u) : k.let("cb", r1 % L.CB);
  auto run = L.CB == 1 ? r1 : k.let("run", r1 / L.CB);
  auto c0 = k.let("c0", cb * CBC + cl * VC);
  auto total = k.let("total", batch * P);            // output rows of the (strip, channel block)
  auto per = k.let("per", (total + (pw - 1)) / pw);  // rows per work-group
  // A work-group past the last (a larger grid) takes an empty run.
  auto rbeg = k.let("rbeg", select(run < pw, min(run * per, total), total));
  auto rend = k.let("rend", min(rbeg + per, total));
  auto tb = k.let("tb", qgl * (V * SW * CBC) + cl * VC);  // the thread's first element in a slot
  auto q0 = k.let("q0", strip * L.QS + qgl * V);

  // The thread's columns in the strip: offsets (from its first column qgl*V*SW) its V windows read.
  std::set<std::uint32_t> col_offsets;
  for (std::uint32_t j = 0; j < V; ++j) {
    for (std::uint32_t tx = 0; tx < KW; ++tx) col_offsets.insert(j * SW + tx * DW);
  }
  // The copies of one row (as the band kernel's): per round the column part of the source, whether the column is
  // inside [0, W), and the destination in the slot.
  const std::uint32_t upc = CBC / cw, units = IWS * upc;
  std::vector<RingCopy> rounds;
  auto col0 = k.let("col0", strip * (L.QS * SW));  // input column of strip column j: col0 - PW + j
  for (std::uint32_t rd_i = 0; rd_i * G < units; ++rd_i) {
    const auto rt = std::to_string(rd_i);
    RingCopy rd;
    auto m = k.let("m" + rt, lid + rd_i * G);
    if ((rd_i + 1) * G > units) rd.valid = k.let("mv" + rt, m < units);
    auto j = upc == 1 ? m : Val<u32>(k.let("mj" + rt, m / upc));
    auto iw = k.let("iw" + rt, col0 + j - PW);  // u32: a column left of 0 wraps past W
    rd.ok = k.let("okc" + rt, iw < W);
    const Val<u32> chunk = upc == 1 ? Val<u32>(0u) : Val<u32>(m % upc);
    rd.src = k.let("src" + rt, select(rd.ok, iw, 0u) * C + chunk * cw);
    rd.dst = k.let("dst" + rt, j * CBC + chunk * cw);
    rounds.push_back(rd);
  }

  // Weights of the thread's VC channels and bias.
  std::vector<Val<f32>> wf;
  auto wbase = k.let("wb", c0 * taps);
  for (std::uint32_t m = 0; m < VC * taps; m += VW) {
    for (const auto& v : load_channels(w, m == 0 ? wbase : Val<u32>(wbase + m), VW, VW)) {
      wf.push_back(k.let("w" + std::to_string(m), cast<f32>(v)));
    }
  }
  auto weight = [&](std::uint32_t e, std::uint32_t ty, std::uint32_t tx) { return wf[e * taps + ty * KW + tx]; };
  std::vector<Val<f32>> init(V * VC, Val<f32>(0.0f));
  if (s.bias) {
    const auto bv = load_channels(bias, c0, VC, VW);
    for (std::uint32_t e = 0; e < VC; ++e) {
      auto be = k.let("bias" + std::to_string(e), cast<f32>(bv[e]));
      for (std::uint32_t j = 0; j < V; ++j) init[j * VC + e] = be;
    }
  }
  Var<u32> r(k, rbeg, "r");
  auto segments = k.let("segs", (per + (P - 1)) / P + 1u);  // at most, for a run of per rows
  for_(0u, segments, [&](Val<u32>) {
    if_(r < rend, [&] {
      auto rc = k.let("rc", r.get());
      auto b = k.let("b", rc / P);
      auto p0 = k.let("p0", rc % P);
      auto n = k.let("n", min(P - p0, rend - rc));  // output rows of the segment
      auto nr = k.let("nr", n + (KH - 1));          // its input rows
      auto xb = k.let("xb", b * (H * W * C) + cb * CBC);

      // Segment input row v (ring row v, input row p0 - PH + v) into slot v % S; rows past nr copy nothing.
      auto issue = [&](const Val<u32>& rbase, std::uint32_t v, const Val<bool>& wanted) {
        issue_ring_row(k, xs, x, rounds, cw, (v % S) * SL, xb, rbase, v, PH, H, H, W * C, wanted);
      };

      // kh rows of V x VC accumulators.
      std::vector<std::vector<Var<f32>>> acc(KH);
      for (std::uint32_t rr = 0; rr < KH; ++rr) {
        acc[rr].reserve(V * VC);  // a reallocation would copy (re-declare) the variables
        for (std::uint32_t a = 0; a < V * VC; ++a) acc[rr].emplace_back(k, init[a], "acc" + std::to_string(rr));
      }
      auto yb = k.let("yb", ((b * P + p0) * Q + q0) * C + c0);  // output row p0's first element of the thread

      for (std::uint32_t v = 0; v < ahead; ++v) issue(p0, v, nr > v);
      auto iters = k.let("iters", (nr + (S - 1)) / S);
      for_(0u, iters, [&](Val<u32> it) {
        auto ub = k.let("ub", it * S);
        auto rbase = k.let("rbase", p0 + ub);  // input row of sub-step j's row: rbase - PH + j
        for (std::uint32_t j = 0; j < S; ++j) {
          auto u = j == 0 ? Val<u32>(ub) : Val<u32>(k.let("u" + std::to_string(j), ub + j));
          if_(u < nr, [&] {
            issue(rbase, j + ahead, u + ahead < nr);
            async_wait(k, ahead);  // the groups committed after row u's
            k.barrier();
            // Row u feeds output rows o = u - ty in register rows (j - ty) mod kh.
            const std::uint32_t slot = j * SL;
            std::map<std::uint32_t, Val<f32>> sum;  // register row * V*VC + a -> running sum
            for (const std::uint32_t off : col_offsets) {
              const auto xv = load_channels(xs, tb + (slot + off * CBC), VC, VW);
              for (std::uint32_t e = 0; e < VC; ++e) {
                auto xf = k.let("x" + std::to_string(j) + "_" + std::to_string(off), cast<f32>(xv[e]));
                for (std::uint32_t ty = 0; ty < KH; ++ty) {
                  const std::uint32_t rr = (j % KH + KH - ty) % KH;
                  for (std::uint32_t tx = 0; tx < KW; ++tx) {
                    const std::uint32_t tt = tx * DW;
                    if (off < tt || (off - tt) % SW != 0 || (off - tt) / SW >= V) continue;
                    const std::uint32_t q = (off - tt) / SW;
                    const std::uint32_t a = rr * V * VC + q * VC + e;
                    const auto found = sum.find(a);
                    const Val<f32> prev = found != sum.end() ? found->second
                                          : ty == 0          ? init[q * VC + e]
                                                             : Val<f32>(acc[rr][q * VC + e]);
                    sum.insert_or_assign(a, fma(xf, weight(e, ty, tx), prev));
                  }
                }
              }
            }
            // (After these assignments the sums, which read the variables, are stale: the stores read the variables.)
            for (const auto& [a, v] : sum) acc[a / (V * VC)][a % (V * VC)] = v;
            // Output row o = u - (kh - 1), complete: register row (j + 1) mod kh.
            const std::uint32_t rr = (j + 1) % KH;
            auto store_row = [&] {
              auto yr = k.let("yr" + std::to_string(j), yb + (u - (KH - 1)) * (Q * C));
              for (std::uint32_t q = 0; q < V; ++q) {
                auto put = [&] {
                  std::vector<Val<f32>> vals;
                  for (std::uint32_t e = 0; e < VC; ++e) vals.push_back(acc[rr][q * VC + e]);
                  store_channels(y, q == 0 ? Val<u32>(yr) : Val<u32>(yr + q * C), vals, VW);
                };
                if (Q % L.QS == 0) {
                  put();
                } else {
                  if_(q0 + q < Q, put);
                }
              }
            };
            if (KH == 1) {
              store_row();
            } else {
              if_(u >= KH - 1, store_row);
            }
          });
        }
      });
      k.barrier();  // every read of this segment's ring before the next segment's copies
      r = rc + n;
    });
  });
}

}  // namespace ingot::kernels
