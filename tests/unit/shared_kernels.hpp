// tests/unit/shared_kernels.hpp — small kernels that every backend's test suite runs, written
// once: a work-group reversal through shared memory and a barrier, and a 2-D grid writer.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "ingot/dsl.hpp"
#include "ingot/passes/legalise.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/backend.hpp"
#include "ingot/verify.hpp"

namespace ingot::testing {

// y[g*32 + l] = x[g*32 + 31 - l] for work-groups of 32 threads (n a multiple of 32), through a shared array of T (the
// CUDA printer moves each element through its width's helper: 1, 2, 4 or 8 bytes).
template <class T = i32>
ir::Kernel reverse_kernel() {
  return trace("reverse", [](KernelBuilder& b) {
    using namespace ingot::dsl;
    auto n = b.scalar<u32>("n");
    auto x = b.in<T>("x", n);
    auto y = b.out<T>("y", n);
    auto tile = b.shared<T>("tile", 32);
    auto l = b.local_id(0);
    auto g = b.group_id(0) * b.group_size(0);
    store(tile, l, load(x, g + l));
    b.barrier();
    store(y, g + l, load(tile, 31u - l));
  });
}

// y[r*w + c] = r*100 + c (+ num_groups(1) * 10000 when with_groups) over a tail-guarded 2-D grid.
inline ir::Kernel grid2d_kernel(bool with_groups = false) {
  return trace("grid2d", [with_groups](KernelBuilder& b) {
    using namespace ingot::dsl;
    auto w = b.scalar<u32>("w");
    auto h = b.scalar<u32>("h");
    auto y = b.out<u32>("y", w * h);
    auto x0 = b.program_id(0);
    auto y0 = b.program_id(1);
    Val<u32> extra = with_groups ? b.num_groups(1) * 10000u : Val<u32>(0u);
    if_(x0 < w && y0 < h, [&] { store(y, y0 * w + x0, y0 * 100u + x0 + extra); });
  });
}

// Vector access: thread i < n / W loads x[i*W .. i*W + W) with one load_vec and stores the W
// elements in reverse order with one store_vec (16-bit floats through f32 and back), so lane
// order is checked in both directions. offset != 0 makes every access misaligned; extra_threads
// adds threads past n / W whose access runs off the end. Declares launch_bounds(64, 2).
template <class T>
ir::Kernel vector_reverse_kernel(std::uint32_t width, std::uint32_t offset = 0, std::uint32_t extra_threads = 0) {
  return trace("vector_reverse", [=](KernelBuilder& b) {
    using namespace ingot::dsl;
    auto n = b.scalar<u32>("n");
    auto x = b.in<T>("x", n);
    auto y = b.out<T>("y", n);
    b.launch_bounds(64, 2);
    auto i = b.program_id(0);
    if_(i < n / width + extra_threads, [&] {
      auto v = load_vec(x, i * width + offset, width);
      if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
        std::vector<Val<f32>> r;
        for (std::uint32_t j = 0; j < width; ++j) r.push_back(cast<f32>(v[width - 1 - j]));
        store_vec(y, i * width, r);
      } else {
        std::vector<Val<T>> r(v.rbegin(), v.rend());
        store_vec(y, i * width, r);
      }
    });
  });
}

// Runs vector_reverse_kernel<T>(width) on be over x (x.size() a multiple of width) in
// work-groups of `group` threads and expects every vector reversed in place.
template <class T>
void expect_vector_reverse(runtime::Backend& be, DType t, std::uint32_t width, const std::vector<double>& x,
                           std::uint32_t group) {
  const auto k = passes::optimize(vector_reverse_kernel<T>(width));
  const auto n = static_cast<std::uint32_t>(x.size());
  auto xb = runtime::make_buffer(be, t, x);
  auto yb = be.allocate(t, n);
  be.launch(k, runtime::grid_1d(n / width, group), {runtime::scalar_arg<u32>(n), xb, yb});
  const auto y = runtime::read_buffer(be, *yb);
  for (std::uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(y[i], x[(i / width) * width + width - 1 - i % width])
        << be.name() << " " << dtype_name(t) << " x" << width << " at " << i;
  }
}

