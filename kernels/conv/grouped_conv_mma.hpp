// kernels/conv/grouped_conv_mma.hpp — grouped 2-D convolution, NCHW, 8 input channels per group,
// on the sub-group matrix multiply-accumulate (ir.hpp "Matrix multiply-accumulate"; tensor
// cores on CUDA): an implicit GEMM per group, D[pixel][out channel] = sum over (channel, tap).
//
//   x [B, C, H, W], w [O, 8, kh, kw], optional bias [O] -> y [B, O, P, Q], groups = C / 8,
//   stride 1, dilation 1, any padding (x = 0 outside) — direct_conv.hpp's ConvSpec and
//   parameter list (batch as a run-time u32, x, w, [bias], y).
//
// Mapping. A warp (32 consecutive threads) takes one task: image b, group g, 8 output channels
// (n-tile nt of Og/8), 16 consecutive output columns q0 .. q0+15 (q-tile) and R consecutive output
// rows (a band; R = rows, the tiling). Warp index = (((b*groups + g)*NT + nt)*NB + band)*QT + qt:
// neighbouring warps share the group's input rows through L1/L2. For each output row p of the
// band, 16 x 8 outputs are one D = C + sum_s A_s * B_s with one MMA per k-step s. Two orders of
// the reduction (GroupedConvMmaTile::columns_across_lanes; "channels across lanes" described
// here, the other in its comment: the same window idea with (channel, tap row) pairs per step and
// each lane's tap column = t_l). Channels across lanes: the reduction
// index of step s, column k of A and row k of B, is (input channel ci = k % 8, tap 2s + k / 8)
// (taps in row-major (ty, tx) order; the tap past the last, when kh*kw is odd, has zero
// weights). With the fragment layout of ir.hpp, lane l (g_l = l/4, t_l = l%4) holds A values of
// channels 2t_l and 2t_l + 1 for pixels q0 + g_l and q0 + g_l + 8 — the same two channels and
// pixels in every step — and B values (weights) of output channel 8nt + g_l. So each lane keeps
// a window of input rows in registers: per input row, its 2 channels x 2 pixels x kw columns
// (x[b, 8g + 2t_l + e, row, q0 + g_l + 8m - pad_w + tx]), loaded once (16-bit, converted never:
// the CUDA printer packs the elements as they are) and used by the kh output rows that read
// it. The weights (4 per step per lane) and the bias are loaded once per warp. D's lanes hold
// output channels 8nt + 2t_l (+1) at pixels q0 + g_l (+8): four scalar stores each.
// Bounds: rows and columns outside the input load a clamped in-range element and select 0;
// pixels past Q and rows past P are not stored; tail warps (past the task count) take task 0's
// operands and store nothing. Every lane reaches every MMA (no branch around them).
// Launch grid_1d(batch * grouped_conv_mma_threads_per_batch(), 128) with launch bounds 128.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "direct_conv.hpp"
#include "ingot/dsl.hpp"

