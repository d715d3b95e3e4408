// kernels/conv/causal_conv1d_ncl.hpp — causal_conv1d_prefill (channel-first, x [B, C, L]) with V
// consecutive outputs per thread, on the row core of conv1d_rows.hpp (see there for the
// mapping, the vector loads and stores, and the tail rules).
//
// Same contract as causal_conv1d_prefill in causal_conv1d.hpp (layout ChannelFirst): the
// window of output t is xx[t-(K-1) .. t] (the initial state, or zeros, before t = 0), bias,
// SiLU, initial and final state [B, C, K-1]; as a row convolution it is stride 1, dilation 1,
// left padding K-1, O = L. With an initial state, each element of a chunk that may lie
// before t = 0 also loads its initial-state value (clamped) and selects it. The final state is
// written by the thread whose group holds t = L-1, with scalar loads of the row's last K-1
// inputs (L1 hits: the thread just read them). Launch B * C * groups() threads.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "causal_conv1d.hpp"
#include "conv1d_rows.hpp"
#include "ingot/dsl.hpp"

namespace ingot::kernels {

// The row geometry of the channel-first prefill with V outputs per thread (V in [1, 64]).
inline Rows1dGeom causal_ncl_geom(const CausalConv1dSpec& s, std::uint32_t V) {
  check_causal_conv1d(s.channels, s.length, s.ksize);
  if (V < 1 || V > 64) {
    throw std::invalid_argument("causal_conv1d_prefill: V (outputs per thread) must be in [1, 64], got " +
                                std::to_string(V));
  }
  return {s.channels, s.length, s.length, s.ksize, 1, 1, s.ksize - 1, V};
}

// I: the index type (blocks/index_width.hpp), i64 for launches of 2^32 elements or more.
template <class T, blocks::IndexType I = u32>
void causal_conv1d_prefill_ncl(dsl::KernelBuilder& k, const CausalConv1dSpec& s, std::uint32_t V) {
  using namespace ingot::dsl;
  if (s.layout != SeqLayout::ChannelFirst) throw std::invalid_argument("causal_conv1d_prefill_ncl: layout [B, C, L]");
  const Rows1dGeom g = causal_ncl_geom(s, V);
  const std::uint32_t C = s.channels, L = s.length, K = s.ksize, S = K - 1;
  const auto io = declare_rows1d_io<T, I>(k, C, L, K, L, s.bias, s.init_state ? S : 0);
  Out<T> final_state;
  if (s.final_state) final_state = k.out<T>("final_state", io.batch * blocks::index_constant<I>(std::uint64_t{C} * S));

  const auto act = [&](const Val<f32>& z) { return s.silu ? silu(z) : z; };
  const auto after = [&](const Rows1dThread<I>& t) {
    if (!s.final_state) return;
    const auto Li = static_cast<std::int32_t>(L);
    // The group holding t = L-1 writes xx[L-K+1 .. L-1].
    if_(t.live && t.o0 <= Li - 1 && t.o0 >= Li - static_cast<std::int32_t>(V), [&] {
      for (std::uint32_t j = 0; j < S; ++j) {
        const std::int64_t pos = static_cast<std::int64_t>(L) - S + j;
        if (pos >= 0) {
          store(final_state, t.row * S + j, load(io.x, t.row * L + static_cast<std::uint32_t>(pos)));
        } else if (s.init_state) {
          store(final_state, t.row * S + j, load(io.init, t.row * S + static_cast<std::uint32_t>(pos + S)));
        } else {
          store(final_state, t.row * S + j, 0.0f);
        }
      }
    });
  };
  conv1d_rows<T, I>(k, g, io, act, after);
}

}  // namespace ingot::kernels
