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
// of 8): A row-major (row m holds k), B "n-major" (row n holds k: B transposed, as a weight matrix [N, K] is stored).
// WarpTile multiplies a warp's (16 MT) x K block of A by a K x (8 NT) block of B, accumulating in f32.
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

// A warp's tile of MT x NT mma fragments: (16 MT) rows x (8 NT) columns of C in registers, f32.
// A is read from a shared array of 16-bit T, row-major with row stride `a_stride` elements (a multiple of 8); B from a
// shared array, n-major with row stride `b_stride` (a multiple of 8). NT must be even (load_matrix fills two B
// column tiles at once). Every lane of the warp must reach each call (load_matrix and mma are warp operations).
template <class T, std::uint32_t MT, std::uint32_t NT>
class WarpTile {
  static_assert(MT >= 1 && NT >= 2 && NT % 2 == 0, "a warp tile is MT x NT fragments of 16x8, NT even");

 public:
  // Accumulators start at 0.
  WarpTile(dsl::KernelBuilder& k, const WarpLane& lane) : k_(k), lane_(lane) {
    for (auto& row : acc_) {
      for (auto& frag : row) frag = {0.0f, 0.0f, 0.0f, 0.0f};
    }
  }

  // acc += A[a_row0 .., a_col0 .. +16) * B[.., b_n0 .. +8 NT) over one k-step of 16: A rows a_row0 + 16m (m < MT),
  // B rows (n) b_n0 + 8n. a_row0 / a_col0 / b_n0 / b_k0 are the block's corner (a_col0 and b_k0 multiples of 8).
  void mma_step(const dsl::Shared<T>& a, std::uint32_t a_stride, const dsl::Val<u32>& a_row0,
                const dsl::Val<u32>& a_col0, const dsl::Shared<T>& b, std::uint32_t b_stride, const dsl::Val<u32>& b_n0,
                const dsl::Val<u32>& b_k0) {
    using namespace ingot::dsl;
    // The rows this lane names (ldmatrix_a_row / ldmatrix_b_row, in traced values).
    auto a_r = k_.let("lmar", lane_.lane % 8u + 8u * ((lane_.lane / 8u) % 2u));
    auto a_c = k_.let("lmac", 8u * (lane_.lane / 16u));
    auto b_r = k_.let("lmbr", lane_.lane % 8u + 8u * (lane_.lane / 16u));
    auto b_c = k_.let("lmbc", 8u * ((lane_.lane / 8u) % 2u));
    std::array<std::array<Val<f32>, 8>, MT> af;
    for (std::uint32_t m = 0; m < MT; ++m) {
      const auto v = load_matrix(a, (a_row0 + 16u * m + a_r) * a_stride + a_col0 + a_c);
      for (std::uint32_t i = 0; i < 8; ++i) af[m][i] = cast<f32>(v[i]);
    }
    for (std::uint32_t n = 0; n < NT; n += 2) {
      const auto v = load_matrix(b, (b_n0 + 8u * n + b_r) * b_stride + b_k0 + b_c);
      const std::array<Val<f32>, 4> b0{cast<f32>(v[0]), cast<f32>(v[1]), cast<f32>(v[2]), cast<f32>(v[3])};
      const std::array<Val<f32>, 4> b1{cast<f32>(v[4]), cast<f32>(v[5]), cast<f32>(v[6]), cast<f32>(v[7])};
      for (std::uint32_t m = 0; m < MT; ++m) {
        acc_[m][n] = mma_m16n8k16<T>(k_, af[m], b0, acc_[m][n]);
        acc_[m][n + 1] = mma_m16n8k16<T>(k_, af[m], b1, acc_[m][n + 1]);
      }
    }
  }

  // Calls store(row, col, value) for each of this lane's accumulator values: row = 16m + g + 8(i/2),
  // col = 8n + 2t + i%2, relative to the warp tile's corner (mma_c_element).
  template <class Store>
  void for_each_value(const Store& store) const {
    for (std::uint32_t m = 0; m < MT; ++m) {
      for (std::uint32_t n = 0; n < NT; ++n) {
        for (std::uint32_t i = 0; i < 4; ++i) {
          store(lane_.g + (16u * m + 8u * (i / 2)), 2u * lane_.t + (8u * n + i % 2), acc_[m][n][i]);
        }
      }
    }
  }

  [[nodiscard]] const Accumulator& fragment(std::uint32_t m, std::uint32_t n) const { return acc_[m][n]; }

 private:
  dsl::KernelBuilder& k_;
  WarpLane lane_;
  std::array<std::array<Accumulator, NT>, MT> acc_;
};

}  // namespace ingot::blocks
