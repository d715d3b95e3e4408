// kernels/conv/depthwise_conv1d.hpp — depthwise 1-D convolution, one thread per output.
//
//   x [B, C, L], w [C, K], optional bias [C] -> y [B, C, O],
//   O = (L + 2*pad - dilation*(K-1) - 1) / stride + 1,
//   y[b,c,o] = bias[c] + sum_k x[b, c, o*stride + k*dilation - pad] * w[c, k]  (zero padding).
// B is a run-time scalar; C, L, K, stride, pad, dilation and bias are specialisation constants.
// Tail threads clamp their index to element 0 for every read and skip their store.
// Accumulates in f32 for every dtype.
#pragma once

#include <cstdint>

#include "ingot/dsl.hpp"

namespace ingot::kernels {

struct DepthwiseConv1dSpec {
  std::uint32_t channels, length, ksize, stride, pad, dilation;
  bool bias;
  [[nodiscard]] std::uint32_t out_len() const;
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

  auto gid = k.let("gid", k.program_id(0));
  auto n = k.let("n", batch * (C * O));
  auto i = k.let("i", select(gid < n, gid, 0u));  // tail threads read element 0
  auto o = k.let("o", i % O);
  auto c = k.let("c", (i / O) % C);
  auto row = k.let("row", (i / O) * L);  // (b*C + c) * L
  Val<f32> acc = s.bias ? cast<f32>(load(bias, c)) : Val<f32>(0.0f);
  for (std::uint32_t t = 0; t < K; ++t) {
    const auto tap = std::to_string(t);
    auto pos = k.let("pos" + tap, cast<i32>(o * s.stride) + static_cast<std::int32_t>(t * s.dilation) -
                                      static_cast<std::int32_t>(s.pad));
    auto ok = k.let("ok" + tap, pos >= 0 && pos < static_cast<std::int32_t>(L));
    auto xv = load(x, row + select(ok, cast<u32>(pos), 0u));
    auto wv = load(w, c * K + t);
    acc = acc + select(ok, cast<f32>(xv), 0.0f) * cast<f32>(wv);
  }
  if_(gid < n, [&] { store(y, gid, acc); });
}

}  // namespace ingot::kernels
