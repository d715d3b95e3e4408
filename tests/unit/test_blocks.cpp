// The building blocks (blocks/): each block's lane maps against the IR's written semantics, and a kernel written
// from the blocks alone (a GEMM tile) against a host product, on the interpreter and on OpenCL where present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "blocks/mma_fragment.hpp"
#include "blocks/tile_copy.hpp"
#include "ingot/dsl.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/cuda.hpp"
#include "ingot/runtime/interp.hpp"
#include "ingot/runtime/opencl.hpp"
#include "ingot/scalar_eval.hpp"

using namespace ingot;
using namespace ingot::dsl;
using namespace ingot::blocks;

namespace {

// Every element of a rows x cols fragment is held by exactly one (lane, value).
template <class Map>
void expect_bijection(Map map, std::uint32_t values, std::uint32_t rows, std::uint32_t cols) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  for (std::uint32_t l = 0; l < kWarpLanes; ++l) {
    for (std::uint32_t i = 0; i < values; ++i) {
      const FragmentCoord c = map(l, i);
      EXPECT_LT(c.row, rows);
      EXPECT_LT(c.col, cols);
      EXPECT_TRUE(seen.insert({c.row, c.col}).second) << "lane " << l << " value " << i;
    }
  }
  EXPECT_EQ(seen.size(), std::size_t{rows} * cols);
}

// load_matrix (ir.hpp): lanes 8i..8i+7 name the rows of matrix i; lane l receives v_{2i+e} = M_i[l/4][2(l%4)+e].
// Given the row each lane names (row, first column), the element of the stored block lane l receives as value v.
FragmentCoord ldmatrix_receives(FragmentCoord (*row_of)(std::uint32_t), std::uint32_t lane, std::uint32_t v) {
  const std::uint32_t i = v / 2, e = v % 2;
  const FragmentCoord named = row_of(8 * i + lane / 4);
  return {named.row, named.col + 2 * (lane % 4) + e};
}

}  // namespace

TEST(BlocksMmaFragment, LaneMapsCoverEachFragmentOnce) {
  expect_bijection(mma_a_element, 8, 16, 16);
  expect_bijection(mma_b_element, 4, 16, 8);
  expect_bijection(mma_c_element, 4, 16, 8);
}

TEST(BlocksMmaFragment, LoadMatrixRowsFillTheFragments) {
  for (std::uint32_t l = 0; l < kWarpLanes; ++l) {
    for (std::uint32_t v = 0; v < 8; ++v) {
      // A row-major: the element received is A's value v of lane l.
      EXPECT_EQ(ldmatrix_receives(ldmatrix_a_row, l, v), mma_a_element(l, v)) << "lane " << l << " value " << v;
      // B n-major (row n holds k): values 0..3 are b_0..b_3 of columns 0..7, values 4..7 of columns 8..15.
      const FragmentCoord got = ldmatrix_receives(ldmatrix_b_row, l, v);  // (n, k)
      const FragmentCoord want = mma_b_element(l, v % 4);                 // (k, n) within its 8-column tile
      EXPECT_EQ(got.row, want.col + 8 * (v / 4)) << "lane " << l << " value " << v;
      EXPECT_EQ(got.col, want.row) << "lane " << l << " value " << v;
    }
  }
}

