// kernels/conv/causal_conv1d.hpp — causal depthwise 1-D convolution for state-space models
// (the short convolution in front of Mamba-style blocks), for prefill and for one decode step.
//
// Prefill (the kernels are causal_conv1d_ncl.hpp, V outputs per thread, and
// causal_conv1d_nlc.hpp, T steps x VC channels per thread; this header has what they share):
//   channel-first (causal_conv1d_prefill):     x [B, C, L] -> y [B, C, L]
//   channel-last  (causal_conv1d_prefill_nlc): x [B, L, C] -> y [B, L, C]
//   weight w [C, K], optional bias [C], optional initial state s0 [B, C, K-1] (the K-1 inputs
//   before t = 0; zeros when absent), optional final state [B, C, K-1] (the last K-1 inputs of
//   the sequence, initial state included when L < K-1), optional fused SiLU:
//     z[b,c,t] = bias[c] + sum_{k<K} w[c,k] * xx[b,c,t-(K-1)+k],  xx = x for t >= 0, s0 (or 0) before,
//     y = silu ? z * sigmoid(z) : z.
// Decode step (causal_conv1d_update), one thread per (b, c):
//   x [B, C], w [C, K], optional bias [C], state [B, C, K-1] updated in place (InOut):
//     y[b,c] = bias[c] + sum_{k<K-1} w[c,k] * state[b,c,k] + w[c,K-1] * x[b,c]  (then SiLU),
//     state[b,c,:] <- (state[b,c,1:], x[b,c]).
//   Each thread reads its whole state row before writing any of it, and no other thread
//   touches that row, so the in-place update has no race.
// B is a run-time scalar; C, L, K and the options are specialisation constants; 2 <= K <= 8.
// Tail threads clamp their index onto element 0 for every read and skip their stores.
// Accumulates in f32 for every dtype.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "ingot/dsl.hpp"

namespace ingot::kernels {

enum class SeqLayout : std::uint8_t { ChannelFirst, ChannelLast };  // [B, C, L] or [B, L, C]

struct CausalConv1dSpec {
  std::uint32_t channels, length, ksize;
  bool bias, silu, init_state, final_state;
  SeqLayout layout;
};

struct CausalConv1dUpdateSpec {
  std::uint32_t channels, ksize;
  bool bias, silu;
};

// Throws std::invalid_argument unless 2 <= K <= 8 and the sizes are >= 1.
void check_causal_conv1d(std::uint32_t channels, std::uint32_t length, std::uint32_t ksize);

// z * sigmoid(z) = z / (1 + exp(-z)).
inline dsl::Val<f32> silu(const dsl::Val<f32>& z) { return z / (1.0f + dsl::exp(-z)); }

// bias[c] (when present) + sum_k taps[k] * w[c, k], in f32: starting from the bias, one fma per
// tap in tap order (the prefill kernels' order, so a decode step continues a prefill bit for bit).
template <class T>
dsl::Val<f32> causal_dot(const dsl::In<T>& bias, bool has_bias, const dsl::Val<u32>& c, const dsl::In<T>& w,
                         const std::array<dsl::Val<f32>, 8>& taps, std::uint32_t K) {
  using namespace ingot::dsl;
  const Val<f32> w0 = cast<f32>(load(w, c * K));
  Val<f32> acc = has_bias ? fma(taps[0], w0, cast<f32>(load(bias, c))) : taps[0] * w0;
  for (std::uint32_t kk = 1; kk < K; ++kk) acc = fma(taps[kk], cast<f32>(load(w, c * K + kk)), acc);
  return acc;
}

template <class T>
void causal_conv1d_update(dsl::KernelBuilder& k, const CausalConv1dUpdateSpec& s) {
  using namespace ingot::dsl;
  check_causal_conv1d(s.channels, 1, s.ksize);
  const std::uint32_t C = s.channels, K = s.ksize, S = K - 1;
  auto batch = k.scalar<u32>("batch");
  auto x = k.in<T>("x", batch * C);
  auto w = k.in<T>("w", C * K);
  In<T> bias;
  if (s.bias) bias = k.in<T>("bias", C);
  auto state = k.inout<T>("state", batch * (C * S));
  auto y = k.out<T>("y", batch * C);

  auto gid = k.let("gid", k.program_id(0));
  auto n = k.let("n", batch * C);
  auto i = k.let("i", select(gid < n, gid, 0u));  // tail threads read element 0
  auto c = k.let("c", i % C);
  // Read the whole state row (and x) before anything is written.
  std::array<Val<T>, 8> win;
  for (std::uint32_t j = 0; j < S; ++j) win[j] = load(state, i * S + j);
  win[S] = load(x, i);
  std::array<Val<f32>, 8> taps;
  for (std::uint32_t kk = 0; kk < K; ++kk) taps[kk] = cast<f32>(win[kk]);
  auto z = k.let("z", causal_dot(bias, s.bias, c, w, taps, K));
  auto out = s.silu ? silu(z) : z;
  if_(gid < n, [&] {
    store(y, gid, out);
    for (std::uint32_t j = 0; j < S; ++j) store(state, gid * S + j, win[j + 1]);
  });
}

}  // namespace ingot::kernels
