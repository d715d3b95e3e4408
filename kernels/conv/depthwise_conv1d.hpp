// kernels/conv/depthwise_conv1d.hpp — depthwise 1-D convolution, one thread per output.
//
//   x [B, C, L], w [C, K], optional bias [C] -> y [B, C, O],
//   O = (L + 2*pad - dilation*(K-1) - 1) / stride + 1,
//   y[b,c,o] = bias[c] + sum_k x[b, c, o*stride + k*dilation - pad] * w[c, k]  (zero padding).
// B is a run-time scalar; C, L, K, stride, pad, dilation, bias and V are specialisation
// constants. Each thread computes V consecutive outputs of one (b, c) row and loads every
// distinct input position of their windows once (K + V - 1 loads instead of K * V when stride
// and dilation are 1). Tail threads clamp their index to element 0 for every read and skip
// their stores; outputs past the row's end (O not a multiple of V) are not stored, and their
// reads are select()ed in range. Accumulates in f32 for every dtype.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ingot/dsl.hpp"

namespace ingot::kernels {

struct DepthwiseConv1dSpec {
  std::uint32_t channels, length, ksize, stride, pad, dilation;
  bool bias;
  std::uint32_t outputs_per_thread = 1;  // V
  [[nodiscard]] std::uint32_t out_len() const;
  // Output groups per row: ceil(O / V); the launch has B * C * groups() threads.
  [[nodiscard]] std::uint32_t groups() const { return (out_len() + outputs_per_thread - 1) / outputs_per_thread; }
};

template <class T>
void depthwise_conv1d(dsl::KernelBuilder& k, const DepthwiseConv1dSpec& s) {
  using namespace ingot::dsl;
  const std::uint32_t C = s.channels, L = s.length, K = s.ksize, O = s.out_len();
  auto batch = k.scalar<u32>("batch");
  auto x = k.in<T>("x", batch * (C * L));
  auto w = k.in<T>("w", C * K);
  In<T> bias;
  if (s.bias) bias = k.in<T>("bias", C);
  auto y = k.out<T>("y", batch * (C * O));

  const std::uint32_t V = s.outputs_per_thread;
  const std::uint32_t G = s.groups();
  auto gid = k.let("gid", k.program_id(0));
  auto n = k.let("n", batch * (C * G));
  auto i = k.let("i", select(gid < n, gid, 0u));  // tail threads read element 0
  auto o0 = k.let("o0", (i % G) * V);              // first output of this thread
  auto c = k.let("c", (i / G) % C);
  auto row = k.let("row", (i / G) * L);  // (b*C + c) * L
  auto out_row = k.let("out_row", (i / G) * O);
  auto base = k.let("base", cast<i32>(o0 * s.stride) - static_cast<std::int32_t>(s.pad));
  // Every distinct input offset (relative to base) the V windows touch, loaded once.
  std::map<std::uint32_t, Val<f32>> xs;
  for (std::uint32_t j = 0; j < V; ++j) {
    for (std::uint32_t t = 0; t < K; ++t) {
      const std::uint32_t off = j * s.stride + t * s.dilation;
      if (xs.count(off)) continue;
      const auto tag = std::to_string(off);
      auto pos = k.let("pos" + tag, base + static_cast<std::int32_t>(off));
      auto ok = k.let("ok" + tag, pos >= 0 && pos < static_cast<std::int32_t>(L));
      auto xv = load(x, row + select(ok, cast<u32>(pos), 0u));
      xs.emplace(off, k.let("xv" + tag, select(ok, cast<f32>(xv), 0.0f)));
    }
  }
  std::vector<Val<f32>> ws;
  for (std::uint32_t t = 0; t < K; ++t) ws.push_back(cast<f32>(load(w, c * K + t)));
  const Val<f32> b0 = s.bias ? Val<f32>(k.let("bias_c", cast<f32>(load(bias, c)))) : Val<f32>(0.0f);
  for (std::uint32_t j = 0; j < V; ++j) {
    Val<f32> acc = b0;
    for (std::uint32_t t = 0; t < K; ++t) acc = acc + xs.at(j * s.stride + t * s.dilation) * ws[t];
    if (V == 1) {
      if_(gid < n, [&] { store(y, out_row + o0, acc); });
    } else if (O % V == 0) {
      if_(gid < n, [&] { store(y, out_row + o0 + j, acc); });
    } else {
      if_(gid < n && o0 + j < O, [&] { store(y, out_row + o0 + j, acc); });
    }
  }
}

}  // namespace ingot::kernels