// Vector access to a shared array: in work-groups of 64 threads, thread l of group g loads its
// chunk x[(64g + l)*W ..) with one load_vec, stores it as chunk 63 - l of a shared array (one
// store_vec at `offset` + (63 - l)*W elements), and after a barrier takes chunk l of the array
// with one load_vec and stores it reversed: y[(64g + l)*W + j] = x[(64g + 63 - l)*W + W-1-j].
// offset (a multiple of W for a valid kernel) shifts every shared access.
template <class T>
ir::Kernel shared_vector_kernel(std::uint32_t width, std::uint32_t offset = 0) {
  return trace("shared_vector", [=](KernelBuilder& b) {
    using namespace ingot::dsl;
    auto n = b.scalar<u32>("n");
    auto x = b.in<T>("x", n);
    auto y = b.out<T>("y", n);
    auto tile = b.shared<T>("tile", 64 * width + offset);
    b.launch_bounds(64);
    auto l = b.let("l", b.local_id(0));
    auto g = b.let("g", b.group_id(0) * 64u);
    store_vec(tile, (63u - l) * width + offset, load_vec(x, (g + l) * width, width));
    b.barrier();
    auto v = load_vec(tile, l * width + offset, width);
    std::vector<Val<T>> r(v.rbegin(), v.rend());
    store_vec(y, (g + l) * width, r);
  });
}

// Runs shared_vector_kernel<T>(width) on be over x (a multiple of 64*width elements) and checks it.
template <class T>
void expect_shared_vector(runtime::Backend& be, DType t, std::uint32_t width, const std::vector<double>& x) {
  const auto k = passes::optimize(shared_vector_kernel<T>(width));
  const auto n = static_cast<std::uint32_t>(x.size());
  auto xb = runtime::make_buffer(be, t, x);
  auto yb = be.allocate(t, n);
  be.launch(k, runtime::grid_1d(n / width, 64), {runtime::scalar_arg<u32>(n), xb, yb});
  const auto y = runtime::read_buffer(be, *yb);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t chunk = i / width, group = chunk / 64, lane = chunk % 64;
    EXPECT_EQ(y[i], x[(group * 64 + 63 - lane) * width + width - 1 - i % width])
        << be.name() << " " << dtype_name(t) << " x" << width << " at " << i;
  }
}

// Runs reverse_kernel<T>() on be over x (a multiple of 32 elements) and checks it.
template <class T>
void expect_reverse(runtime::Backend& be, DType t, const std::vector<double>& x) {
  const auto k = passes::optimize(reverse_kernel<T>());
  const auto n = static_cast<std::uint32_t>(x.size());
  auto xb = runtime::make_buffer(be, t, x);
  auto yb = be.allocate(t, n);
  be.launch(k, runtime::grid_1d(n, 32), {runtime::scalar_arg<u32>(n), xb, yb});
  const auto y = runtime::read_buffer(be, *yb);
  for (std::uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(y[i], x[(i / 32) * 32 + 31 - i % 32]) << be.name() << " " << dtype_name(t) << " at " << i;
  }
}

