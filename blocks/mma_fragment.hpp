// blocks/mma_fragment.hpp — the warp-level matrix fragments of mma_m16n8k16 and the lane maps that fill them.
//
// The IR's mma_m16n8k16 (ir.hpp, "Matrix multiply-accumulate") spreads a 16x16 A, a 16x8 B and a 16x8 C over the 32
// lanes of a warp; load_matrix (ir.hpp, "Matrix loads") reads four 8x8 matrices of a shared array, each lane naming
// one row. Which lane holds which element, and which row each lane must name so that a load lands in a fragment, is
// stated here once, as constexpr maps (host and trace time) and as the DSL expressions a kernel uses: a kernel body
// names tiles and k-steps, never `lane / 4` and `2 * (lane % 4)`.
//
//   A (M x K, 16x16): mma_a_element(l, i), i < 8     B (K x N, 16x8): mma_b_element(l, i), i < 4
//   C, D (M x N, 16x8): mma_c_element(l, i), i < 4   (row, column) of the element lane l holds as value i.
//
// Storage the loads expect (16-bit elements in a shared array, rows of 8 consecutive elements, row starts multiples
// of 8): A row-major (row m holds k) or transposed (row k holds m), B "n-major" (row n holds k, as a weight matrix
// [N, K] is stored) or row-major (row k holds n); the transposed forms are read with load_matrix_trans.
// WarpTile multiplies a warp's (16 mt) x K block of A by a K x (8 nt) block of B, accumulating in f32.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ingot/dsl.hpp"

namespace ingot::blocks {

inline constexpr std::uint32_t kWarpLanes = 32;

// The (row, column) of an element of a fragment.
struct FragmentCoord {
  std::uint32_t row = 0, col = 0;
  friend constexpr bool operator==(FragmentCoord, FragmentCoord) = default;
};

// A's value i (< 8) of lane l: A[g + 8((i/2)%2)][2t + i%2 + 8(i/4)], g = l/4, t = l%4.
constexpr FragmentCoord mma_a_element(std::uint32_t lane, std::uint32_t i) {
  return {lane / 4 + 8 * ((i / 2) % 2), 2 * (lane % 4) + i % 2 + 8 * (i / 4)};
}
// B's value i (< 4) of lane l: B[2t + i%2 + 8(i/2)][g] (row k, column n).
constexpr FragmentCoord mma_b_element(std::uint32_t lane, std::uint32_t i) {
  return {2 * (lane % 4) + i % 2 + 8 * (i / 2), lane / 4};
}
// C's and D's value i (< 4) of lane l: C[g + 8(i/2)][2t + i%2].
constexpr FragmentCoord mma_c_element(std::uint32_t lane, std::uint32_t i) {
  return {lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2};
}

// The row of a row-major 16x16 A tile that lane l names in load_matrix so that it receives A's fragment a_0..a_7:
// (row, first column) = ((l%8) + 8((l/8)%2), 8(l/16)).
constexpr FragmentCoord ldmatrix_a_row(std::uint32_t lane) {
  return {lane % 8 + 8 * ((lane / 8) % 2), 8 * (lane / 16)};
}
// The row of an n-major B block (16 n x 16 k: row n holds k) that lane l names in load_matrix so that it receives the
// B fragments of two 8-column tiles: values 0..3 are b_0..b_3 of columns n 0..7, values 4..7 of columns 8..15.
// (row = n, first column = k) = ((l%8) + 8(l/16), 8((l/8)%2)).
constexpr FragmentCoord ldmatrix_b_row(std::uint32_t lane) {
  return {lane % 8 + 8 * (lane / 16), 8 * ((lane / 8) % 2)};
}

// A lane's place in its warp, as traced values: lane = local_id(0) % 32, g = lane / 4, t = lane % 4.
struct WarpLane {
  dsl::Val<u32> lane, g, t;
  static WarpLane of(dsl::KernelBuilder& k, const dsl::Val<u32>& local, const std::string& tag = "") {
    auto lane = k.let("lane" + tag, local % kWarpLanes);
    return {lane, k.let("lg" + tag, lane / 4u), k.let("lt" + tag, lane % 4u)};
  }
};

// One 16x8 accumulator fragment (C/D of mma_m16n8k16), f32.
using Accumulator = std::array<dsl::Val<f32>, 4>;

// Where a 16-bit operand tile lies in a shared array, and which of its dimensions is contiguous. A (M x K) is
// k-contiguous when row m holds its k values (row-major A), m-contiguous when row k holds its m values (A stored
// transposed, [K, M]); B (K x N) is k-contiguous when row n holds its k values ("n-major", a weight matrix [N, K]),
// n-contiguous when row k holds its n values (row-major B, [K, N]). `stride` is the distance between rows in elements,
// a multiple of 8; the element (row, column) of the stored matrix is at base + row * stride + column. k-contiguous
// tiles are read with load_matrix, the others with load_matrix_trans: both give the same fragments.
template <class T>
struct SharedOperand {
  dsl::Shared<T> buf;
  std::uint32_t stride = 0;
  bool k_contiguous = true;
  dsl::Val<u32> base;
};

// A warp's tile of mt x nt mma fragments: (16 mt) rows x (8 nt) columns of C in registers, f32, held in mutable
// variables so that a run-time loop can accumulate into them. A and B are read from shared arrays of 16-bit T
// (SharedOperand). nt must be even (load_matrix fills two B column tiles at once). Every lane of the warp must reach
// each call (load_matrix and mma are warp operations).
// Two ways to one result, chosen at trace time: warp matrix instructions (load_matrix and mma_m16n8k16: tensor cores on
// CUDA, an exchange through shared memory elsewhere), or plain loops in which each lane reads the A and B values of
// its own accumulator elements from the shared tiles and multiply-adds them in f32 (no exchange, no warp operation:
// the compact form for backends without matrix instructions, whose legalised exchanges make sources of hundreds of
// kB). Both round nothing before the f32 sums (the values are 16-bit already) and leave each lane holding the same
// accumulator elements (mma_c_element), so the epilogue is one.
template <class T>
class WarpTile {
 public:
  // Accumulators start at 0. matrix_instructions: load_matrix and mma_m16n8k16, else plain loops.
  WarpTile(dsl::KernelBuilder& k, const WarpLane& lane, std::uint32_t mt, std::uint32_t nt,
           bool matrix_instructions = true)
      : k_(k), lane_(lane), mt_(mt), nt_(nt), matrix_(matrix_instructions) {
    if (mt < 1 || nt < 2 || nt % 2 != 0) {
      throw dsl::TraceError("a warp tile is mt x nt fragments of 16x8 with mt >= 1 and nt even, not " +
                            std::to_string(mt) + " x " + std::to_string(nt));
    }
    acc_.reserve(std::size_t{mt} * nt * 4);
    for (std::size_t i = 0; i < std::size_t{mt} * nt * 4; ++i) acc_.emplace_back(k, dsl::Val<f32>(0.0f));
  }