namespace {

// C[M x N] = A[M x K] * B[K x N] by one warp from the blocks alone: the operands staged into shared memory by every
// lane as they are stored (A row-major [M, K] or transposed [K, M]; B n-major [N, K] or row-major [K, N]), then a
// WarpTile of MT x NT fragments over K / 16 k-steps.
template <class T, std::uint32_t MT, std::uint32_t NT>
ir::Kernel warp_gemm(std::uint32_t K, bool a_k_contiguous, bool b_k_contiguous, bool matrix_instructions) {
  constexpr std::uint32_t M = 16 * MT, N = 8 * NT;
  return passes::optimize(trace("warp_gemm", [=](KernelBuilder& k) {
    k.launch_bounds(kWarpLanes);
    auto a = k.in<T>("a", M * K);
    auto b = k.in<T>("b", N * K);
    auto c = k.out<f32>("c", M * N);
    auto as = k.shared<T>("as", M * K);
    auto bs = k.shared<T>("bs", N * K);
    auto lid = k.local_id(0);
    for (std::uint32_t r = 0; r < M * K / kWarpLanes; ++r)
      store(as, lid + r * kWarpLanes, load(a, lid + r * kWarpLanes));
    for (std::uint32_t r = 0; r < N * K / kWarpLanes; ++r)
      store(bs, lid + r * kWarpLanes, load(b, lid + r * kWarpLanes));
    k.barrier();
    WarpTile<T> tile(k, WarpLane::of(k, lid), MT, NT, matrix_instructions);
    const SharedOperand<T> ao{as, a_k_contiguous ? K : M, a_k_contiguous, Val<u32>(0u)};
    const SharedOperand<T> bo{bs, b_k_contiguous ? K : N, b_k_contiguous, Val<u32>(0u)};
    for (std::uint32_t k0 = 0; k0 < K; k0 += 16) tile.mma_step(ao, Val<u32>(0u), bo, Val<u32>(0u), Val<u32>(k0));
    tile.for_each_value(
        [&](const Val<u32>& row, const Val<u32>& col, const Val<f32>& v) { store(c, row * N + col, v); });
  }));
}

std::vector<double> host_values(std::size_t n, std::uint32_t seed) {
  std::vector<double> v(n);
  std::uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = ir::double_of_bits(DType::bf16,
                           ir::bits_of_double(DType::bf16, (static_cast<double>(s >> 8) / (1 << 24)) * 2 - 1));
  }
  return v;
}

void expect_product(runtime::Backend& be, std::uint32_t K, bool a_k_contiguous = true, bool b_k_contiguous = true,
                    bool matrix_instructions = true) {
  constexpr std::uint32_t MT = 2, NT = 4, M = 16 * MT, N = 8 * NT;
  const auto av = host_values(std::size_t{M} * K, 1), bv = host_values(std::size_t{N} * K, 2);
  auto a = runtime::make_buffer(be, DType::bf16, av);
  auto b = runtime::make_buffer(be, DType::bf16, bv);
  auto c = be.allocate(DType::f32, std::size_t{M} * N);
  be.launch(warp_gemm<bf16, MT, NT>(K, a_k_contiguous, b_k_contiguous, matrix_instructions),
            runtime::grid_1d(kWarpLanes, kWarpLanes), {a, b, c});
  const auto got = runtime::read_buffer(be, *c);
  for (std::uint32_t m = 0; m < M; ++m) {
    for (std::uint32_t n = 0; n < N; ++n) {
      double want = 0;
      for (std::uint32_t kk = 0; kk < K; ++kk) {
        want += av[a_k_contiguous ? m * K + kk : kk * M + m] * bv[b_k_contiguous ? n * K + kk : kk * N + n];
      }
      ASSERT_NEAR(got[m * N + n], want, 1e-5 * K)
          << "C[" << m << "][" << n << "] on " << be.name() << " (A " << (a_k_contiguous ? "[M, K]" : "[K, M]")
          << ", B " << (b_k_contiguous ? "[N, K]" : "[K, N]") << (matrix_instructions ? ")" : ", plain loops)");
    }
  }
}

}  // namespace

TEST(BlocksMmaFragment, WarpTileComputesAGemmOnTheInterpreter) {
  runtime::Interpreter be;
  expect_product(be, 16);
  expect_product(be, 48);
}

// The transposed operands (load_matrix_trans) give the same product as the k-contiguous ones.
TEST(BlocksMmaFragment, WarpTileReadsEveryOperandLayout) {
  runtime::Interpreter be;
  for (const bool ak : {true, false}) {
    for (const bool bk : {true, false}) expect_product(be, 32, ak, bk);
  }
}

// The plain-loop form (no warp operations) gives the same product from every operand layout.
TEST(BlocksMmaFragment, WarpTilePlainLoopsComputeTheSameProduct) {
  runtime::Interpreter be;
  for (const bool ak : {true, false}) {
    for (const bool bk : {true, false}) expect_product(be, 48, ak, bk, false);
  }
}

TEST(BlocksMmaFragment, WarpTileComputesAGemmOnOpenCL) {
  std::unique_ptr<runtime::OpenCLBackend> be;
  try {
    be = runtime::OpenCLBackend::create({});
  } catch (const runtime::BackendUnavailable& e) {
    GTEST_SKIP() << e.what();
  }
  expect_product(*be, 32, false, false);  // both operands transposed (one compile: PoCL builds are slow)
}