// Asynchronous copies through two shared buffers: work-group g (64 threads) takes rounds
// r < kAsyncRounds of 64*W elements at x[(g*kAsyncRounds + r)*64*W ..); thread l copies its chunk
// l of round r + 1 (zeros where the chunk starts at or past n: the source index clamped to 0)
// while the group reads round r, and y[round*64*W + l*W + j] = chunk 63 - l, element W-1-j of the
// round (through f32 for 16-bit types). y holds whole rounds (a multiple of 64*W elements).
// Faults: ReadBeforeWait reads round 0 before any wait; NoFinalWait starts one more copy after the
// last round (into the buffer no round reads afterwards) and never waits for it.
inline constexpr std::uint32_t kAsyncRounds = 3;
enum class AsyncFault { None, ReadBeforeWait, NoFinalWait };
template <class T>
ir::Kernel async_copy_kernel(std::uint32_t width, AsyncFault fault = AsyncFault::None) {
  return trace("async_copy", [=](KernelBuilder& b) {
    using namespace ingot::dsl;
    auto n = b.scalar<u32>("n");
    auto m = b.scalar<u32>("m");  // y's size
    auto x = b.in<T>("x", n);
    auto y = b.out<T>("y", m);
    b.launch_bounds(64);
    auto sh = b.shared<T>("stage", 2 * 64 * width);
    auto lid = b.let("lid", b.local_id(0));
    auto g = b.let("g", b.group_id(0));
    const auto copy = [&](std::uint32_t r) {
      auto at = b.let("at", (g * kAsyncRounds + r) * (64 * width) + lid * width);
      auto ok = b.let("ok", at < n);
      copy_async(sh, (r % 2) * (64 * width) + lid * width, x, select(ok, at, 0u), width, ok);
      async_commit(b);
    };
    copy(0);
    for (std::uint32_t r = 0; r < kAsyncRounds; ++r) {
      const bool last = r + 1 == kAsyncRounds;
      if (!last) copy(r + 1);
      if (!(fault == AsyncFault::ReadBeforeWait && r == 0)) async_wait(b, last ? 0 : 1);
      b.barrier();
      auto out = b.let("out", (g * kAsyncRounds + r) * (64 * width) + lid * width);
      for (std::uint32_t j = 0; j < width; ++j) {
        auto v = load(sh, (r % 2) * (64 * width) + (63u - lid) * width + (width - 1 - j));
        if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
          store(y, out + j, cast<f32>(v));
        } else {
          store(y, out + j, v);
        }
      }
      b.barrier();
    }
    if (fault == AsyncFault::NoFinalWait) copy(kAsyncRounds);
  });
}

// Runs async_copy_kernel<T>(width) on be over x in `groups` work-groups and checks y.
template <class T>
void expect_async_copy(runtime::Backend& be, DType t, std::uint32_t width, const std::vector<double>& x,
                       std::uint32_t groups) {
  const auto k = passes::optimize(async_copy_kernel<T>(width));
  const auto n = static_cast<std::uint32_t>(x.size());
  const std::uint32_t round = 64 * width, m = groups * kAsyncRounds * round;
  ASSERT_LE(n, m);
  ASSERT_EQ(n % width, 0u);
  auto xb = runtime::make_buffer(be, t, x);
  auto yb = be.allocate(t, m);
  be.launch(k, runtime::grid_1d(groups * 64, 64), {runtime::scalar_arg<u32>(n), runtime::scalar_arg<u32>(m), xb, yb});
  const auto y = runtime::read_buffer(be, *yb);
  for (std::uint32_t i = 0; i < m; ++i) {
    const std::uint32_t r = i / round, l = (i % round) / width, j = i % width;
    const std::uint32_t from = r * round + (63 - l) * width + (width - 1 - j);
    EXPECT_EQ(y[i], from < n ? x[from] : 0.0) << be.name() << " " << dtype_name(t) << " x" << width << " at " << i;
  }
}

// Sub-group shuffles over `lanes` lanes in 1-D work-groups: y[i] = x of lane (lane+1) % lanes of
// thread i's sub-group (f32, a rotation), z[i] = s of lane lanes-1-lane (i32, a reversal; a
// second exchange right after the first). Threads i >= n read element 0 and store nothing.
// Declares launch_bounds(64).
inline ir::Kernel shuffle_kernel(std::uint32_t lanes) {
  return trace("shuffle_exchange", [=](KernelBuilder& b) {
    using namespace ingot::dsl;
    auto n = b.scalar<u32>("n");
    auto x = b.in<f32>("x", n);
    auto s = b.in<i32>("s", n);
    auto y = b.out<f32>("y", n);
    auto z = b.out<i32>("z", n);
    b.launch_bounds(64);
    auto i = b.let("i", b.program_id(0));
    auto live = b.let("live", i < n);
    auto j = b.let("j", select(live, i, 0u));
    auto lane = b.let("lane", b.local_id(0) % lanes);
    auto rotated = shuffle(load(x, j), (lane + 1u) % lanes, lanes);
    auto reversed = shuffle(load(s, j), (lanes - 1u) - lane, lanes);
    if_(live, [&] {
      store(y, i, rotated);
      store(z, i, reversed);
    });
  });
}

