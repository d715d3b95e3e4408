// kernels/rope/rope.hpp — rotary position embedding on x [tokens, heads, head_dim] (dense), a position id per token.
//
//   For pair index i in [0, rot/2): angle = pos[token] * theta^(-2i/rot),
//     y1 = x1 cos(angle) - x2 sin(angle),  y2 = x2 cos(angle) + x1 sin(angle),
//   the pair (x1, x2) being features (i, i + rot/2) (NeoX, half-split) or (2i, 2i + 1) (GPT-J, interleaved). Features
//   rot .. head_dim-1 pass through unrotated (partial rotary dimension). Out of place (y), or in place (x InOut: the
//   pass-through features are then left alone).
//
// One thread per rotated pair (and, out of place, one per pass-through feature), computed in f32 whatever the stored
// type and rounded once on store. tokens and heads are run-time scalars; head_dim, rot and theta are specialisation
// constants: head_dim and rot fix which thread of a (token, head) row does what (a division by a constant), and with
// theta they give the frequencies as trace-time f64 constants, which is what keeps the angle accurate (below).
//
// Why the angle is not pos * inv_freq in f32: at pos ~ 32768 the f32 angle (~32768 rad) has an ulp of 2^-8 rad, and an
// f32 inv_freq's own rounding moves it as much: a rotation off by ~1e-3 rad, growing with the position. Here the angle
// is computed in turns, in integers, where nothing rounds:
//   - g_i = theta^(-2i/rot) / (2 pi) as a fixed-point i64 G (units of 2^-62 turn) from trace-time f64 constants: by
//     default 2^62 / (2 pi) times theta^(-2^(b+1)/rot) for each set bit b of i (the tuning option tables: one product
//     of two constants picked by select trees), each product's high half from 31-bit limbs;
//   - pos * G mod 2^62, computed exactly, is the angle's fraction of a turn (two's complement wraps are the mod);
//   - its quadrant and the rest, an eighth of a turn at most, are bit fields of it; the rest, truncated to 2^-26 turn,
//     is the only value converted to f32, and sin and cos come from polynomials on [-pi/4, pi/4].
// Float tricks would do the reduction with fewer operations (split products, two-sums), but GLSL compilers reassociate
// float arithmetic that is not declared precise, which undoes them on Vulkan (lavapipe erred by ~1e-3 with them);
// integers are exact on every backend, and the polynomials make the result independent of a backend's sin/cos (Vulkan
// promises only 2^-11 for those). The angle is then within ~2.5e-7 rad of the exact one for |pos| < 2^24 (rope.cpp's
// tolerance), the f64 constants' rounding (~1e-16 of G) adding up to ~1e-6 rad at |pos| ~ 2^31; every i32 position is
// computed without overflow (|pos * G's limbs| < 2^62).
// Preconditions: tokens, heads >= 1; tokens x heads x head_dim elements fit 32-bit indexes.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingot/dsl.hpp"

namespace ingot::kernels {

struct RopeSpec {
  std::uint32_t head_dim = 128;
  std::uint32_t rot = 128;      // rotated features: even, in [2, head_dim]
  bool neox = true;             // half-split pairs (i, i + rot/2); false: interleaved (2i, 2i + 1)
  std::uint32_t theta = 10000;  // the base: every common model's is an integer (10000, 500000, 1000000)
  bool inplace = false;         // x is InOut and y absent
  bool tables = false;          // the frequency from two tables of constants (else products over t's bits)

