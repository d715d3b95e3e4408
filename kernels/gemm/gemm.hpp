// kernels/gemm/gemm.hpp — C = alpha * op(A) * op(B) (+ beta * C) (+ bias), an activation, over a strided batch.
//
//   a: [batch, M, K] (or [batch, K, M] with a_trans), b: [batch, K, N] (or [batch, N, K] with b_nk, a weight matrix),
//   bias: [N] (optional), c: [batch, M, N] (of the inputs' type, or f32 with c_f32); row-major, each batch's matrices
//   contiguous. M, N, K, batch are run-time scalars: one compiled kernel per (dtype, form, tiling) serves every shape.
//   alpha (and beta with accumulate) are run-time f32 scalars. Products are summed in f32; the result is rounded once
//   to the element type.
//
// Two kernels, one form (GemmForm) and one epilogue:
//  - gemm_mma (f16, bf16): block tiles of GemmTile on warp matrix fragments (blocks/mma_fragment.hpp: mma_m16n8k16
//    fed by load_matrix, tensor cores on CUDA), the operands' tiles staged through a `stages`-deep ring of shared
//    buffers by asynchronous copies (blocks/tile_copy.hpp), so the copies of the next tiles overlap the products of
//    this one. A work-group takes one output tile; tiles are visited in bands of kGemmBandTiles tile rows so that the
//    work-groups running at once share their A and B tiles in L2. Option mma = 0 computes the same warp tiles by plain
//    loops over the shared tiles (WarpTile's compact form for backends without matrix instructions).
//  - gemm_simt (f32): exact f32 (no TF32), 64 x 64 tiles of fused multiply-adds, 4 x 4 outputs per thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "blocks/mma_fragment.hpp"
#include "blocks/tile_copy.hpp"
#include "ingot/dsl.hpp"