// Runs shuffle_kernel(lanes) on be over `threads` threads (n = elements, the rest tail threads)
// in work-groups of `group` and checks both exchanges against the definition. With lowered, the
// kernel first gets legalise's shared-memory exchange (what dialects without shuffles print).
inline void expect_shuffle(runtime::Backend& be, std::uint32_t lanes, std::uint32_t n, std::uint32_t threads,
                           std::uint32_t group, bool lowered = false) {
  auto k = passes::optimize(shuffle_kernel(lanes));
  if (lowered) {
    k = passes::legalise(k, passes::LegaliseOptions{"test", {}, false});
    ir::verify_or_throw(k, "lowered shuffles");
  }
  std::vector<double> x(n), s(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    x[i] = 0.5 * i - 3.25;
    s[i] = 1000.0 - 7.0 * i;
  }
  auto xb = runtime::make_buffer(be, DType::f32, x);
  auto sb = runtime::make_buffer(be, DType::i32, s);
  auto yb = be.allocate(DType::f32, n);
  auto zb = be.allocate(DType::i32, n);
  be.launch(k, runtime::grid_1d(threads, group), {runtime::scalar_arg<u32>(n), xb, sb, yb, zb});
  const auto y = runtime::read_buffer(be, *yb);
  const auto z = runtime::read_buffer(be, *zb);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t base = i - (i % group) % lanes, lane = (i % group) % lanes;
    const std::uint32_t from_y = base + (lane + 1) % lanes, from_z = base + lanes - 1 - lane;
    EXPECT_EQ(y[i], from_y < n ? x[from_y] : x[0]) << be.name() << " lanes " << lanes << " y[" << i << "]";
    EXPECT_EQ(z[i], from_z < n ? s[from_z] : s[0]) << be.name() << " lanes " << lanes << " z[" << i << "]";
  }
}

// Warp matrix multiply-accumulate: warp w < nw (global thread index / 32) computes
// D_w = C_w + A_w * B_w with A_w 16x16, B_w 16x8 (row-major: B[k][n] at k*8 + n), C_w, D_w 16x8
// stored one after another; each lane loads its fragments (ir.hpp's layout) and stores its D
// values; tail warps take warp 0's operands and store nothing. In (f32 or the 16-bit E) is the
// type of the A and B buffers: with E, the operands are converted elements (what the CUDA
// printer packs without rounding).
template <class E, class In>
ir::Kernel mma_kernel() {
  return trace("mma_tiles", [](KernelBuilder& b) {
    using namespace ingot::dsl;
    auto nw = b.scalar<u32>("nw");
    auto a = b.in<In>("a", nw * 256u);
    auto bm = b.in<In>("b", nw * 128u);
    auto c = b.in<f32>("c", nw * 128u);
    auto d = b.out<f32>("d", nw * 128u);
    b.launch_bounds(64);
    auto w = b.let("w", b.program_id(0) / 32u);
    auto live = b.let("live", w < nw);
    auto wc = b.let("wc", select(live, w, 0u));
    auto lane = b.let("lane", b.local_id(0) % 32u);
    auto g = b.let("g", lane / 4u), t = b.let("t", lane % 4u);
    std::array<Val<f32>, 8> av;
    std::array<Val<f32>, 4> bv, cv;
    for (std::uint32_t i = 0; i < 8; ++i) {
      av[i] = cast<f32>(load(a, wc * 256u + (g + 8 * ((i / 2) % 2)) * 16u + t * 2u + (i % 2 + 8 * (i / 4))));
    }
    for (std::uint32_t i = 0; i < 4; ++i) {
      bv[i] = cast<f32>(load(bm, wc * 128u + (t * 2u + (i % 2 + 8 * (i / 2))) * 8u + g));
      cv[i] = load(c, wc * 128u + (g + 8 * (i / 2)) * 8u + t * 2u + i % 2);
    }
    const auto dv = mma_m16n8k16<E>(b, av, bv, cv);
    if_(live, [&] {
      for (std::uint32_t i = 0; i < 4; ++i) store(d, w * 128u + (g + 8 * (i / 2)) * 8u + t * 2u + i % 2, dv[i]);
    });
  });
}

