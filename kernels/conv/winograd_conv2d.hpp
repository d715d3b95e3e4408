// kernels/conv/winograd_conv2d.hpp — Winograd F(2x2, 3x3) 2-D convolution (stride 1, 3x3
// filter, NCHW input, OIHW weight), as two kernels:
//
//   winograd_filter_transform: w [O, C, 3, 3] (T) -> u [O, C, 16] (f32),  u = G g G^T
//     one thread per (o, c); O (the filter count) is the run-time scalar, C a constant.
//   winograd_conv2d: x [B, C, H, W] (T), u [O, C, 16] (f32), optional bias [O] (T)
//     -> y [B, O, OH, OW] (T),  OH = H + 2*pad_h - 2,  OW = W + 2*pad_w - 2,
//     y[b,o,i,j] = bias[o] + sum_{c,r,s} x[b, c, i+r-pad_h, j+s-pad_w] * w[o,c,r,s]  (zero padding),
//     one thread per 2x2 output tile: per input channel it loads the 4x4 input patch d,
//     forms V = B^T d B, accumulates m += U (.) V; at the end Y = A^T m A.
//
// The transformed filter is kept in f32 for every dtype: G g G^T has halves and sums that
// f16/bf16 would round, and the filter is small next to the activations. Accumulation is f32.
// Any output size: the tile grid is ceil(OH/2) x ceil(OW/2); the last tile row/column of an
// odd size stores only its in-range outputs, and every read is in range (indices clamped,
// values of padding and out-of-range rows/columns select()ed to zero). Tail threads clamp
// their index onto tile 0 for every read and skip every store.
// B and O are run-time scalars of their kernels; everything else is a specialisation constant.
//
// Accuracy against direct convolution (f64 oracle on the dtype-rounded inputs) is measured
// and documented in docs/winograd.md and in the registration (winograd_conv2d.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ingot/dsl.hpp"