  // Refuses a spec the kernel cannot compute, saying what to change.
  void check() const {
    if (head_dim < 2 || head_dim > 1024) {
      throw std::invalid_argument("rope: head_dim = " + std::to_string(head_dim) + " must be in [2, 1024]");
    }
    if (rot < 2 || rot > head_dim || rot % 2 != 0) {
      throw std::invalid_argument("rope: rot = " + std::to_string(rot) + " must be even and in [2, head_dim = " +
                                  std::to_string(head_dim) + "] (the rotated features form pairs)");
    }
    if (theta < 2) throw std::invalid_argument("rope: theta = " + std::to_string(theta) + " must be >= 2");
  }
  // Threads of one (token, head) row: its pairs, and out of place its pass-through features.
  [[nodiscard]] std::uint32_t row_threads() const { return inplace ? rot / 2 : head_dim - rot / 2; }
};

namespace rope_detail {

inline constexpr int kTurnBits = 62;  // G's unit: 2^-62 turn
inline constexpr std::int64_t kLimb = (std::int64_t{1} << 31) - 1;

// round(v * 2^62) for v in [0, 1).
inline std::int64_t fixed(double v) { return static_cast<std::int64_t>(std::ldexp(v, kTurnBits) + 0.5); }

// G * c / 2^62 for fixed-point G, c in [0, 2^62): the high half from 31-bit limbs (every product below 2^62, their sum
// below 2^63), truncated (less than 2 units).
inline dsl::Val<i64> times(dsl::KernelBuilder& k, const dsl::Val<i64>& G, const dsl::Val<i64>& c) {
  using namespace ingot::dsl;
  auto gh = k.let("gh", G >> 31);
  auto gl = k.let("gl", G & k.constant<i64>(kLimb));
  auto ch = k.let("ch", c >> 31);
  auto cl = k.let("cl", c & k.constant<i64>(kLimb));
  return gh * ch + ((gh * cl + gl * ch) >> 31);
}

// values[index] for index < 2^bits, by a tree of selects on index's bits (values padded with its last entry).
inline dsl::Val<i64> pick(dsl::KernelBuilder& k, std::vector<std::int64_t> values, const dsl::Val<u32>& index,
                          std::uint32_t bits) {
  using namespace ingot::dsl;
  values.resize(std::size_t{1} << bits, values.back());
  std::vector<Val<i64>> level;
  for (const auto v : values) level.push_back(k.constant<i64>(v));
  for (std::uint32_t b = 0; b < bits; ++b) {
    auto set = k.let("bit", ((index >> b) & 1u) == 1u);
    std::vector<Val<i64>> next;
    for (std::size_t j = 0; j + 1 < level.size(); j += 2) next.push_back(select(set, level[j + 1], level[j]));
    level = std::move(next);
  }
  return level[0];
}

}  // namespace rope_detail

template <class T>
void rope(dsl::KernelBuilder& k, const RopeSpec& s) {
  using namespace ingot::dsl;
  using namespace rope_detail;
  s.check();
  auto tokens = k.scalar<u32>("tokens");
  auto heads = k.scalar<u32>("heads");
  k.require(tokens >= 1u && heads >= 1u);
  k.require(cast<i64>(tokens) * cast<i64>(heads) * k.constant<i64>(s.head_dim) <= k.constant<i64>(0xffffffffLL));
  const auto n = tokens * heads * s.head_dim;
  In<T> x;
  InOut<T> xio;
  Out<T> y;
  if (s.inplace) {
    xio = k.inout<T>("x", n);
  } else {
    x = k.in<T>("x", n);
  }
  auto pos = k.in<i32>("pos", tokens);
  if (!s.inplace) y = k.out<T>("y", n);
  const auto load_x = [&](const Val<u32>& at) { return s.inplace ? cast<f32>(load(xio, at)) : cast<f32>(load(x, at)); };

  const std::uint32_t half = s.rot / 2;
  const std::uint32_t per_row = s.row_threads();
  auto g = k.program_id(0);
  if_(g < tokens * heads * per_row, [&] {
    auto row = k.let("row", g / per_row);
    auto t = k.let("t", g - row * per_row);
    auto base = k.let("base", row * s.head_dim);
    auto pair = [&] {
      // The pair's loads first: their latency overlaps the angle's arithmetic.
      auto i1 = k.let("i1", s.neox ? base + t : base + 2u * t);
      auto i2 = k.let("i2", s.neox ? i1 + half : i1 + 1u);
      auto x1 = k.let("x1", load_x(i1));
      auto x2 = k.let("x2", load_x(i2));
      // G = g_t in units of 2^-62 turn.
      const double two_pi = 6.283185307179586476925286766559;
      const double ratio = std::pow(static_cast<double>(s.theta), -2.0 / s.rot);  // g_(t+1) / g_t
      std::uint32_t bits = 0;
      while ((1u << bits) < half) ++bits;
      Val<i64> G = k.constant<i64>(fixed(1.0 / two_pi));
      if (s.tables) {
        // g_t = A[t >> lo] * B[t & (2^lo - 1)]: two tables of trace-time constants, one product.
        const std::uint32_t lo = bits / 2, hi = bits - lo;
        std::vector<std::int64_t> A, B;
        for (std::uint32_t j = 0; j < (1u << hi); ++j) A.push_back(fixed(std::pow(ratio, j << lo) / two_pi));
        for (std::uint32_t m = 0; m < (1u << lo); ++m) B.push_back(fixed(std::pow(ratio, m)));
        G = k.let("G", pick(k, A, t >> lo, hi));
        if (lo > 0) G = k.let("G", times(k, G, pick(k, B, t & ((1u << lo) - 1u), lo)));
      } else {
        // g_t = g_0 * prod over the set bits b of t of r^(2^b).
        for (std::uint32_t b = 0; b < bits; ++b) {
          auto set = k.let("bit", ((t >> b) & 1u) == 1u);
          G = k.let("G", select(set, times(k, G, k.constant<i64>(fixed(std::pow(ratio, 1u << b)))), G));
        }
      }
      // pos * G mod 2^62 from pos * (high limb) mod 2^31 and pos * (low limb): G < 2^60, so both stay below 2^62.
      const auto mask = [&](int bits) { return k.constant<i64>((std::int64_t{1} << bits) - 1); };
      auto p = k.let("p", cast<i64>(load(pos, row / heads)));
      auto hi = k.let("hi", (p * (G >> 31)) & mask(31));
      auto turn = k.let("turn", ((hi << 31) + p * (G & mask(31))) & mask(kTurnBits));
      // Shifted by an eighth of a turn: the top two bits are the quadrant q, the rest r (in [-1/8, 1/8) turn once the
      // eighth is taken back) is rounded to 24 bits, exact in f32, and scaled to radians.
      auto u = k.let("u", (turn + k.constant<i64>(std::int64_t{1} << (kTurnBits - 3))) & mask(kTurnBits));
      auto q = k.let("q", cast<u32>(u >> (kTurnBits - 2)));
      auto r = k.let("r", (u & mask(kTurnBits - 2)) - k.constant<i64>(std::int64_t{1} << (kTurnBits - 3)));
      auto a = k.let("a", cast<f32>(r >> (kTurnBits - 26)) * static_cast<float>(two_pi / 67108864.0));
      // sin and cos of a (|a| <= pi/4) from Cephes' sinf / cosf polynomials.
      auto a2 = k.let("a2", a * a);
      auto sn = k.let("sn", a + a * a2 * (-1.6666654611e-1f + a2 * (8.3321608736e-3f + a2 * -1.9515295891e-4f)));
      auto cs = k.let(
          "cs", 1.0f - 0.5f * a2 +
                    a2 * a2 * (4.166664568298827e-2f + a2 * (-1.388731625493765e-3f + a2 * 2.443315711809948e-5f)));
      // Rotating by q quarter turns: an odd q swaps sin and cos; cos is negated in quadrants 1, 2, sin in 2, 3.
      auto odd = k.let("odd", (q & 1u) == 1u);
      auto c0 = k.let("c0", select(odd, sn, cs));
      auto s0 = k.let("s0", select(odd, cs, sn));
      auto cosv = k.let("cosv", select(q == 1u || q == 2u, -c0, c0));
      auto sinv = k.let("sinv", select(q >= 2u, -s0, s0));

      auto y1 = x1 * cosv - x2 * sinv;
      auto y2 = x2 * cosv + x1 * sinv;
      if (s.inplace) {
        store(xio, i1, cast<T>(y1));
        store(xio, i2, cast<T>(y2));
      } else {
        store(y, i1, cast<T>(y1));
        store(y, i2, cast<T>(y2));
      }
    };
    if (s.rot == s.head_dim || s.inplace) {
      pair();
    } else {
      if_(t < half, pair).else_([&] {
        auto at = k.let("at", base + s.rot + (t - half));
        store(y, at, load(x, at));
      });
    }
  });
}

}  // namespace ingot::kernels