// Runs mma_kernel<E, In> on be for nw warps over `threads` threads in work-groups of `group`
// and checks D against C + A*B computed in f64 from A and B rounded to E (relative to the sum of
// the magnitudes: f32 accumulation). lowered: 0 as traced; 1 legalise's shared-memory exchange first (f32 slots);
// 2 its compact form (the 16-bit operands in the slots: a shared budget of one byte). Returns D.
template <class E, class In>
std::vector<double> expect_mma(runtime::Backend& be, std::uint32_t nw, std::uint32_t threads, std::uint32_t group,
                               int lowered = 0) {
  auto k = passes::optimize(mma_kernel<E, In>());
  if (lowered) {
    passes::LegaliseOptions o{"test", {}, true, false};
    o.shared_budget = lowered == 2 ? 1 : 0;
    k = passes::legalise(k, o);
    ir::verify_or_throw(k, "lowered mma");
    EXPECT_EQ(k.shared.back().type, lowered == 2 ? dtype_of<E> : DType::f32);
  }
  const DType et = dtype_of<E>, it = dtype_of<In>;
  const auto round_e = [&](double v) {
    const float f = static_cast<float>(v);
    return et == DType::bf16 ? static_cast<double>(bf16_bits_to_f32(f32_to_bf16_bits(f)))
                             : static_cast<double>(f16_bits_to_f32(f32_to_f16_bits(f)));
  };
  std::vector<double> a(nw * 256u), bm(nw * 128u), c(nw * 128u);
  // Values that E cannot hold exactly (unless In is E): the operands must be rounded first.
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37 * static_cast<double>(i) + 0.1) * 1.7;
  for (std::size_t i = 0; i < bm.size(); ++i) bm[i] = std::cos(0.53 * static_cast<double>(i)) * 1.3 - 0.2;
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = 0.25 * static_cast<double>(i % 17) - 2.0;
  if (it != DType::f32) {
    for (auto& v : a) v = round_e(v);
    for (auto& v : bm) v = round_e(v);
  }
  auto ab = runtime::make_buffer(be, it, a);
  auto bb = runtime::make_buffer(be, it, bm);
  auto cb = runtime::make_buffer(be, DType::f32, c);
  auto db = be.allocate(DType::f32, nw * 128u);
  be.launch(k, runtime::grid_1d(threads, group), {runtime::scalar_arg<u32>(nw), ab, bb, cb, db});
  const auto d = runtime::read_buffer(be, *db);
  for (std::uint32_t w = 0; w < nw; ++w) {
    for (std::uint32_t m = 0; m < 16; ++m) {
      for (std::uint32_t n = 0; n < 8; ++n) {
        double want = c[w * 128u + m * 8 + n], mag = std::abs(want);
        for (std::uint32_t kk = 0; kk < 16; ++kk) {
          const double p = round_e(a[w * 256u + m * 16 + kk]) * round_e(bm[w * 128u + kk * 8 + n]);
          want += p;
          mag += std::abs(p);
        }
        EXPECT_NEAR(d[w * 128u + m * 8 + n], want, 1e-6 * mag + 1e-30)
            << be.name() << " " << dtype_name(et) << " from " << dtype_name(it) << " lowered " << lowered << " warp "
            << w << " D[" << m << "][" << n << "]";
      }
    }
  }
  return d;
}