  // acc += A[m0 .. m0 + 16 mt, k0 .. k0 + 16) * B[k0 .. k0 + 16, n0 .. n0 + 8 nt) over one k-step of 16. m0, n0 and k0
  // are the corner inside the operands' tiles (multiples of 8).
  void mma_step(const SharedOperand<T>& a, const dsl::Val<u32>& m0, const SharedOperand<T>& b, const dsl::Val<u32>& n0,
                const dsl::Val<u32>& k0) {
    if (matrix_) {
      matrix_step(a, m0, b, n0, k0);
    } else {
      loop_step(a, m0, b, n0, k0);
    }
  }

  // Calls store(row, col, value) for each of this lane's accumulator values: row = 16m + g + 8(i/2),
  // col = 8n + 2t + i%2, relative to the warp tile's corner (mma_c_element). Values i and i + 1 (i even) are
  // adjacent columns of one row.
  template <class Store>
  void for_each_value(const Store& store) const {
    for (std::uint32_t m = 0; m < mt_; ++m) {
      for (std::uint32_t n = 0; n < nt_; ++n) {
        for (std::uint32_t i = 0; i < 4; ++i) {
          store(lane_.g + (16u * m + 8u * (i / 2)), 2u * lane_.t + (8u * n + i % 2), acc_[index(m, n, i)].get());
        }
      }
    }
  }

  // Fragment (m, n)'s current values.
  [[nodiscard]] Accumulator fragment(std::uint32_t m, std::uint32_t n) const {
    return {acc_[index(m, n, 0)].get(), acc_[index(m, n, 1)].get(), acc_[index(m, n, 2)].get(),
            acc_[index(m, n, 3)].get()};
  }
  [[nodiscard]] std::uint32_t mt() const { return mt_; }
  [[nodiscard]] std::uint32_t nt() const { return nt_; }

