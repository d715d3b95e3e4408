// kernels/conv/causal_conv1d_nlc.hpp — the channel-last causal conv1d prefill
// (causal_conv1d_prefill_nlc), written for memory bandwidth: channel-vector loads and stores,
// a run of time steps per thread with the K-tap window sliding in registers.
//
//   x [B, L, C], w [C, K], optional bias [C], optional initial state s0 [B, C, K-1], optional
//   final state [B, C, K-1], optional SiLU -> y [B, L, C]; the semantics of
//   causal_conv1d_prefill in causal_conv1d.hpp (z[b,t,c] = bias[c] + sum_k w[c,k] *
//   xx[b, t-(K-1)+k, c], xx = x for t >= 0, s0 (or 0) before; y = silu ? z*sigmoid(z) : z;
//   final state = xx[L-K+1 .. L-1]).
//
// Mapping. Each thread owns VC consecutive channels c0 = cv*VC .. c0+VC-1 and T consecutive
// time steps t0 = tg*T .. t0+T-1 of one sequence b. Thread index i = (b*TG + tg)*CV + cv with
// CV = C/VC, TG = ceil(L/T): consecutive threads take consecutive channel vectors of one time
// step, so a warp reads and writes contiguous bytes. The thread loads the K-1 halo rows before
// t0 and its T rows once each (one vector access of at most 16 bytes per row, two for 8 f32
// channels), converts each element to f32 once and slides the window along time in registers;
// its VC*K weights (VC*K consecutive elements of w starting at a multiple of VC) are read with
// vector loads once; outputs are stored with vector stores.
//
// Spec parameters (besides the options): T (time steps per thread, 1..64) and VC (channels per
// thread, a power of two in [1, 16]); the kernel uses the largest power of two <= VC that
// divides C (1 = scalar accesses for odd C). Defaults: T = 16, VC = 4, the best of the tilings
// measured (docs/performance.md); independent of the element type, so the launch is too.
//
// Contract (the library's rules):
// - launch grid_1d(B * ceil(L/T) * C/VC, any group size); B is a run-time u32 scalar
//   ("batch"), everything else a specialisation constant; 2 <= K <= 8;
// - tail threads take thread 0's coordinates for every read and skip their stores; time steps
//   past L (L not a multiple of T) are read at L-1 and not stored;
// - halo rows before t = 0 are read at row 0 and replaced, under a branch only the threads at
//   the start of a sequence take, by the initial state (scalar loads: its layout [B, C, K-1]
//   has no contiguous channels) or by zeros;
// - the threads of the last time group write the final state (scalar stores);
// - f32 accumulation for every element type, rounded once to T on the store.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "causal_conv1d.hpp"
#include "channel_vectors.hpp"
#include "ingot/dsl.hpp"
#include "vector_width.hpp"