// Matrix load: each work-group of 64 threads copies its 32 rows x 8 elements of x (16-bit T) into
// a shared array at rows of 8 (row r at element 8 + 8r: not at 0), then lane l of warp w names row
// (5l + 3w) % 32 of that array; out[(w*32 + l)*8 + i] = value i of its load_matrix (as f32).
template <class T>
ir::Kernel load_matrix_kernel(bool transpose = false) {
  return trace("load_matrix_rows", [=](KernelBuilder& b) {
    using namespace ingot::dsl;
    auto groups = b.scalar<u32>("groups");
    auto x = b.in<T>("x", groups * 256u);
    auto out = b.out<f32>("out", groups * 512u);
    b.launch_bounds(64);
    auto xs = b.shared<T>("rows", 8 + 256);
    auto lid = b.let("lid", b.local_id(0));
    auto g = b.let("g", b.group_id(0));
    for (std::uint32_t r = 0; r < 4; ++r) {  // 256 elements, 4 per thread
      auto e = b.let("e" + std::to_string(r), lid + r * 64u);
      store(xs, 8u + e, load(x, g * 256u + e));
    }
    b.barrier();
    auto w = b.let("w", lid / 32u);
    auto lane = b.let("lane", lid % 32u);
    auto row = b.let("row", (lane * 5u + w * 3u) % 32u);
    const auto v = load_matrix(xs, 8u + row * 8u, transpose);
    for (std::uint32_t i = 0; i < 8; ++i) store(out, (g * 64u + lid) * 8u + i, cast<f32>(v[i]));
  });
}

// Checks load_matrix_kernel<T> on be against ir.hpp's definition. lowered: 0 as traced; 1 legalised into
// shuffles and pair loads (a dialect with shuffles but no ldmatrix); 2 into one shared-memory exchange and
// pair loads (a dialect with neither). transpose: load_matrix_trans (ir.hpp), element loads where lowered.
template <class T>
void expect_load_matrix(runtime::Backend& be, std::uint32_t groups, int lowered = 0, bool transpose = false) {
  auto k = passes::optimize(load_matrix_kernel<T>(transpose));
  if (lowered) {
    k = passes::legalise(k, passes::LegaliseOptions{"test", {}, lowered == 1, true, true, false});
    ir::verify_or_throw(k, "lowered load_matrix");
    EXPECT_FALSE(ir::has_load_matrix(k));
    EXPECT_EQ(ir::max_shuffle_lanes(k) > 0, lowered == 1);
  }
  std::vector<double> x(groups * 256u);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 251) * 0.5 - 60.0;  // exact in 16 bits
  auto xb = runtime::make_buffer(be, dtype_of<T>, x);
  auto ob = be.allocate(DType::f32, groups * 512u);
  be.launch(k, runtime::grid_1d(groups * 64u, 64), {runtime::scalar_arg<u32>(groups), xb, ob});
  const auto out = runtime::read_buffer(be, *ob);
  for (std::uint32_t g = 0; g < groups; ++g) {
    for (std::uint32_t w = 0; w < 2; ++w) {
      for (std::uint32_t l = 0; l < 32; ++l) {
        for (std::uint32_t i = 0; i < 8; ++i) {
          // plain: elements 2t, 2t+1 of the row of lane 8m + g; transposed: element g of the rows of lanes
          // 8m + 2t and 8m + 2t + 1 (m = i / 2, g = l / 4, t = l % 4)
          const std::uint32_t src_lane = transpose ? 8 * (i / 2) + 2 * (l % 4) + i % 2 : 8 * (i / 2) + l / 4;
          const std::uint32_t row = (5 * src_lane + 3 * w) % 32, col = transpose ? l / 4 : 2 * (l % 4) + i % 2;
          const double want = x[g * 256u + row * 8 + col];
          EXPECT_EQ(out[(g * 64u + w * 32 + l) * 8 + i], want)
              << be.name() << " lowered " << lowered << " transposed " << transpose << " group " << g << " warp " << w
              << " lane " << l << " value " << i;
        }
      }
    }
  }
}

}  // namespace ingot::testing