namespace ingot::kernels {

// The 3x3 -> 4x4 filter transform of one filter, G g G^T, in f32 with one fixed order of
// operations: each of the two 1-D passes maps (a, b, c) to (a, (a+b+c)*0.5, (a-b+c)*0.5, c).
// Multiplying by 0.5 is exact and comes last, so no backend can contract it into an fma: the
// kernel below and this host function give bit-identical results.
inline std::array<float, 16> winograd_filter_transform_host(const std::array<float, 9>& g) {
  std::array<float, 12> t{};  // G g: 4 rows x 3 columns
  for (int s = 0; s < 3; ++s) {
    const float a = g[0 * 3 + s], b = g[1 * 3 + s], c = g[2 * 3 + s];
    t[0 * 3 + s] = a;
    t[1 * 3 + s] = (a + b + c) * 0.5f;
    t[2 * 3 + s] = (a - b + c) * 0.5f;
    t[3 * 3 + s] = c;
  }
  std::array<float, 16> u{};  // (G g) G^T
  for (int r = 0; r < 4; ++r) {
    const float a = t[r * 3 + 0], b = t[r * 3 + 1], c = t[r * 3 + 2];
    u[r * 4 + 0] = a;
    u[r * 4 + 1] = (a + b + c) * 0.5f;
    u[r * 4 + 2] = (a - b + c) * 0.5f;
    u[r * 4 + 3] = c;
  }
  return u;
}

// The filter transform of a whole OIHW weight (values exactly representable in f32): U [O, C, 16].
inline std::vector<double> winograd_filter_transform_host(const std::vector<double>& w, std::size_t filters) {
  std::vector<double> u(filters * 16);
  for (std::size_t f = 0; f < filters; ++f) {
    std::array<float, 9> g{};
    for (std::size_t e = 0; e < 9; ++e) g[e] = static_cast<float>(w[f * 9 + e]);
    const auto t = winograd_filter_transform_host(g);
    for (std::size_t e = 0; e < 16; ++e) u[f * 16 + e] = t[e];
  }
  return u;
}

struct WinogradFilterSpec {
  std::uint32_t in_channels;
};

template <class T>
void winograd_filter_transform(dsl::KernelBuilder& k, const WinogradFilterSpec& s) {
  using namespace ingot::dsl;
  const std::uint32_t C = s.in_channels;
  auto filters_o = k.scalar<u32>("out_channels");
  auto w = k.in<T>("w", filters_o * (C * 9u));
  auto u = k.out<f32>("u", filters_o * (C * 16u));

  auto gid = k.let("gid", k.program_id(0));
  auto n = k.let("n", filters_o * C);
  auto i = k.let("i", select(gid < n, gid, 0u));  // tail threads read filter 0
  std::array<Val<f32>, 9> g;
  for (std::uint32_t e = 0; e < 9; ++e) g[e] = cast<f32>(load(w, i * 9u + e));
  // The same two passes, in the same order, as winograd_filter_transform_host.
  auto pass = [](const Val<f32>& a, const Val<f32>& b, const Val<f32>& c) {
    return std::array<Val<f32>, 4>{a, (a + b + c) * 0.5f, (a - b + c) * 0.5f, c};
  };
  std::array<Val<f32>, 12> t;
  for (std::uint32_t c = 0; c < 3; ++c) {
    const auto col = pass(g[0 * 3 + c], g[1 * 3 + c], g[2 * 3 + c]);
    for (std::uint32_t r = 0; r < 4; ++r) t[r * 3 + c] = col[r];
  }
  std::array<Val<f32>, 16> out;
  for (std::uint32_t r = 0; r < 4; ++r) {
    const auto row = pass(t[r * 3 + 0], t[r * 3 + 1], t[r * 3 + 2]);
    for (std::uint32_t c = 0; c < 4; ++c) out[r * 4 + c] = row[c];
  }
  if_(gid < n, [&] {
    for (std::uint32_t e = 0; e < 16; ++e) store(u, gid * 16u + e, out[e]);
  });
}

struct WinogradConv2dSpec {
  std::uint32_t in_channels, out_channels, height, width, pad_h, pad_w;
  bool bias;
  [[nodiscard]] std::uint32_t out_h() const;
  [[nodiscard]] std::uint32_t out_w() const;
  [[nodiscard]] std::uint32_t tiles_h() const { return (out_h() + 1) / 2; }
  [[nodiscard]] std::uint32_t tiles_w() const { return (out_w() + 1) / 2; }
};

template <class T>
void winograd_conv2d(dsl::KernelBuilder& k, const WinogradConv2dSpec& s) {
  using namespace ingot::dsl;
  const std::uint32_t C = s.in_channels, O = s.out_channels, H = s.height, W = s.width;
  const std::uint32_t OH = s.out_h(), OW = s.out_w(), TH = s.tiles_h(), TW = s.tiles_w();
  auto batch = k.scalar<u32>("batch");
  auto x = k.in<T>("x", batch * (C * H * W));
  auto u = k.in<f32>("u", O * C * 16u);
  In<T> bias;
  if (s.bias) bias = k.in<T>("bias", O);
  auto y = k.out<T>("y", batch * (O * OH * OW));

  auto gid = k.let("gid", k.program_id(0));
  auto n = k.let("n", batch * (O * TH * TW));
  auto i = k.let("i", select(gid < n, gid, 0u));  // tail threads read tile 0
  auto tx = k.let("tx", i % TW);
  auto ty = k.let("ty", (i / TW) % TH);
  auto o = k.let("o", (i / (TW * TH)) % O);
  auto b = k.let("b", i / (TW * TH * O));

  // The 4x4 input patch of this tile starts at (2*ty - pad_h, 2*tx - pad_w). Per row and
  // column: whether it lies inside the image, and its clamped (always valid) offset.
  std::array<Val<u32>, 4> row_off, col;
  std::array<Val<bool>, 4> row_ok, col_ok;
  for (std::uint32_t r = 0; r < 4; ++r) {
    const auto tag = std::to_string(r);
    auto iy = k.let("iy" + tag, cast<i32>(ty * 2u) + static_cast<std::int32_t>(r) - static_cast<std::int32_t>(s.pad_h));
    row_ok[r] = k.let("row_ok" + tag, iy >= 0 && iy < static_cast<std::int32_t>(H));
    row_off[r] = k.let("row_off" + tag, select(row_ok[r], cast<u32>(iy), 0u) * W);
    auto ix = k.let("ix" + tag, cast<i32>(tx * 2u) + static_cast<std::int32_t>(r) - static_cast<std::int32_t>(s.pad_w));
    col_ok[r] = k.let("col_ok" + tag, ix >= 0 && ix < static_cast<std::int32_t>(W));
    col[r] = k.let("col" + tag, select(col_ok[r], cast<u32>(ix), 0u));
  }

  // Per patch element: inside the image or not, and its clamped offset in a channel plane.
  std::array<Val<u32>, 16> off;
  std::array<Val<bool>, 16> ok;
  for (std::uint32_t r = 0; r < 4; ++r) {
    for (std::uint32_t q = 0; q < 4; ++q) {
      const auto tag = std::to_string(r) + std::to_string(q);
      ok[r * 4 + q] = k.let("ok" + tag, row_ok[r] && col_ok[q]);
      off[r * 4 + q] = k.let("off" + tag, row_off[r] + col[q]);
    }
  }

  std::vector<Var<f32>> m;
  m.reserve(16);
  for (std::uint32_t e = 0; e < 16; ++e) m.emplace_back(k, 0.0f, "m" + std::to_string(e));
  auto x_base = k.let("x_base", b * (C * H * W));
  auto u_base = k.let("u_base", o * (C * 16u));
  for_(k.constant<u32>(0), C, [&](Val<u32> c) {
    auto plane = k.let("plane", x_base + c * (H * W));
    std::array<Val<f32>, 16> d;
    for (std::uint32_t e = 0; e < 16; ++e) d[e] = select(ok[e], cast<f32>(load(x, plane + off[e])), 0.0f);
    // B^T d: rows (d0 - d2, d1 + d2, d2 - d1, d1 - d3); then the same on columns.
    std::array<Val<f32>, 16> t, v;
    for (std::uint32_t q = 0; q < 4; ++q) {
      const auto &d0 = d[0 * 4 + q], &d1 = d[1 * 4 + q], &d2 = d[2 * 4 + q], &d3 = d[3 * 4 + q];
      t[0 * 4 + q] = d0 - d2;
      t[1 * 4 + q] = d1 + d2;
      t[2 * 4 + q] = d2 - d1;
      t[3 * 4 + q] = d1 - d3;
    }
    for (std::uint32_t r = 0; r < 4; ++r) {
      const auto &t0 = t[r * 4 + 0], &t1 = t[r * 4 + 1], &t2 = t[r * 4 + 2], &t3 = t[r * 4 + 3];
      v[r * 4 + 0] = t0 - t2;
      v[r * 4 + 1] = t1 + t2;
      v[r * 4 + 2] = t2 - t1;
      v[r * 4 + 3] = t1 - t3;
    }
    auto uc = k.let("uc", u_base + c * 16u);
    for (std::uint32_t e = 0; e < 16; ++e) m[e] += load(u, uc + e) * v[e];
  });

  // A^T m A: rows (m0 + m1 + m2, m1 - m2 - m3); then the same on columns.
  std::array<Val<f32>, 8> sr;
  for (std::uint32_t q = 0; q < 4; ++q) {
    const Val<f32> m0 = m[0 * 4 + q], m1 = m[1 * 4 + q], m2 = m[2 * 4 + q], m3 = m[3 * 4 + q];
    sr[0 * 4 + q] = m0 + m1 + m2;
    sr[1 * 4 + q] = m1 - m2 - m3;
  }
  std::array<Val<f32>, 4> out;
  for (std::uint32_t r = 0; r < 2; ++r) {
    const auto &s0 = sr[r * 4 + 0], &s1 = sr[r * 4 + 1], &s2 = sr[r * 4 + 2], &s3 = sr[r * 4 + 3];
    out[r * 2 + 0] = s0 + s1 + s2;
    out[r * 2 + 1] = s1 - s2 - s3;
  }
  if (s.bias) {
    auto bias_v = k.let("bias_v", cast<f32>(load(bias, o)));
    for (auto& v : out) v = v + bias_v;
  }
  for (std::uint32_t e = 0; e < 4; ++e) out[e] = k.let("y" + std::to_string(e), out[e]);
  auto oy = k.let("oy", ty * 2u);
  auto ox = k.let("ox", tx * 2u);
  auto y_base = k.let("y_base", ((b * O + o) * OH + oy) * OW + ox);
  if_(gid < n, [&] {
    // The last tile row/column of an odd output size holds one valid row/column.
    const bool odd_h = OH % 2 != 0, odd_w = OW % 2 != 0;
    store(y, y_base, out[0]);
    auto second_col = [&](const Val<u32>& at, const Val<f32>& val) {
      if (odd_w) {
        if_(ox + 1u < OW, [&] { store(y, at, val); });
      } else {
        store(y, at, val);
      }
    };
    second_col(y_base + 1u, out[1]);
    auto second_row = [&] {
      store(y, y_base + OW, out[2]);
      second_col(y_base + (OW + 1u), out[3]);
    };
    if (odd_h) {
      if_(oy + 1u < OH, second_row);
    } else {
      second_row();
    }
  });
}

}  // namespace ingot::kernels
