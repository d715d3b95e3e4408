// examples/depthwise_conv1d.hpp — depthwise 1-D convolution, written once for f32/f16/bf16.
//
// x [B, C, L], w [C, K] -> y [B, C, out_len], out_len = (L + 2*pad - dilation*(K-1) - 1)/stride + 1.
// One thread per output element, launched with grid_1d(B*C*out_len, 256).
//
// Guarded form (the fix for the bug class in shared/REFERENCE.md): tail threads clamp their
// index onto element 0, so every read stays in range, and skip their store. The unguarded form
// exists only as a negative test: the interpreter must catch its out-of-range reads.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <ingot/dsl.hpp>

namespace ingot::examples {

struct Conv1dShape {
  std::uint32_t channels = 1;
  std::uint32_t length = 1;
  std::uint32_t ksize = 1;
  std::uint32_t stride = 1;
  std::uint32_t pad = 0;
  std::uint32_t dilation = 1;

  [[nodiscard]] std::uint32_t out_len() const {
    const std::int64_t span = static_cast<std::int64_t>(dilation) * (ksize - 1) + 1;
    const std::int64_t padded = static_cast<std::int64_t>(length) + 2 * static_cast<std::int64_t>(pad);
    if (stride == 0 || ksize == 0 || dilation == 0 || channels == 0 || length == 0) {
      throw std::invalid_argument("depthwise_conv1d: channels, length, ksize, stride and dilation must be >= 1");
    }
    if (padded < span) throw std::invalid_argument("depthwise_conv1d: kernel span exceeds the padded input length");
    return static_cast<std::uint32_t>((padded - span) / stride + 1);
  }
};

enum class TailPolicy { Guarded, Unguarded };

template <class T>
void depthwise_conv1d(dsl::KernelBuilder& k, const Conv1dShape& s, TailPolicy tail) {
  using namespace ingot::dsl;
  const std::uint32_t C = s.channels;
  const std::uint32_t L = s.length;
  const std::uint32_t K = s.ksize;
  const std::uint32_t O = s.out_len();

  auto batch = k.scalar<u32>("batch");
  auto x = k.in<T>("x", batch * (C * L));
  auto w = k.in<T>("w", C * K);
  auto y = k.out<T>("y", batch * (C * O));

  auto idx = k.program_id(0);
  auto n = k.let("n", batch * (C * O));
  // Tail threads read element 0 (always in range) and never store.
  Val<u32> i = tail == TailPolicy::Guarded ? k.let("i", select(idx < n, idx, 0u)) : idx;
  auto o = k.let("o", i % O);
  auto c = k.let("c", (i / O) % C);
  auto b = k.let("b", i / (O * C));
  auto row = k.let("row", (b * C + c) * L);

  Val<f32> acc = 0.0f;
  for (std::uint32_t t = 0; t < K; ++t) {  // K is a specialisation constant: unrolled
    const auto tap = "t" + std::to_string(t);
    auto pos = k.let("pos" + tap, cast<i32>(o * s.stride) + static_cast<std::int32_t>(t * s.dilation) -
                                      static_cast<std::int32_t>(s.pad));
    auto inside = k.let("ok" + tap, pos >= 0 && pos < static_cast<std::int32_t>(L));
    auto xv = load(x, row + select(inside, cast<u32>(pos), 0u));
    auto wv = load(w, c * K + t);
    acc = acc + select(inside, cast<f32>(xv), 0.0f) * cast<f32>(wv);
  }
  if (tail == TailPolicy::Guarded) {
    if_(idx < n, [&] { store(y, idx, cast<T>(acc)); });
  } else {
    store(y, idx, cast<T>(acc));
  }
}

}  // namespace ingot::examples
