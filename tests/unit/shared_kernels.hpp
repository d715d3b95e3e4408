// tests/unit/shared_kernels.hpp — small kernels that every backend's test suite runs, written
// once: a work-group reversal through shared memory and a barrier, and a 2-D grid writer.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ingot/dsl.hpp"
#include "ingot/passes/legalise.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/backend.hpp"
#include "ingot/verify.hpp"

namespace ingot::testing {

// y[g*32 + l] = x[g*32 + 31 - l] for work-groups of 32 threads (n a multiple of 32).
inline ir::Kernel reverse_kernel() {
  return trace("reverse", [](KernelBuilder& b) {
    using namespace ingot::dsl;
    auto n = b.scalar<u32>("n");
    auto x = b.in<i32>("x", n);
    auto y = b.out<i32>("y", n);
    auto tile = b.shared<i32>("tile", 32);
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

}  // namespace ingot::testing