namespace ingot::kernels {

struct CausalNlcTiling {
  std::uint32_t T = 16;  // time steps per thread
  std::uint32_t VC = 4;  // channels per thread (requested)
};

inline void check_causal_nlc_tiling(const CausalNlcTiling& t) {
  if (t.T < 1 || t.T > 64) {
    throw std::invalid_argument("causal_conv1d_prefill_nlc: T (time steps per thread) = " + std::to_string(t.T) +
                                " must be in [1, 64]");
  }
  (void)channel_vector_width("causal_conv1d_prefill_nlc", 1, t.VC);
}

// Threads of one sequence: ceil(L/T) * C/VC.
inline std::uint64_t causal_nlc_threads_per_batch(const CausalConv1dSpec& s, const CausalNlcTiling& t) {
  check_causal_nlc_tiling(t);
  return (std::uint64_t{s.length} + t.T - 1) / t.T *
         (s.channels / channel_vector_width("causal_conv1d_prefill_nlc", s.channels, t.VC));
}

template <class E>
void causal_conv1d_prefill_nlc(dsl::KernelBuilder& k, const CausalConv1dSpec& s, const CausalNlcTiling& tiling) {
  using namespace ingot::dsl;
  check_causal_conv1d(s.channels, s.length, s.ksize);
  check_causal_nlc_tiling(tiling);
  if (s.layout != SeqLayout::ChannelLast) {
    throw std::invalid_argument("causal_conv1d_prefill_nlc: needs the channel-last layout");
  }
  const std::uint32_t C = s.channels, L = s.length, K = s.ksize, S = K - 1, T = tiling.T;
  const std::uint32_t VC = channel_vector_width("causal_conv1d_prefill_nlc", C, tiling.VC);
  const std::uint32_t VW = channel_access_width(VC, sizeof(E));  // elements per access
  const std::uint32_t CV = C / VC, TG = (L + T - 1) / T;

  auto batch = k.scalar<u32>("batch");
  auto x = k.in<E>("x", batch * (C * L));
  auto w = k.in<E>("w", C * K);
  In<E> bias, init;
  Out<E> final_state;
  if (s.bias) bias = k.in<E>("bias", C);
  if (s.init_state) init = k.in<E>("init_state", batch * (C * S));
  auto y = k.out<E>("y", batch * (C * L));
  if (s.final_state) final_state = k.out<E>("final_state", batch * (C * S));

  auto gid = k.let("gid", k.program_id(0));
  auto n = k.let("n", batch * (TG * CV));
  auto i = k.let("i", select(gid < n, gid, 0u));  // tail threads read with thread 0's coordinates
  auto cv = CV == 1 ? Val<u32>(0u) : k.let("cv", i % CV);
  auto r = CV == 1 ? Val<u32>(i) : k.let("r", i / CV);
  auto tg = TG == 1 ? Val<u32>(0u) : k.let("tg", r % TG);
  auto b = TG == 1 ? r : k.let("b", r / TG);
  auto c0 = VC == 1 ? cv : k.let("c0", cv * VC);
  auto t0 = T == 1 ? tg : k.let("t0", tg * T);
  auto xb = k.let("xb", b * (L * C) + c0);  // x[b, 0, c0]

  auto load_c = [&](const In<E>& buf, const Val<u32>& index) { return load_channels(buf, index, VC, VW); };

  // Weights wf[kk*VC + e] = w[c0+e, kk]: the block w[c0*K .. (c0+VC)*K) in VW-wide accesses.
  std::vector<Val<f32>> wf(K * VC);
  {
    auto wb = k.let("wb", c0 * K);
    const std::vector<Val<E>> block = load_channels(w, wb, VC * K, VW);
    for (std::uint32_t e = 0; e < VC; ++e) {
      for (std::uint32_t kk = 0; kk < K; ++kk) {
        wf[kk * VC + e] = k.let("w" + std::to_string(kk), cast<f32>(block[e * K + kk]));
      }
    }
  }
  std::vector<Val<f32>> bf(VC, Val<f32>(0.0f));
  if (s.bias) {
    const auto bv = load_c(bias, c0);
    for (std::uint32_t e = 0; e < VC; ++e) bf[e] = k.let("bias" + std::to_string(e), cast<f32>(bv[e]));
  }

  // The window: win[r*VC + e] = xx[t0 - S + r, c0 + e] for r < S + T (f32, converted once).
  std::vector<Val<f32>> win((S + T) * VC);
  for (std::uint32_t kk = 0; kk < S; ++kk) {
    // Halo row t = t0 - (S - kk): inside the sequence when t0 >= S - kk.
    const std::uint32_t d = S - kk;
    const auto tag = "h" + std::to_string(kk);
    auto ok = k.let("ok" + tag, t0 >= d);
    const auto xv = load_c(x, xb + select(ok, t0 - d, 0u) * C);
    std::vector<Var<f32>> h;
    h.reserve(VC);
    for (std::uint32_t e = 0; e < VC; ++e) h.emplace_back(k, cast<f32>(xv[e]), "x" + tag);
    if_(!ok, [&] {
      for (std::uint32_t e = 0; e < VC; ++e) {
        // Before t = 0: element t0 + kk (< S here) of the initial state row, or zero.
        h[e] = s.init_state ? Val<f32>(cast<f32>(load(init, (b * C + c0 + e) * S + t0 + kk))) : Val<f32>(0.0f);
      }
    });
    for (std::uint32_t e = 0; e < VC; ++e) win[kk * VC + e] = h[e];
  }
  const std::int64_t last_t0 = static_cast<std::int64_t>(TG - 1) * T;
  for (std::uint32_t tt = 0; tt < T; ++tt) {
    // Rows past L exist only in the last group when L % T != 0: read row L-1 instead.
    const bool may_pass = last_t0 + tt >= L;
    Val<u32> t = tt == 0 ? t0 : Val<u32>(t0 + tt);
    if (may_pass) t = min(t, L - 1);
    const auto xv = load_c(x, xb + t * C);
    for (std::uint32_t e = 0; e < VC; ++e) win[(S + tt) * VC + e] = k.let("x" + std::to_string(tt), cast<f32>(xv[e]));
  }

  auto yb = k.let("yb", xb + t0 * C);
  if_(gid < n, [&] {
    for (std::uint32_t tt = 0; tt < T; ++tt) {
      const bool may_pass = last_t0 + tt >= L;
      if (may_pass && TG == 1) continue;  // t0 = 0: this step is past L for every thread
      auto put = [&] {
        std::vector<Val<f32>> out(VC);
        for (std::uint32_t e = 0; e < VC; ++e) {
          // bias, then one fma per tap in tap order: the order of conv1d_rows and causal_dot, so
          // the decode step continues a prefill bit for bit
          Val<f32> z = s.bias ? fma(win[tt * VC + e], wf[e], bf[e]) : win[tt * VC + e] * wf[e];
          for (std::uint32_t kk = 1; kk < K; ++kk) z = fma(win[(tt + kk) * VC + e], wf[kk * VC + e], z);
          if (s.silu) z = silu(k.let("z", z));
          out[e] = k.let("y", z);
        }
        const Val<u32> at = tt == 0 ? Val<u32>(yb) : Val<u32>(yb + tt * C);
        store_channels(y, at, out, VW);
      };
      if (may_pass) {
        if_(t0 + tt < L, put);
      } else {
        put();
      }
    }
    if (s.final_state) {
      // The last group holds xx[L-S .. L-1] at window rows L - last_t0 + j (j < S).
      auto fs = [&] {
        for (std::uint32_t e = 0; e < VC; ++e) {
          for (std::uint32_t j = 0; j < S; ++j) {
            store(final_state, (b * C + c0 + e) * S + j, win[(L - static_cast<std::uint32_t>(last_t0) + j) * VC + e]);
          }
        }
      };
      if (TG == 1) {
        fs();
      } else {
        if_(tg == TG - 1, fs);
      }
    }
  });
}

}  // namespace ingot::kernels