namespace ingot::kernels {

enum class GemmActivation : std::uint32_t { none = 0, relu = 1, silu = 2, gelu = 3 };
inline constexpr std::uint32_t kGemmActivations = 4;

// What the kernel computes (each choice a different kernel).
struct GemmForm {
  bool a_trans = false;     // a is [batch, K, M]
  bool b_nk = false;        // b is [batch, N, K]
  bool accumulate = false;  // adds beta * C (c is read and written)
  bool bias = false;        // adds bias[n]
  GemmActivation act = GemmActivation::none;
  bool c_f32 = false;  // c is f32 whatever the inputs' type (the f32 sums rounded to nothing coarser)
};

// A block tiling of the tensor-core kernel: a work-group of warps_m x warps_n warps computes a bm x bn tile of C,
// k-steps of bk; each warp a (bm / warps_m) x (bn / warps_n) sub-tile. min_groups: the work-groups per
// multiprocessor its registers are chosen for by default (launch_bounds), as many as its shared memory allows
// without register spills in ptxas's report for sm_90.
struct GemmTile {
  std::uint32_t bm, bn, bk, warps_m, warps_n, min_groups;
  [[nodiscard]] constexpr std::uint32_t threads() const { return 32 * warps_m * warps_n; }
  [[nodiscard]] constexpr std::uint32_t warp_m() const { return bm / warps_m; }
  [[nodiscard]] constexpr std::uint32_t warp_n() const { return bn / warps_n; }
};

// The tilings the `tile` option names, by index.
inline constexpr std::array<GemmTile, 5> kGemmTiles{{
    {128, 128, 32, 2, 4, 2},  // 0: 8 warps of 64 x 32
    {128, 256, 32, 2, 4, 1},  // 1: 8 warps of 64 x 64
    {64, 64, 32, 2, 2, 4},    // 2: 4 warps of 32 x 32 (small shapes; fits 32 KiB of shared memory in 3 stages)
    {256, 128, 32, 4, 2, 1},  // 3: 8 warps of 64 x 64
    {16, 64, 128, 1, 4, 2},   // 4: few rows (decode): 4 warps of 16 x 16, long k-steps keep 16 KB a stage in flight
}};
inline constexpr std::uint32_t kGemmBandTiles = 8;  // tile rows per band of the visiting order
inline constexpr std::uint32_t kGemmSmemPad = 8;    // elements added to each shared row: ldmatrix rows hit 8 banks

// Shared rows of an operand tile: the contiguous dimension plus the pad.
inline constexpr std::uint32_t gemm_smem_stride(std::uint32_t contiguous) { return contiguous + kGemmSmemPad; }

// Elements of one pipeline stage of A and of B.
inline constexpr std::uint32_t gemm_a_stage(const GemmTile& t, bool a_trans) {
  return a_trans ? t.bk * gemm_smem_stride(t.bm) : t.bm * gemm_smem_stride(t.bk);
}
inline constexpr std::uint32_t gemm_b_stage(const GemmTile& t, bool b_nk) {
  return b_nk ? t.bn * gemm_smem_stride(t.bk) : t.bk * gemm_smem_stride(t.bn);
}

inline constexpr GemmTile kGemmSimtTile{64, 64, 16, 2, 4, 1};  // 256 threads, 4 x 4 outputs each
inline constexpr std::uint32_t kRegs = 4;                      // the f32 kernel's outputs per thread, per axis

// The run-time scalars and buffers every GEMM kernel declares, in one order, with the preconditions that keep its
// 32-bit indexes exact.
template <class T, class CBuf>
struct GemmArgs {
  dsl::Val<u32> M, N, K, batch;
  dsl::Val<f32> alpha, beta;
  dsl::In<T> a, b;
  dsl::In<T> bias;  // declared only with GemmForm::bias
  CBuf c;
};

// The output tile this work-group computes: batch entry, first row and column, with tiles visited in bands of
// kGemmBandTiles tile rows (consecutive work-groups share B's tiles within a band and A's across it).
struct GemmTileIndex {
  dsl::Val<u32> batch, m0, n0;
};
inline GemmTileIndex gemm_tile_index(dsl::KernelBuilder& k, const dsl::Val<u32>& M, const dsl::Val<u32>& N,
                                     std::uint32_t bm, std::uint32_t bn) {
  using namespace ingot::dsl;
  auto tiles_m = k.let("tiles_m", (M + (bm - 1)) / bm);
  auto tiles_n = k.let("tiles_n", (N + (bn - 1)) / bn);
  auto tiles = k.let("tiles", tiles_m * tiles_n);
  auto gid = k.group_id(0);
  auto tile = k.let("tile", gid % tiles);
  auto band_size = k.let("band_size", tiles_n * kGemmBandTiles);
  auto band = k.let("band", tile / band_size);
  auto first = k.let("band_first", band * kGemmBandTiles);
  auto band_rows = k.let("band_rows", min(tiles_m - first, k.constant<u32>(kGemmBandTiles)));
  auto in_band = k.let("in_band", tile % band_size);
  return {k.let("bidx", gid / tiles), k.let("m0", (first + in_band % band_rows) * bm),
          k.let("n0", (in_band / band_rows) * bn)};
}

// The epilogue of one output value v = sum_k A[m][k] B[k][n] at (m, n) of batch entry bidx (m < M and n < N are the
// caller's test): alpha * v (+ beta * C) (+ bias[n]), the activation, rounded to c's type.
template <class T, class CBuf>
void gemm_store(const GemmForm& f, const GemmArgs<T, CBuf>& g, const dsl::Val<u32>& at, const dsl::Val<u32>& n,
                const dsl::Val<f32>& sum) {
  using namespace ingot::dsl;
  Val<f32> v = g.alpha * sum;
  if constexpr (CBuf::access != dsl::Access::Write) {
    if (f.accumulate) v = v + g.beta * cast<f32>(load(g.c, at));
  }
  if (f.bias) v = v + cast<f32>(load(g.bias, n));
  switch (f.act) {
    case GemmActivation::none: break;
    case GemmActivation::relu: v = max(v, 0.0f); break;
    case GemmActivation::silu: v = v / (1.0f + exp(-v)); break;
    case GemmActivation::gelu: v = 0.5f * v * (1.0f + erf(v * 0.70710678118654752f)); break;
  }
  using TC = typename CBuf::elem;
  store(g.c, at, cast<TC>(v));
}

// Declares the parameters (M, N, K, batch, alpha, beta, then a, b, bias, c) and the preconditions, then runs
// body(args). CBuf is Out<T>, or InOut<T> with accumulate (of f32 with c_f32).
template <class T, class Body>
void gemm_params(dsl::KernelBuilder& k, const GemmForm& f, const Body& body) {
  using namespace ingot::dsl;
  auto M = k.scalar<u32>("M");
  auto N = k.scalar<u32>("N");
  auto K = k.scalar<u32>("K");
  auto batch = k.scalar<u32>("batch");
  auto alpha = k.scalar<f32>("alpha");
  Val<f32> beta = f.accumulate ? k.scalar<f32>("beta") : Val<f32>(0.0f);
  k.require(M >= 1u && N >= 1u && K >= 1u && batch >= 1u);
  // Every buffer's elements fit the 32-bit indexes.
  const auto fits = [&](const Val<u32>& x, const Val<u32>& y) {
    return cast<i64>(batch) * cast<i64>(x) * cast<i64>(y) <= k.constant<i64>(0xffffffffLL);
  };
  k.require(fits(M, K) && fits(K, N) && fits(M, N));
  auto a = k.in<T>("a", batch * M * K);
  auto b = k.in<T>("b", batch * K * N);
  auto bias = f.bias ? k.in<T>("bias", N) : In<T>();
  const auto with_c = [&]<class TC>() {
    if (f.accumulate) {
      body(GemmArgs<T, InOut<TC>>{M, N, K, batch, alpha, beta, a, b, bias, k.inout<TC>("c", batch * M * N)});
    } else {
      body(GemmArgs<T, Out<TC>>{M, N, K, batch, alpha, beta, a, b, bias, k.out<TC>("c", batch * M * N)});
    }
  };
  if (f.c_f32) {
    with_c.template operator()<f32>();
  } else {
    with_c.template operator()<T>();
  }
}

// The tensor-core kernel (f16, bf16): see the top of this file. stages >= 2; min_groups: work-groups per
// multiprocessor the registers must allow (launch_bounds); matrix_instructions: the warp tiles' products by
// load_matrix and mma_m16n8k16, else by plain loops (blocks::WarpTile).
template <class T>
void gemm_mma(dsl::KernelBuilder& k, const GemmForm& f, const GemmTile& t, std::uint32_t stages,
              std::uint32_t min_groups, bool matrix_instructions) {
  using namespace ingot::dsl;
  const std::uint32_t threads = t.threads();
  k.launch_bounds(threads, min_groups);
  gemm_params<T>(k, f, [&](const auto& g) {
    const auto tid = k.local_id(0);
    const GemmTileIndex at = gemm_tile_index(k, g.M, g.N, t.bm, t.bn);
    const std::uint32_t a_stage = gemm_a_stage(t, f.a_trans), b_stage = gemm_b_stage(t, f.b_nk);
    auto as = k.shared<T>("as", stages * a_stage);
    auto bs = k.shared<T>("bs", stages * b_stage);
    // A's tile: rows m (k contiguous) or rows k (m contiguous); B's: rows n (k contiguous) or rows k (n contiguous).
    const blocks::TileShape a_shape = f.a_trans ? blocks::TileShape{t.bk, t.bm, gemm_smem_stride(t.bm), threads}
                                                : blocks::TileShape{t.bm, t.bk, gemm_smem_stride(t.bk), threads};
    const blocks::TileShape b_shape = f.b_nk ? blocks::TileShape{t.bn, t.bk, gemm_smem_stride(t.bk), threads}
                                             : blocks::TileShape{t.bk, t.bn, gemm_smem_stride(t.bn), threads};
    blocks::check_tile_shape(a_shape, "gemm A");
    blocks::check_tile_shape(b_shape, "gemm B");
    auto a_off = k.let("a_off", at.batch * (g.M * g.K));
    auto b_off = k.let("b_off", at.batch * (g.K * g.N));
    const auto a_from = [&](const Val<u32>& k0) {
      return f.a_trans ? blocks::TileSource{a_off, g.K, g.M, k0, at.m0}
                       : blocks::TileSource{a_off, g.M, g.K, at.m0, k0};
    };
    const auto b_from = [&](const Val<u32>& k0) {
      return f.b_nk ? blocks::TileSource{b_off, g.N, g.K, at.n0, k0} : blocks::TileSource{b_off, g.K, g.N, k0, at.n0};
    };
    auto a_vec = k.let("a_vec", blocks::tile_vector_aligned(a_from(k.constant<u32>(0))));
    auto b_vec = k.let("b_vec", blocks::tile_vector_aligned(b_from(k.constant<u32>(0))));
    const auto load_stage = [&](const Val<u32>& stage, const Val<u32>& k0) {
      blocks::copy_tile(a_vec, as, stage * a_stage, g.a, a_from(k0), a_shape, tid);
      blocks::copy_tile(b_vec, bs, stage * b_stage, g.b, b_from(k0), b_shape, tid);
    };
    auto ktiles = k.let("ktiles", (g.K + (t.bk - 1)) / t.bk);
    // The prologue fills stages 0 .. stages-2; each is one commit group, empty past the last tile.
    for (std::uint32_t s = 0; s + 1 < stages; ++s) {
      if_(k.constant<u32>(s) < ktiles, [&] { load_stage(k.constant<u32>(s), k.constant<u32>(s * t.bk)); });
      async_commit(k);
    }
    const blocks::WarpLane lane = blocks::WarpLane::of(k, tid);
    auto warp = k.let("warp", tid / 32u);
    auto wm0 = k.let("wm0", (warp % t.warps_m) * t.warp_m());
    auto wn0 = k.let("wn0", (warp / t.warps_m) * t.warp_n());
    blocks::WarpTile<T> tile(k, lane, t.warp_m() / 16, t.warp_n() / 8, matrix_instructions);
    for_(k.constant<u32>(0), ktiles, [&](const Val<u32>& kt) {
      // Tile kt's group is complete once at most stages-2 later groups are pending; the barrier shows every
      // thread's copies, and that every thread is done with the stage the next copy overwrites (read at kt - 1).
      async_wait(k, stages - 2);
      k.barrier();
      auto next = k.let("next", kt + (stages - 1));
      if_(next < ktiles, [&] { load_stage(next % stages, next * t.bk); });
      async_commit(k);
      auto stage = k.let("stage", kt % stages);
      const blocks::SharedOperand<T> ao{as, a_shape.stride, !f.a_trans, k.let("a_base", stage * a_stage)};
      const blocks::SharedOperand<T> bo{bs, b_shape.stride, f.b_nk, k.let("b_base", stage * b_stage)};
      for (std::uint32_t kk = 0; kk < t.bk; kk += 16) tile.mma_step(ao, wm0, bo, wn0, k.constant<u32>(kk));
    });
    async_wait(k, 0);
    auto c_off = k.let("c_off", at.batch * (g.M * g.N));
    tile.for_each_value([&](const Val<u32>& row, const Val<u32>& col, const Val<f32>& v) {
      auto m = at.m0 + wm0 + row;
      auto n = at.n0 + wn0 + col;
      if_(m < g.M && n < g.N, [&] { gemm_store(f, g, c_off + m * g.N + n, n, v); });
    });
  });
}

// The f32 kernel: exact f32 fused multiply-adds (no TF32). A work-group of 256 threads takes a 64 x 64 tile of C;
// thread (ty, tx) = (tid / 16, tid % 16) computes rows ty + 16i and columns tx + 16j (i, j < 4), so a warp's stores
// cover two rows of 16 consecutive columns. A and B tiles of 16 k-steps are staged in shared memory, k-major
// (as[k][m], bs[k][n]): each step reads 4 values of each, broadcast or consecutive.
template <class T>
void gemm_simt(dsl::KernelBuilder& k, const GemmForm& f) {
  using namespace ingot::dsl;
  const GemmTile t = kGemmSimtTile;
  const std::uint32_t threads = t.threads();
  k.launch_bounds(threads, 1);
  gemm_params<T>(k, f, [&](const auto& g) {
    const auto tid = k.local_id(0);
    const GemmTileIndex at = gemm_tile_index(k, g.M, g.N, t.bm, t.bn);
    auto as = k.shared<T>("as", t.bk * t.bm);
    auto bs = k.shared<T>("bs", t.bk * t.bn);
    auto a_off = k.let("a_off", at.batch * (g.M * g.K));
    auto b_off = k.let("b_off", at.batch * (g.K * g.N));
    auto ty = k.let("ty", tid / 16u);
    auto tx = k.let("tx", tid % 16u);
    std::vector<Var<f32>> acc;
    acc.reserve(kRegs * kRegs);
    for (std::uint32_t i = 0; i < kRegs * kRegs; ++i) acc.emplace_back(k, Val<f32>(0.0f));
    // Staging: 1024 elements of each tile, 4 per thread. A element (m, kk) of the tile; B element (kk, n).
    const auto stage_a = [&](const Val<u32>& k0, std::uint32_t e) {
      const auto idx = tid + e * threads;
      // Consecutive threads take consecutive elements of the operand's contiguous dimension.
      auto mm = f.a_trans ? idx % t.bm : idx / t.bk;
      auto kk = f.a_trans ? idx / t.bm : idx % t.bk;
      auto m = at.m0 + mm;
      auto kg = k0 + kk;
      auto ok = m < g.M && kg < g.K;
      auto src = f.a_trans ? a_off + kg * g.M + m : a_off + m * g.K + kg;
      auto v = load(g.a, select(ok, src, 0u));
      store(as, kk * t.bm + mm, cast<T>(select(ok, cast<f32>(v), 0.0f)));
    };
    const auto stage_b = [&](const Val<u32>& k0, std::uint32_t e) {
      const auto idx = tid + e * threads;
      auto nn = f.b_nk ? idx / t.bk : idx % t.bn;
      auto kk = f.b_nk ? idx % t.bk : idx / t.bn;
      auto n = at.n0 + nn;
      auto kg = k0 + kk;
      auto ok = n < g.N && kg < g.K;
      auto src = f.b_nk ? b_off + n * g.K + kg : b_off + kg * g.N + n;
      auto v = load(g.b, select(ok, src, 0u));
      store(bs, kk * t.bn + nn, cast<T>(select(ok, cast<f32>(v), 0.0f)));
    };
    for_(k.constant<u32>(0), g.K, t.bk, [&](const Val<u32>& k0) {
      k.barrier();  // every thread is done with the previous tiles
      for (std::uint32_t e = 0; e < t.bm * t.bk / threads; ++e) stage_a(k0, e);
      for (std::uint32_t e = 0; e < t.bn * t.bk / threads; ++e) stage_b(k0, e);
      k.barrier();
      for (std::uint32_t kk = 0; kk < t.bk; ++kk) {
        std::array<Val<f32>, kRegs> av, bv;
        for (std::uint32_t i = 0; i < kRegs; ++i) av[i] = k.let("av", cast<f32>(load(as, kk * t.bm + ty + 16u * i)));
        for (std::uint32_t j = 0; j < kRegs; ++j) bv[j] = k.let("bv", cast<f32>(load(bs, kk * t.bn + tx + 16u * j)));
        for (std::uint32_t i = 0; i < kRegs; ++i) {
          for (std::uint32_t j = 0; j < kRegs; ++j) acc[i * kRegs + j] = fma(av[i], bv[j], acc[i * kRegs + j].get());
        }
      }
    });
    auto c_off = k.let("c_off", at.batch * (g.M * g.N));
    for (std::uint32_t i = 0; i < kRegs; ++i) {
      for (std::uint32_t j = 0; j < kRegs; ++j) {
        auto m = at.m0 + ty + 16u * i;
        auto n = at.n0 + tx + 16u * j;
        if_(m < g.M && n < g.N, [&] { gemm_store(f, g, c_off + m * g.N + n, n, acc[i * kRegs + j].get()); });
      }
    }
  });
}

}  // namespace ingot::kernels