namespace ingot::kernels {

struct GroupedConvMmaTile {
  std::uint32_t rows = 4;  // R: output rows per warp task (the input row window is R + kh - 1 rows)
  // Reduction order "columns across lanes" (kw <= 4): k-step s, column k = 2t + e + 8h of A is
  // tap column tx = t (tx >= kw: zero weights) of combination c = 4s + 2h + e -> (channel c % 8,
  // tap row c / 8), so the 4 lanes of a pixel read neighbouring columns of one row and a warp's
  // load touches one row segment of one plane (else: channels across lanes, 4 planes per load).
  bool columns_across_lanes = false;
};

inline constexpr std::uint32_t kGroupedMmaGroup = 128;  // threads per work-group (4 warps)

// The sizes the kernel works with: rank 2 is rank 3 with one depth slice and a depth-1 window.
struct GroupedMmaDims {
  std::uint32_t D, H, W, OD, P, Q, KD, KH, KW, PD, PH, PW;
  // Whether an input depth slice must be located and tested: more than one slice, a deep window, or depth padding
  // alone (D = 1, kd = 1, pad_d >= 1 gives output slices that lie wholly in the padding and see no input).
  [[nodiscard]] bool depth_varies() const { return D > 1 || KD > 1 || PD > 0; }
};
inline GroupedMmaDims grouped_mma_dims(const ConvSpec& s) {
  const std::size_t r = s.rank();
  const auto u = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
  const bool d3 = r == 3;
  return {d3 ? s.in_size[0] : 1u, s.in_size[r - 2],    s.in_size[r - 1],     d3 ? u(s.out_len(0)) : 1u,
          u(s.out_len(r - 2)),    u(s.out_len(r - 1)), d3 ? s.ksize[0] : 1u, s.ksize[r - 2],
          s.ksize[r - 1],         d3 ? s.pad[0] : 0u,  s.pad[r - 2],         s.pad[r - 1]};
}

// Why the tensor-core kernel cannot run spec s with elements of elem_bytes ("" when it can).
inline std::string grouped_conv_mma_refusal(const ConvSpec& s, std::size_t elem_bytes) {
  if (elem_bytes != 2) return "needs f16 or bf16 elements (f32 has no tensor-core path here)";
  if ((s.rank() != 2 && s.rank() != 3) || s.layout != ConvLayout::ChannelsFirst) {
    return "needs a 2-D or 3-D channels-first convolution";
  }
  if (s.in_per_group() != 8) return "needs 8 input channels per group (has " + std::to_string(s.in_per_group()) + ")";
  if (s.out_per_group() % 8 != 0) {
    return "needs a multiple of 8 output channels per group (has " + std::to_string(s.out_per_group()) + ")";
  }
  for (std::size_t a = 0; a < s.rank(); ++a) {
    if (s.stride[a] != 1 || s.dilation[a] != 1) return "needs stride 1 and dilation 1";
  }
  const GroupedMmaDims dm = grouped_mma_dims(s);
  if (dm.KH * dm.KW > 64) return "needs at most 64 taps per depth slice";
  return "";
}

// Throws std::invalid_argument with the reason unless the kernel applies, or the tile is out of range.
inline void check_grouped_conv_mma(const ConvSpec& s, std::size_t elem_bytes, const GroupedConvMmaTile& t) {
  s.validate();
  if (const std::string why = grouped_conv_mma_refusal(s, elem_bytes); !why.empty()) {
    throw std::invalid_argument(s.name + ": the tensor-core kernel (mma = 1) " + why + "; use mma = 0");
  }
  if (t.columns_across_lanes && grouped_mma_dims(s).KW > 4) {
    throw std::invalid_argument(s.name +
                                ": the tensor-core kernel's columns-across-lanes order (mmatx = 1) needs kw <= 4");
  }
  if (t.rows < 1 || t.rows > 16) {
    throw std::invalid_argument(s.name + ": rows = " + std::to_string(t.rows) + " must be in [1, 16]");
  }
}

// Threads per batch: 32 per warp task.
inline std::uint64_t grouped_conv_mma_threads_per_batch(const ConvSpec& s, const GroupedConvMmaTile& t) {
  const GroupedMmaDims dm = grouped_mma_dims(s);
  const std::uint64_t P = dm.P, Q = dm.Q;
  return 32ull * s.groups * (s.out_per_group() / 8) * dm.OD * ((P + t.rows - 1) / t.rows) * ((Q + 15) / 16);
}

// Throws std::invalid_argument unless `batch` images' threads fit the kernel's u32 thread index.
inline void check_grouped_conv_mma_batch(const ConvSpec& s, const GroupedConvMmaTile& t, std::uint64_t batch) {
  const std::uint64_t per = grouped_conv_mma_threads_per_batch(s, t);
  if (batch > 0xffffffffull / per) {
    throw std::invalid_argument(s.name + ": batch " + std::to_string(batch) + " x " + std::to_string(per) +
                                " threads of the tensor-core kernel exceed 32-bit thread indices; split the batch "
                                "or use mma = 0");
  }
}

template <class T>
void grouped_conv_mma(dsl::KernelBuilder& k, const ConvSpec& s, const GroupedConvMmaTile& tile) {
  using namespace ingot::dsl;
  check_grouped_conv_mma(s, sizeof(T), tile);
  const auto i32c = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  const GroupedMmaDims dm = grouped_mma_dims(s);
  const std::uint32_t O = s.out_channels, Og = s.out_per_group(), G = s.groups;
  const std::uint32_t D = dm.D, H = dm.H, Wd = dm.W, OD = dm.OD, P = dm.P, Q = dm.Q;
  const std::uint32_t KD = dm.KD, KH = dm.KH, KW = dm.KW, PD = dm.PD, PH = dm.PH, PW = dm.PW;
  const std::uint32_t R = tile.rows, NT = Og / 8, NB = (P + R - 1) / R, QT = (Q + 15) / 16;
  const bool tx_lanes = tile.columns_across_lanes;
  // per depth tap kd: the k-steps over (channel, tap row) or (channel, tap) of its kh x kw slice
  const std::uint32_t taps2 = KH * KW, taps = KD * taps2, steps = tx_lanes ? (8 * KH + 3) / 4 : (taps2 + 1) / 2;
  const std::uint32_t tasks = G * NT * OD * NB * QT;  // per image

  k.launch_bounds(kGroupedMmaGroup);
  const auto prm = declare_dense_conv_params<T>(k, s);
  const auto& batch = prm.io.batch;
  const auto& x = prm.io.x;
  const auto& w = prm.w;
  const auto& bias = prm.io.bias;
  const auto& y = prm.io.y;

  auto warp = k.let("warp", k.program_id(0) / 32u);
  auto live = k.let("live", warp < batch * tasks);
  auto task = k.let("task", select(live, warp, 0u));  // tail warps take task 0's operands
  auto qt = k.let("qt", task % QT);
  auto band = k.let("band", (task / QT) % NB);
  auto od = k.let("od", (task / (QT * NB)) % OD);
  auto nt = k.let("nt", (task / (QT * NB * OD)) % NT);
  auto bg = k.let("bg", task / (QT * NB * OD * NT));  // b * groups + g
  auto g = k.let("g", bg % G);
  auto lane = k.let("lane", k.local_id(0) % 32u);
  auto gl = k.let("gl", lane / 4u);
  auto tl = k.let("tl", lane % 4u);
  auto q0 = k.let("q0", qt * 16u);
  auto p0 = k.let("p0", band * R);
  // The lane's two input channels (planes) and the first input column of its pixel gl (i32).
  auto plane0 = k.let("plane0", (bg * 8u + tl * 2u) * (D * H * Wd));  // b*C + 8g + 2t, times D*H*W
  auto col0 = k.let("col0", cast<i32>(q0 + gl) - i32c(PW));

  // B fragments of depth tap kd: per step s, b_i = w[oc][ci][kd][tap] with oc = g*Og + 8nt + gl.
  auto oc_b = k.let("oc_b", g * Og + nt * 8u + gl);
  std::optional<Val<bool>> tx_ok;
  if (tx_lanes && KW < 4) tx_ok = k.let("tx_ok", tl < KW);
  const auto b_fragments = [&](std::uint32_t kd) {
    std::vector<std::array<Val<f32>, 4>> bfrag(steps);
    const std::string kt = KD > 1 ? std::to_string(kd) + "_" : "";
    for (std::uint32_t st = 0; st < steps && tx_lanes; ++st) {
      // b_i: k = 2t + i%2 + 8*(i/2): combination c = 4s + 2*(i/2) + i%2 -> (ci, ty), tap column tl
      for (std::uint32_t i = 0; i < 4; ++i) {
        const std::uint32_t c = 4 * st + 2 * (i / 2) + i % 2;
        if (c >= 8 * KH) {
          bfrag[st][i] = 0.0f;
          continue;
        }
        const std::uint32_t ci = c % 8, ty = c / 8;
        auto idx = (oc_b * 8u + ci) * taps + (kd * taps2 + ty * KW) + (tx_ok ? select(*tx_ok, tl, 0u) : Val<u32>(tl));
        Val<T> wv = load(w, idx);
        if (tx_ok) wv = select(*tx_ok, wv, Val<T>(0.0f));
        bfrag[st][i] = cast<f32>(k.let("w" + kt + std::to_string(st) + "_" + std::to_string(i), wv));
      }
    }
    for (std::uint32_t st = 0; st < steps && !tx_lanes; ++st) {
      for (std::uint32_t i = 0; i < 4; ++i) {
        const std::uint32_t tap = 2 * st + i / 2;
        if (tap >= taps2) {
          bfrag[st][i] = 0.0f;
          continue;
        }
        auto wv = k.let("w" + kt + std::to_string(st) + "_" + std::to_string(i),
                        load(w, (oc_b * 8u + tl * 2u + i % 2) * taps + kd * taps2 + tap));
        bfrag[st][i] = cast<f32>(wv);
      }
    }
    return bfrag;
  };
  // C: the bias of the lane's output channels 8nt + 2t (+1), or 0.
  std::array<Val<f32>, 2> bias_c{0.0f, 0.0f};
  if (s.bias) {
    for (std::uint32_t e = 0; e < 2; ++e) {
      bias_c[e] = k.let("bias" + std::to_string(e), cast<f32>(load(bias, g * Og + nt * 8u + tl * 2u + e)));
    }
  }

  std::vector<Val<bool>> col_ok(2 * KW);  // per (m, tx): column inside [0, W)
  std::vector<Val<u32>> col_at(2 * KW);   // per (m, tx): the clamped column
  for (std::uint32_t m = 0; m < 2; ++m) {
    for (std::uint32_t tx = 0; tx < (tx_lanes ? 1 : KW); ++tx) {  // columns across lanes: the lane's own (tx = tl)
      auto c = k.let("c" + std::to_string(m) + "_" + std::to_string(tx),
                     tx_lanes ? col0 + cast<i32>(tl) + i32c(8 * m) : col0 + i32c(8 * m + tx));
      auto ok = k.let("cok" + std::to_string(m) + "_" + std::to_string(tx), cast<u32>(c) < Wd);  // negative wraps
      col_ok[m * KW + tx] = ok;
      col_at[m * KW + tx] = k.let("cat" + std::to_string(m) + "_" + std::to_string(tx), select(ok, cast<u32>(c), 0u));
    }
  }
  std::vector<std::array<Val<f32>, 4>> acc(R);
  for (std::uint32_t pr = 0; pr < R; ++pr) acc[pr] = {bias_c[0], bias_c[1], bias_c[0], bias_c[1]};
  const std::uint32_t rows_in = R + KH - 1;
  for (std::uint32_t kd = 0; kd < KD; ++kd) {
    const std::string kt = KD > 1 ? std::to_string(kd) + "_" : "";
    // The depth slice od + kd - PD of this tap (rank 2: the plane itself), whether it lies inside [0, D).
    std::optional<Val<bool>> dok;
    Val<u32> slice_at = 0u;
    if (dm.depth_varies()) {
      auto dd = k.let("dd" + kt, cast<i32>(od) + i32c(static_cast<std::int64_t>(kd) - PD));
      dok = k.let("dok" + kt, cast<u32>(dd) < D);
      slice_at = k.let("da" + kt, select(*dok, cast<u32>(dd), 0u) * (H * Wd));
    }
    const auto bfrag = b_fragments(kd);
    // Window row r: input row p0 - PH + r of the slice, whether it lies inside, its clamped offset.
    auto row_of = [&](std::uint32_t r) {
      auto ih = k.let("ih" + kt + std::to_string(r), cast<i32>(p0) + i32c(static_cast<std::int64_t>(r) - PH));
      Val<bool> rok = cast<u32>(ih) < H;
      if (dok) rok = rok && *dok;
      rok = k.let("rok" + kt + std::to_string(r), rok);
      return std::make_pair(rok, k.let("ra" + kt + std::to_string(r), slice_at + select(rok, cast<u32>(ih), 0u) * Wd));
    };
    // The input row window of this slice: element (row r of the band's rows p0 - PH + r, channel e,
    // pixel m, column tx).
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, Val<T>> win;
    auto load_row = [&](std::uint32_t r) {
      const auto [rok, row_at] = row_of(r);
      for (std::uint32_t e = 0; e < 2; ++e) {
        for (std::uint32_t m = 0; m < 2; ++m) {
          for (std::uint32_t tx = 0; tx < KW; ++tx) {
            const std::string tag =
                kt + std::to_string(r) + "_" + std::to_string(e) + std::to_string(m) + std::to_string(tx);
            auto v = load(x, plane0 + e * (D * H * Wd) + row_at + col_at[m * KW + tx]);
            win.emplace(std::make_tuple(r, e, m, tx),
                        k.let("x" + tag, select(rok && col_ok[m * KW + tx], v, Val<T>(0.0f))));
          }
        }
      }
    };
    // Columns across lanes: element (row r, channel ci, pixel m) at column q0 + gl + 8m - pad_w + tl.
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, Val<T>> win_tx;
    auto load_row_tx = [&](std::uint32_t r) {
      const auto [rok, row_at] = row_of(r);
      for (std::uint32_t ci = 0; ci < 8; ++ci) {
        for (std::uint32_t m = 0; m < 2; ++m) {
          const std::string tag = kt + std::to_string(r) + "_" + std::to_string(ci) + std::to_string(m);
          auto v = load(x, bg * (8 * D * H * Wd) + ci * (D * H * Wd) + row_at + col_at[m * KW]);
          win_tx.emplace(std::make_tuple(r, ci, m), k.let("x" + tag, select(rok && col_ok[m * KW], v, Val<T>(0.0f))));
        }
      }
    };
    for (std::uint32_t r = 0; r < rows_in; ++r) tx_lanes ? load_row_tx(r) : load_row(r);

    for (std::uint32_t pr = 0; pr < R; ++pr) {
      // acc += sum_s A_s B_s for output row p0 + pr; A value i of step s: channel e = i%2,
      // pixel m = (i/2)%2, tap 2s + i/4 -> (ty, tx), input row pr + ty of the window.
      for (std::uint32_t st = 0; st < steps; ++st) {
        std::array<Val<f32>, 8> a;
        for (std::uint32_t i = 0; i < 8 && tx_lanes; ++i) {
          // a_i: k = 2t + i%2 + 8*(i/4): combination c = 4s + 2*(i/4) + i%2, pixel m = (i/2)%2
          std::uint32_t c = 4 * st + 2 * (i / 4) + i % 2;
          if (c >= 8 * KH) c = 8 * KH - 1;  // zero weights: any finite value
          a[i] = cast<f32>(win_tx.at(std::make_tuple(pr + c / 8, c % 8, (i / 2) % 2)));
        }
        for (std::uint32_t i = 0; i < 8 && !tx_lanes; ++i) {
          std::uint32_t tap = 2 * st + i / 4;
          if (tap >= taps2) tap = taps2 - 1;  // zero weights: any finite value
          const std::uint32_t ty = tap / KW, tx = tap % KW;
          a[i] = cast<f32>(win.at(std::make_tuple(pr + ty, i % 2, (i / 2) % 2, tx)));
        }
        acc[pr] = mma_m16n8k16<T>(k, a, bfrag[st], acc[pr]);
      }
    }
  }
  for (std::uint32_t pr = 0; pr < R; ++pr) {
    // d_i: channel 8nt + 2t + i%2, pixel q0 + gl + 8*(i/2), row p0 + pr of depth slice od.
    auto p = k.let("p" + std::to_string(pr), p0 + pr);
    for (std::uint32_t i = 0; i < 4; ++i) {
      auto q = q0 + gl + 8 * (i / 2);
      auto oc = g * Og + nt * 8u + tl * 2u + i % 2;
      auto at = ((bg / G) * O + oc) * (OD * P * Q) + od * (P * Q) + p * Q + q;
      if_(live && p < P && q < Q, [&] { store(y, at, cast<T>(acc[pr][i])); });
    }
  }
}

}  // namespace ingot::kernels