 private:
  void matrix_step(const SharedOperand<T>& a, const dsl::Val<u32>& m0, const SharedOperand<T>& b,
                   const dsl::Val<u32>& n0, const dsl::Val<u32>& k0) {
    using namespace ingot::dsl;
    const auto& l = lane_.lane;
    // The (row, column) of the stored matrix this lane names: ldmatrix_a_row / ldmatrix_b_row for k-contiguous tiles,
    // the transposed maps for the others (ir.hpp, "Matrix loads").
    auto lo8 = k_.let("lm8", l % 8u);
    auto mid = k_.let("lmid", 8u * ((l / 8u) % 2u));
    auto hi = k_.let("lmhi", 8u * (l / 16u));
    std::vector<std::array<Val<f32>, 8>> af;
    for (std::uint32_t m = 0; m < mt_; ++m) {
      // k-contiguous: m = lo8 + mid, k = hi; m-contiguous: k = lo8 + hi, m = mid.
      const auto row = a.k_contiguous ? (m0 + 16u * m + lo8 + mid) * a.stride + k0 + hi
                                      : (k0 + lo8 + hi) * a.stride + m0 + 16u * m + mid;
      const auto v = load_matrix(a.buf, a.base + row, !a.k_contiguous);
      std::array<Val<f32>, 8> f;
      for (std::uint32_t i = 0; i < 8; ++i) f[i] = cast<f32>(v[i]);
      af.push_back(f);
    }
    for (std::uint32_t n = 0; n < nt_; n += 2) {
      // k-contiguous: n = lo8 + hi, k = mid; n-contiguous: k = lo8 + mid, n = hi.
      const auto row = b.k_contiguous ? (n0 + 8u * n + lo8 + hi) * b.stride + k0 + mid
                                      : (k0 + lo8 + mid) * b.stride + n0 + 8u * n + hi;
      const auto v = load_matrix(b.buf, b.base + row, !b.k_contiguous);
      const std::array<Val<f32>, 4> b0{cast<f32>(v[0]), cast<f32>(v[1]), cast<f32>(v[2]), cast<f32>(v[3])};
      const std::array<Val<f32>, 4> b1{cast<f32>(v[4]), cast<f32>(v[5]), cast<f32>(v[6]), cast<f32>(v[7])};
      for (std::uint32_t m = 0; m < mt_; ++m) {
        accumulate(m, n, mma_m16n8k16<T>(k_, af[m], b0, fragment(m, n)));
        accumulate(m, n + 1, mma_m16n8k16<T>(k_, af[m], b1, fragment(m, n + 1)));
      }
    }
  }

  // Plain loops: lane (g, t) holds rows g, g + 8 of each 16-row fragment and columns 2t, 2t + 1 of each 8-column one
  // (mma_c_element), so per k it reads 2 mt values of A and 2 nt of B and adds their 4 mt nt products.
  void loop_step(const SharedOperand<T>& a, const dsl::Val<u32>& m0, const SharedOperand<T>& b, const dsl::Val<u32>& n0,
                 const dsl::Val<u32>& k0) {
    using namespace ingot::dsl;
    const auto at = [](const SharedOperand<T>& o, const Val<u32>& outer, const Val<u32>& kk) {
      return o.k_contiguous ? o.base + outer * o.stride + kk : o.base + kk * o.stride + outer;
    };
    for_(k_.constant<u32>(0), 16u, [&](const Val<u32>& step) {
      auto kk = k_.let("kk", k0 + step);
      std::vector<Val<f32>> av, bv;
      for (std::uint32_t m = 0; m < mt_; ++m) {
        for (std::uint32_t h = 0; h < 2; ++h) {
          av.push_back(k_.let("wa", cast<f32>(load(a.buf, at(a, m0 + (16u * m + 8u * h) + lane_.g, kk)))));
        }
      }
      for (std::uint32_t n = 0; n < nt_; ++n) {
        for (std::uint32_t e = 0; e < 2; ++e) {
          bv.push_back(k_.let("wb", cast<f32>(load(b.buf, at(b, n0 + (8u * n + e) + 2u * lane_.t, kk)))));
        }
      }
      for (std::uint32_t m = 0; m < mt_; ++m) {
        for (std::uint32_t n = 0; n < nt_; ++n) {
          for (std::uint32_t i = 0; i < 4; ++i) {
            auto& acc = acc_[index(m, n, i)];
            acc = fma(av[2 * m + i / 2], bv[2 * n + i % 2], acc.get());
          }
        }
      }
    });
  }

  [[nodiscard]] std::size_t index(std::uint32_t m, std::uint32_t n, std::uint32_t i) const {
    return (std::size_t{m} * nt_ + n) * 4 + i;
  }
  void accumulate(std::uint32_t m, std::uint32_t n, const Accumulator& d) {
    for (std::uint32_t i = 0; i < 4; ++i) acc_[index(m, n, i)] = d[i];
  }

  dsl::KernelBuilder& k_;
  WarpLane lane_;
  std::uint32_t mt_, nt_;
  bool matrix_;
  std::vector<dsl::Var<f32>> acc_;
};

}  // namespace ingot::blocks