TEST(BlocksMmaFragment, WarpTileComputesAGemmOnCuda) {
  std::unique_ptr<runtime::CudaBackend> be;
  try {
    be = runtime::CudaBackend::create({});
  } catch (const runtime::BackendUnavailable& e) {
    GTEST_SKIP() << e.what();
  }
  for (const bool ak : {true, false}) {
    for (const bool bk : {true, false}) expect_product(*be, 64, ak, bk);
  }
}

namespace {

// A 16 x 32 tile at (row0, col0) of a rows x cols matrix that starts at element `offset` of src, copied by copy_tile
// into a shared array (row stride 40) and from there, whole, into out.
ir::Kernel tile_round_trip() {
  return passes::optimize(trace("tile_round_trip", [](KernelBuilder& k) {
    constexpr std::uint32_t kThreads = 64;
    k.launch_bounds(kThreads);
    auto offset = k.scalar<u32>("offset");
    auto rows = k.scalar<u32>("rows");
    auto cols = k.scalar<u32>("cols");
    auto row0 = k.scalar<u32>("row0");
    auto col0 = k.scalar<u32>("col0");
    auto src = k.in<bf16>("src", offset + rows * cols);
    auto out = k.out<bf16>("out", 16 * 32);
    auto tile = k.shared<bf16>("tile", 16 * 40);
    const TileShape shape{16, 32, 40, kThreads};
    check_tile_shape(shape, "tile_round_trip");
    const TileSource from{offset, rows, cols, row0, col0};
    auto tid = k.local_id(0);
    copy_tile(tile_vector_aligned(from), tile, k.constant<u32>(0), src, from, shape, tid);
    async_commit(k);
    async_wait(k, 0);
    k.barrier();
    for (std::uint32_t i = 0; i < 16 * 32 / kThreads; ++i) {
      auto at = tid + i * kThreads;
      store(out, at, load(tile, (at / 32u) * 40u + at % 32u));
    }
  }));
}

// Every element of the tile: the matrix's value inside it, zero outside (the values are never zero).
void expect_tile(runtime::Backend& be, std::uint32_t offset, std::uint32_t rows, std::uint32_t cols, std::uint32_t row0,
                 std::uint32_t col0) {
  std::vector<double> src(offset + std::size_t{rows} * cols);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<double>(1 + i % 200);  // exact in bf16
  auto s = runtime::make_buffer(be, DType::bf16, src);
  auto out = be.allocate(DType::bf16, 16 * 32);
  const auto u = [](std::uint32_t v) { return runtime::ScalarArg{DType::u32, v}; };
  be.launch(tile_round_trip(), runtime::grid_1d(64, 64), {u(offset), u(rows), u(cols), u(row0), u(col0), s, out});
  const auto got = runtime::read_buffer(be, *out);
  for (std::uint32_t r = 0; r < 16; ++r) {
    for (std::uint32_t c = 0; c < 32; ++c) {
      const bool inside = row0 + r < rows && col0 + c < cols;
      const double want = inside ? src[offset + std::size_t{row0 + r} * cols + col0 + c] : 0.0;
      ASSERT_EQ(got[r * 32 + c], want) << "tile (" << r << ", " << c << "), offset " << offset << ", " << rows << " x "
                                       << cols << " at (" << row0 << ", " << col0 << ")";
    }
  }
}

}  // namespace

// The asynchronous form (rows and start 8-aligned) and the scalar form (either not), each with the tile hanging over
// the matrix's bottom and right edges, and wholly inside.
TEST(BlocksTileCopy, CopiesTheTileAndZeroFillsOutsideTheMatrix) {
  runtime::Interpreter be;
  expect_tile(be, 16, 20, 40, 8, 16);  // vector form, over both edges
  expect_tile(be, 8, 40, 64, 8, 16);   // vector form, inside
  expect_tile(be, 3, 20, 40, 8, 16);   // offset not 8-aligned: scalar form
  expect_tile(be, 0, 20, 37, 8, 16);   // rows not 8-aligned: scalar form
  expect_tile(be, 5, 9, 13, 0, 0);     // a matrix smaller than the tile
}
