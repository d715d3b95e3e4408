// The checked interpreter: results, bounds and poison reports, barriers and shared memory,
// atomics, loops, and argument checking before launch.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <numeric>
#include <utility>

#include "conversions.hpp"
#include "ingot/dsl.hpp"
#include "ingot/ir_print.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/interp.hpp"
#include "ingot/verify.hpp"
#include "shared_kernels.hpp"

using namespace ingot;
using namespace ingot::dsl;
using namespace ingot::runtime;

namespace {

ir::Kernel copy_kernel(bool guarded) {
  return trace(guarded ? "copy_guarded" : "copy_unguarded", [guarded](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<f32>("x", n);
    auto y = b.out<f32>("y", n);
    auto i = b.program_id(0);
    if (guarded) {
      auto j = select(i < n, i, 0u);
      auto v = load(x, j);
      if_(i < n, [&] { store(y, i, v); });
    } else {
      store(y, i, load(x, i));
    }
  });
}

std::vector<double> iota_values(std::size_t n, double start = 1) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

}  // namespace

TEST(Interp, GuardedCopyWithTail) {
  Interpreter be;
  const auto k = passes::optimize(copy_kernel(true));
  auto x = make_buffer(be, DType::f32, iota_values(100));
  auto y = be.allocate(DType::f32, 100);
  be.launch(k, grid_1d(100, 64), {scalar_arg<u32>(100), x, y});
  EXPECT_EQ(read_buffer(be, *y), iota_values(100));
}

// The optimiser's select-before-widening (simplify) gives the bits the unoptimised IR gives, for
// every f16 and bf16 pattern (NaN: any NaN) and both arm orders.
TEST(Interp, SelectBeforeWideningKeepsEveryValue) {
  for (const DType t : {DType::f16, DType::bf16}) {
    const auto k = trace("narrow_select", [t](KernelBuilder& b) {
      auto n = b.scalar<u32>("n");
      const auto body = [&](auto x) {
        auto y = b.out<f32>("y", n * 2u);
        auto i = b.program_id(0);
        auto odd = (i & 1u) == 1u;
        auto v = cast<f32>(load(x, select(i < n, i, 0u)));
        if_(i < n, [&] {
          store(y, i * 2u, select(odd, v, 0.0f));
          store(y, i * 2u + 1u, select(odd, 0.0f, v));
        });
      };
      if (t == DType::f16) {
        body(b.in<f16>("x", n));
      } else {
        body(b.in<bf16>("x", n));
      }
    });
    const auto opt = passes::optimize(k);
    ASSERT_NE(ir::print_kernel(opt).find("cast<f32>(select("), std::string::npos) << ir::print_kernel(opt);
    Interpreter be;
    std::vector<std::uint16_t> raw(65536);
    auto x = be.allocate(t, raw.size());
    std::iota(raw.begin(), raw.end(), std::uint16_t{0});
    be.upload(*x, raw.data(), raw.size() * 2);
    auto y = be.allocate(DType::f32, 2 * raw.size());
    be.launch(opt, grid_1d(raw.size(), 256), {scalar_arg<u32>(65536), x, y});
    std::vector<float> got(2 * raw.size());
    be.download(*y, got.data(), got.size() * 4);
    for (std::uint32_t h = 0; h < 65536; ++h) {
      const auto b16 = static_cast<std::uint16_t>(h);
      const float want = t == DType::f16 ? f16_bits_to_f32(b16) : bf16_bits_to_f32(b16);
      const float a = got[2 * std::size_t{h}], c = got[2 * std::size_t{h} + 1];
      const float sel = (h & 1u) ? want : 0.0f, other = (h & 1u) ? 0.0f : want;
      for (const auto& [g, w] : {std::pair{a, sel}, std::pair{c, other}}) {
        if (std::isnan(w)) {
          ASSERT_TRUE(std::isnan(g)) << dtype_name(t) << " pattern " << h;
        } else {
          ASSERT_EQ(std::bit_cast<std::uint32_t>(g), std::bit_cast<std::uint32_t>(w))
              << dtype_name(t) << " pattern " << h;
        }
      }
    }
  }
}

TEST(Interp, OutOfRangeLoadIsReportedPrecisely) {
  Interpreter be;
  const auto k = copy_kernel(false);
  auto x = make_buffer(be, DType::f32, iota_values(100));
  auto y = be.allocate(DType::f32, 100);
  try {
    be.launch(k, grid_1d(100, 64), {scalar_arg<u32>(100), x, y});
    FAIL() << "expected an out-of-range report";
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.kernel, "copy_unguarded");
    EXPECT_EQ(e.problem, "out-of-range load");
    EXPECT_EQ(e.buffer, "x");
    EXPECT_EQ(e.index, 100);
    EXPECT_EQ(e.extent, 100u);
    EXPECT_EQ(e.group, (std::array<u32, 3>{1, 0, 0}));
    EXPECT_EQ(e.local, (std::array<u32, 3>{36, 0, 0}));
    const std::string msg = e.what();
    EXPECT_NE(msg.find("kernel 'copy_unguarded': out-of-range load on buffer 'x': index 100 is outside [0, 100)"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("thread group (1,0,0) local (36,0,0) = global (100,0,0)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("at IR #0: let %x0: f32 = load x[program_id(0)]"), std::string::npos) << msg;
  }
}

TEST(Interp, VectorAccessMovesWholeVectorsInLaneOrder) {
  Interpreter be;
  std::vector<double> small(64), ints(64);
  for (std::size_t i = 0; i < 64; ++i) {
    small[i] = static_cast<double>(i) * 0.5 - 9.0;
    ints[i] = static_cast<double>(i) - 20.0;
  }
  ingot::testing::expect_vector_reverse<f32>(be, DType::f32, 4, small, 4);
  ingot::testing::expect_vector_reverse<f32>(be, DType::f32, 2, small, 4);
  ingot::testing::expect_vector_reverse<bf16>(be, DType::bf16, 8, small, 4);
  ingot::testing::expect_vector_reverse<f16>(be, DType::f16, 2, small, 4);
  ingot::testing::expect_vector_reverse<i32>(be, DType::i32, 4, ints, 4);
  ingot::testing::expect_vector_reverse<i8>(be, DType::i8, 16, ints, 4);
  ingot::testing::expect_vector_reverse<u8>(be, DType::u8, 8, iota_values(64, 0), 4);
}

// Shared arrays take vector accesses like buffers (16-byte aligned on every target).
std::vector<double> shared_vector_input(std::size_t n) {
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i % 61) * 0.25 - 7.0;
  return x;
}

TEST(Interp, SharedArraysTakeVectorAccess) {
  Interpreter be;
  ingot::testing::expect_shared_vector<bf16>(be, DType::bf16, 8, shared_vector_input(std::size_t{2} * 64 * 8));
  ingot::testing::expect_shared_vector<f32>(be, DType::f32, 4, shared_vector_input(std::size_t{64} * 4));
  ingot::testing::expect_shared_vector<f16>(be, DType::f16, 2, shared_vector_input(std::size_t{64} * 2));
}

// The shared round trip of every element width (what CudaExec.SharedArraysOfEveryWidth runs on a GPU).
TEST(Interp, SharedArraysOfEveryWidth) {
  Interpreter be;
  std::vector<double> x(std::size_t{2} * 64);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 100) - 50.0;
  ingot::testing::expect_reverse<i8>(be, DType::i8, x);
  ingot::testing::expect_reverse<i64>(be, DType::i64, x);
  ingot::testing::expect_reverse<f32>(be, DType::f32, x);
}

TEST(Interp, MisalignedSharedVectorAccessIsReported) {
  Interpreter be;
  const auto k = ingot::testing::shared_vector_kernel<f32>(4, /*offset=*/2);
  auto x = make_buffer(be, DType::f32, iota_values(256));
  auto y = be.allocate(DType::f32, 256);
  try {
    be.launch(k, grid_1d(64, 64), {scalar_arg<u32>(256), x, y});
    FAIL() << "expected a misaligned-access report";
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.problem, "misaligned store_vec");
    EXPECT_NE(std::string(e.what()).find("is not a multiple of the vector width 4"), std::string::npos) << e.what();
  }
}

TEST(Interp, WorkGroupsLargerThanTheLaunchBoundsAreRefused) {
  Interpreter be;
  const auto k = passes::optimize(ingot::testing::vector_reverse_kernel<f32>(4));  // launch_bounds(64, 2)
  EXPECT_EQ(k.bounds, (ir::LaunchBounds{64, 2}));
  EXPECT_NE(ir::print_kernel(k).find(") launch_bounds(64, 2) {"), std::string::npos) << ir::print_kernel(k);
  auto x = make_buffer(be, DType::f32, iota_values(512));
  auto y = be.allocate(DType::f32, 512);
  try {
    be.launch(k, grid_1d(128, 128), {scalar_arg<u32>(512), x, y});
    FAIL() << "expected the launch bounds to refuse 128-thread groups";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("work-groups of 128 threads, but the kernel declares launch_bounds(64)"),
              std::string::npos)
        << e.what();
  }
  be.launch(k, grid_1d(128, 64), {scalar_arg<u32>(512), x, y});  // within the bound
  EXPECT_EQ(read_buffer(be, *y)[0], 4.0);
}

TEST(Interp, MisalignedVectorAccessIsReported) {
  Interpreter be;
  const auto k = ingot::testing::vector_reverse_kernel<f32>(4, /*offset=*/2);
  auto x = make_buffer(be, DType::f32, iota_values(16));
  auto y = be.allocate(DType::f32, 16);
  try {
    be.launch(k, grid_1d(3, 4), {scalar_arg<u32>(16), x, y});
    FAIL() << "expected a misaligned-access report";
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.problem, "misaligned load_vec");
    EXPECT_NE(std::string(e.what()).find("buffer 'x' index 2 is not a multiple of the vector width 4"),
              std::string::npos)
        << e.what();
  }
}

TEST(Interp, VectorAccessPastTheEndIsReported) {
  Interpreter be;
  const auto k = ingot::testing::vector_reverse_kernel<bf16>(8, 0, /*extra_threads=*/1);
  auto x = make_buffer(be, DType::bf16, iota_values(20));  // 2 whole vectors and 4 elements
  auto y = be.allocate(DType::bf16, 20);
  try {
    be.launch(k, grid_1d(3, 4), {scalar_arg<u32>(20), x, y});
    FAIL() << "expected an out-of-range report";
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.problem, "out-of-range load_vec");
    EXPECT_EQ(e.buffer, "x");
    EXPECT_EQ(e.index, 23);  // the last element of the vector at 16
    EXPECT_EQ(e.extent, 20u);
    EXPECT_NE(std::string(e.what()).find("let (%x"), std::string::npos) << e.what();
  }
}

TEST(Interp, OutOfRangeStoreIsReported) {
  Interpreter be;
  const auto k = trace("store_oob", [](KernelBuilder& b) {
    auto y = b.out<u32>("y", 4);
    store(y, b.program_id(0), 1u);
  });
  auto y = be.allocate(DType::u32, 4);
  try {
    be.launch(k, grid_1d(5, 5), {y});
    FAIL();
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.problem, "out-of-range store");
    EXPECT_EQ(e.index, 4);
  }
}

// Two threads storing one global element in one launch: a write-write race (a GPU keeps either value), reported
// across work-groups too; one thread storing its element twice is not a race.
TEST(Interp, GlobalWriteWriteRaceIsReported) {
  Interpreter be;
  const auto k = trace("store_race", [](KernelBuilder& b) {
    auto y = b.out<u32>("y", 8);
    auto i = b.program_id(0);
    store(y, i / 2u, i);  // threads 2j and 2j + 1 both store element j
  });
  auto y = be.allocate(DType::u32, 8);
  for (const auto& g : {grid_1d(16, 16), grid_1d(16, 1)}) {
    try {
      be.launch(k, g, {y});
      FAIL() << "no race reported";
    } catch (const LaunchError& e) {
      EXPECT_EQ(e.problem, "global-memory race (write after write)");
    }
  }
  const auto twice = trace("store_twice", [](KernelBuilder& b) {
    auto y = b.out<u32>("y", 8);
    auto i = b.program_id(0);
    store(y, i, 1u);
    store(y, i, i);
  });
  EXPECT_NO_THROW(be.launch(twice, grid_1d(8, 4), {y}));
  EXPECT_NO_THROW(be.launch(twice, grid_1d(8, 4), {y}));  // (a second launch starts afresh)
}

TEST(Interp, NegativeIndexIsOutOfRange) {
  Interpreter be;
  const auto k = trace("neg", [](KernelBuilder& b) {
    auto x = b.in<f32>("x", 4);
    auto y = b.out<f32>("y", 1);
    store(y, 0, load(x, cast<i32>(b.program_id(0)) - 1));
  });
  auto x = make_buffer(be, DType::f32, iota_values(4));
  auto y = be.allocate(DType::f32, 1);
  try {
    be.launch(k, grid_1d(1, 1), {x, y});
    FAIL();
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.index, -1);
    EXPECT_EQ(e.buffer, "x");
  }
}

TEST(Interp, ReadOfPoisonIsReported) {
  Interpreter be;
  const auto k = trace("poison", [](KernelBuilder& b) {
    auto y = b.inout<f32>("y", 4);
    store(y, 0, load(y, 3) + 1.0f);
  });
  auto y = be.allocate(DType::f32, 4);  // never uploaded
  try {
    be.launch(k, grid_1d(1, 1), {y});
    FAIL();
  } catch (const LaunchError& e) {
    EXPECT_NE(std::string(e.what()).find("never written (poisoned)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("element 3"), std::string::npos) << e.what();
  }
  // fresh buffers hold the poison pattern (NaN for floats)
  const auto v = read_buffer(be, *y);
  EXPECT_TRUE(std::isnan(v[1]));
}

TEST(Interp, SharedMemoryReverseWithBarrier) {
  Interpreter be;
  const auto k = ingot::testing::reverse_kernel();
  auto x = make_buffer(be, DType::i32, iota_values(64, 0));
  auto y = be.allocate(DType::i32, 64);
  be.launch(k, grid_1d(64, 32), {scalar_arg<u32>(64), x, y});
  const auto out = read_buffer(be, *y);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], (i / 32) * 32 + 31 - i % 32) << i;
}

// Shared-memory races: the lockstep execution finishes every statement for every thread before the next, so a missing
// barrier would compute the same values as a correct kernel; the interpreter reports it instead. kind 0: thread l
// writes s[l] and reads s[l ^ 1] (read after write); 1: reads s[l ^ 1], then writes s[l] (write after read); 2: two
// threads write s[l / 2] (write after write); 3: as 0 with a barrier between (no race); 4: each thread writes, reads
// and rewrites only its own element (no race).
TEST(Interp, SharedMemoryRacesAreReported) {
  const auto kernel = [](int kind) {
    return trace("race" + std::to_string(kind), [kind](KernelBuilder& b) {
      auto y = b.out<u32>("y", 64);
      auto s = b.shared<u32>("s", 64);
      auto l = b.local_id(0);
      store(s, l, l);  // every element written first (no poison); then, after a barrier:
      b.barrier();
      if (kind == 2) {
        store(s, l / 2u, l);
      } else if (kind == 1) {
        auto v = b.let("v", load(s, l ^ 1u));
        store(s, l, v + 1u);
      } else {
        store(s, l, l * 3u);
        if (kind == 3) b.barrier();
        if (kind == 4) {
          auto v = b.let("v", load(s, l));
          store(s, l, v + 1u);
        }
      }
      store(y, l, load(s, kind == 4 ? l : l ^ 1u));
    });
  };
  Interpreter be;
  auto y = be.allocate(DType::u32, 64);
  for (const auto& [kind, problem] :
       std::vector<std::pair<int, std::string>>{{0, "shared-memory race (read after write)"},
                                                {1, "shared-memory race (write after read)"},
                                                {2, "shared-memory race (write after write)"}}) {
    try {
      be.launch(kernel(kind), grid_1d(64, 64), {y});
      ADD_FAILURE() << "kind " << kind << ": no race reported";
    } catch (const LaunchError& e) {
      EXPECT_EQ(e.problem, problem) << e.what();
      EXPECT_NE(std::string(e.what()).find("with no barrier between"), std::string::npos) << e.what();
    }
  }
  be.launch(kernel(3), grid_1d(64, 64), {y});
  auto out = read_buffer(be, *y);
  for (std::uint32_t i = 0; i < 64; ++i) EXPECT_EQ(out[i], (i ^ 1u) * 3u) << i;
  be.launch(kernel(4), grid_1d(64, 64), {y});
  out = read_buffer(be, *y);
  for (std::uint32_t i = 0; i < 64; ++i) EXPECT_EQ(out[i], i * 3u + 1u) << i;
}

// An asynchronous copy writes its element at some moment between its issue and the wait that completes it: a read of
// the element another thread made since the last barrier (a ring slot refilled too early), or any access while the
// copy is in flight, races with it; copied, waited for and read after a barrier, it does not.
TEST(Interp, AsynchronousCopyRacesAreReported) {
  const auto kernel = [](int kind) {
    return trace("async_race" + std::to_string(kind), [kind](KernelBuilder& b) {
      auto x = b.in<u32>("x", 128);
      auto y = b.out<u32>("y", 64);
      b.launch_bounds(64);
      auto s = b.shared<u32>("s", 128);
      auto l = b.local_id(0);
      store_vec(s, l * 2u, std::vector<Val<u32>>{l, l});
      b.barrier();
      auto before = b.let("before", load(s, (l ^ 1u) * 2u));  // every thread reads its neighbour's pair
      if (kind != 0) b.barrier();                             // the copies below start after every read
      copy_async(s, l * 2u, x, l * 2u, 2, true);
      async_commit(b);
      if (kind == 2) {
        store(y, l, load(s, (l ^ 1u) * 2u) + before);  // the neighbour's copy is still in flight
        async_wait(b, 0);
        return;
      }
      async_wait(b, 0);
      b.barrier();
      store(y, l, load(s, (l ^ 1u) * 2u) + before);
    });
  };
  Interpreter be;
  std::vector<double> xs(128);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>(100 + i);
  auto x = make_buffer(be, DType::u32, xs);
  auto y = be.allocate(DType::u32, 64);
  for (const auto& [kind, problem] :
       std::vector<std::pair<int, std::string>>{{0, "shared-memory race (write after read)"},
                                                {2, "shared-memory race (access during an asynchronous copy)"}}) {
    try {
      be.launch(kernel(kind), grid_1d(64, 64), {x, y});
      ADD_FAILURE() << "kind " << kind << ": no race reported";
    } catch (const LaunchError& e) {
      EXPECT_EQ(e.problem, problem) << e.what();
    }
  }
  be.launch(kernel(1), grid_1d(64, 64), {x, y});
  const auto out = read_buffer(be, *y);
  for (std::uint32_t i = 0; i < 64; ++i) EXPECT_EQ(out[i], 100u + 3u * (i ^ 1u)) << i;
}

TEST(Interp, DivergentBarrierIsAnError) {
  Interpreter be;
  const auto k = trace("divergent", [](KernelBuilder& b) {
    auto y = b.out<u32>("y", 64);
    auto l = b.local_id(0);
    if_(l < 16u, [&] { b.barrier(); });
    store(y, l, l);
  });
  auto y = be.allocate(DType::u32, 64);
  try {
    be.launch(k, grid_1d(64, 64), {y});
    FAIL();
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.problem, "barrier under divergent control flow");
    EXPECT_EQ(e.local[0], 16u);
  }
}

// Sub-group shuffles: both exchanges of the shared test kernel at every width, with tail threads;
// the interpreter is the reference the printed shuffles (native or through shared memory) match.
TEST(Interp, ShufflesExchangeWithinSubGroups) {
  Interpreter be;
  for (const std::uint32_t lanes : {2u, 4u, 8u, 16u, 32u}) {
    ingot::testing::expect_shuffle(be, lanes, 128, 128, 64);
    ingot::testing::expect_shuffle(be, lanes, 100, 128, 32);        // 28 tail threads
    ingot::testing::expect_shuffle(be, lanes, 100, 128, 64, true);  // the shared-memory exchange
  }
}

// What the shuffle rules refuse, each with its reason: divergence, a source lane out of range,
// work-groups that are not whole warps, kernels without launch bounds, widths at trace time.
TEST(Interp, ShuffleRulesAreChecked) {
  Interpreter be;
  auto launch = [&](const ir::Kernel& k, std::uint32_t group) {
    auto y = be.allocate(DType::u32, 64);
    be.launch(k, grid_1d(64, group), {y});
  };
  auto kernel = [](bool divergent, std::uint32_t src_add) {
    return trace("shuffles", [=](KernelBuilder& b) {
      auto y = b.out<u32>("y", 64);
      b.launch_bounds(64);
      auto l = b.local_id(0);
      if (divergent) {
        if_(l < 16u, [&] { store(y, l, shuffle(l, l % 8u, 8)); });
      } else {
        store(y, l, shuffle(l, l % 8u + src_add, 8));
      }
    });
  };
  try {
    launch(kernel(true, 0), 64);
    FAIL();
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.problem, "shuffle under divergent control flow");
  }
  try {
    launch(kernel(false, 1), 64);  // lane 7 asks for lane 8 of 8
    FAIL();
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.problem, "shuffle source lane out of range");
    EXPECT_EQ(e.local[0], 7u);
  }
  try {
    launch(kernel(false, 0), 16);
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of 32 threads"), std::string::npos) << e.what();
  }
  const auto unbounded = trace("unbounded", [](KernelBuilder& b) {
    auto y = b.out<u32>("y", 64);
    store(y, b.local_id(0), shuffle(b.local_id(0), 0u, 4));
  });
  EXPECT_THROW((void)passes::optimize(unbounded), ir::VerifyError);
  EXPECT_THROW(trace("three", [](KernelBuilder& b) { (void)shuffle(b.local_id(0), 0u, 3); }), TraceError);
}

// Warp matrix multiply-accumulate: the definition (fragments, rounding of A and B to f16/bf16),
// tail warps, and legalise's shared-memory exchange (what dialects without tensor cores print).
// Asynchronous copies: the pipeline of shared_kernels.hpp in three types and widths, with
// zero-filled chunks past n; the interpreter performs each copy at its wait.
TEST(Interp, AsyncCopiesLandAtTheirWait) {
  Interpreter be;
  ingot::testing::expect_async_copy<bf16>(be, DType::bf16, 8, shared_vector_input(2 * 3 * 512 - 552), 2);
  ingot::testing::expect_async_copy<f32>(be, DType::f32, 2, shared_vector_input(3 * 128 - 6), 1);
  ingot::testing::expect_async_copy<f16>(be, DType::f16, 4, shared_vector_input(std::size_t{3} * 3 * 256), 3);
}

TEST(Interp, AsyncCopyMisuseIsReported) {
  Interpreter be;
  const auto run = [&](ingot::testing::AsyncFault fault) {
    const auto k = passes::optimize(ingot::testing::async_copy_kernel<f32>(4, fault));
    auto x = make_buffer(be, DType::f32, shared_vector_input(768));
    auto y = be.allocate(DType::f32, 768);
    be.launch(k, grid_1d(64, 64), {scalar_arg<u32>(768), scalar_arg<u32>(768), x, y});
  };
  try {
    run(ingot::testing::AsyncFault::ReadBeforeWait);
    FAIL() << "expected a read of a copy's destination before its wait to be reported";
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.problem, "read of an element never written (poisoned)") << e.what();
  }
  try {
    run(ingot::testing::AsyncFault::NoFinalWait);
    FAIL() << "expected copies never waited for to be reported";
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.problem, "thread ended with asynchronous copies not completed") << e.what();
    EXPECT_NE(std::string(e.what()).find("follow every copy_async with async_commit"), std::string::npos) << e.what();
  }
  // A source chunk past the buffer is reported at the copy, even where the copy writes zeros.
  const auto k = trace("async_oob", [](KernelBuilder& b) {
    auto x = b.in<f32>("x", 8u);
    auto y = b.out<f32>("y", 64u * 4u);
    b.launch_bounds(64);
    auto sh = b.shared<f32>("s", 64 * 4);
    auto l = b.local_id(0);
    copy_async(sh, l * 4u, x, l * 4u, 4, l < 2u);
    async_commit(b);
    async_wait(b, 0);
    store_vec(y, l * 4u, load_vec(sh, l * 4u, 4));
  });
  auto x = make_buffer(be, DType::f32, {1, 2, 3, 4, 5, 6, 7, 8});
  auto y = be.allocate(DType::f32, 256);
  try {
    be.launch(k, grid_1d(64, 64), {x, y});
    FAIL() << "expected an out-of-range copy source";
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.problem, "out-of-range copy_async source") << e.what();
    EXPECT_EQ(e.buffer, "x");
    EXPECT_EQ(e.index, 8);
  }
}

TEST(Interp, MmaMatchesItsDefinition) {
  Interpreter be;
  using ingot::testing::expect_mma;
  expect_mma<bf16, f32>(be, 3, 128, 64);  // one tail warp
  expect_mma<f16, f32>(be, 2, 64, 32);
  expect_mma<bf16, bf16>(be, 2, 64, 64);
  expect_mma<f16, f16>(be, 1, 64, 64);
  // lowered (f32 slots), and the compact exchange (16-bit slots): the same products in the same order, so the same bits
  EXPECT_EQ((expect_mma<bf16, f32>(be, 3, 128, 64, 2)), (expect_mma<bf16, f32>(be, 3, 128, 64, 1)));
  EXPECT_EQ((expect_mma<f16, f32>(be, 2, 64, 32, 2)), (expect_mma<f16, f32>(be, 2, 64, 32, 1)));
  EXPECT_EQ((expect_mma<f16, f16>(be, 2, 64, 64, 2)), (expect_mma<f16, f16>(be, 2, 64, 64, 1)));
}

TEST(Interp, LoadMatrixMatchesItsDefinition) {
  Interpreter be;
  ingot::testing::expect_load_matrix<bf16>(be, 3);
  ingot::testing::expect_load_matrix<f16>(be, 2);
  ingot::testing::expect_load_matrix<bf16>(be, 2, 1);        // legalise's shuffles and pair loads agree
  ingot::testing::expect_load_matrix<f16>(be, 3, 2);         // and its one exchange through shared memory
  ingot::testing::expect_load_matrix<bf16>(be, 2, 0, true);  // transposed, as traced and lowered both ways
  ingot::testing::expect_load_matrix<f16>(be, 3, 1, true);
  ingot::testing::expect_load_matrix<bf16>(be, 2, 2, true);
  // the transposed load is another kernel to every cache keyed by the fingerprint
  EXPECT_NE(ir::fingerprint(ingot::testing::load_matrix_kernel<bf16>(false)),
            ir::fingerprint(ingot::testing::load_matrix_kernel<bf16>(true)));
}

// What load_matrix refuses: a row index that is not a multiple of 8, a row past the array, a
// poisoned element, divergence; and at trace time a global buffer or 32-bit elements.
TEST(Interp, LoadMatrixRulesAreChecked) {
  Interpreter be;
  const auto kernel = [](std::uint32_t row_step, std::uint32_t extra, std::uint32_t rows_written, bool divergent) {
    return trace("load_matrix_rules", [=](KernelBuilder& b) {
      auto y = b.out<f32>("y", 64 * 8);
      b.launch_bounds(64);
      auto xs = b.shared<bf16>("rows", 64 * 8);
      auto l = b.let("l", b.local_id(0));
      for (std::uint32_t j = 0; j < 8; ++j) {
        if_(l < rows_written, [&] { store(xs, l * 8u + j, cast<f32>(l)); });
      }
      b.barrier();
      const auto body = [&] {
        const auto v = load_matrix(xs, l * row_step + extra);
        for (std::uint32_t i = 0; i < 8; ++i) store(y, l * 8u + i, cast<f32>(v[i]));
      };
      if (divergent) {
        if_(l < 16u, body);
      } else {
        body();
      }
    });
  };
  auto y = be.allocate(DType::f32, std::size_t{64} * 8);
  be.launch(kernel(8, 0, 64, false), grid_1d(64, 64), {y});  // the rule-abiding version runs
  const auto expect_problem = [&](const ir::Kernel& k, const std::string& problem) {
    try {
      be.launch(k, grid_1d(64, 64), {y});
      FAIL() << "expected: " << problem;
    } catch (const LaunchError& e) {
      EXPECT_EQ(e.problem, problem) << e.what();
    }
  };
  expect_problem(kernel(4, 0, 64, false), "misaligned load_matrix row");
  expect_problem(kernel(8, 8, 64, false), "out-of-range load_matrix row");
  expect_problem(kernel(8, 0, 63, false), "read of an element never written (poisoned)");
  expect_problem(kernel(8, 0, 64, true), "load_matrix under divergent control flow");
  const auto trace_error = [](bool global, const std::string& want) {
    try {
      (void)trace("load_matrix_refused", [=](KernelBuilder& b) {
        b.launch_bounds(32);
        auto x = b.in<u16>("x", 256);
        auto xs = b.shared<f32>("w", 256);
        (void)b.emit_load_matrix(global ? x.mem() : xs.mem(), Val<u32>(0u).id_in(b));
      });
      ADD_FAILURE() << "expected a trace error: " << want;
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  trace_error(true, "load_matrix reads a shared array");
  trace_error(false, "load_matrix reads 16-bit elements");
}

// What the mma rules refuse, with the reason: divergence, work-groups that are not whole warps,
// kernels without launch bounds.
TEST(Interp, MmaRulesAreChecked) {
  Interpreter be;
  const auto kernel = [](bool divergent, bool bounds) {
    return trace("mma_rules", [=](KernelBuilder& b) {
      auto y = b.out<f32>("y", 64);
      if (bounds) b.launch_bounds(64);
      auto l = b.local_id(0);
      auto v = cast<f32>(l);
      const auto body = [&] {
        const auto d = mma_m16n8k16<bf16>(b, {v, v, v, v, v, v, v, v}, {v, v, v, v}, {v, v, v, v});
        store(y, l, d[0]);
      };
      if (divergent) {
        if_(l < 16u, body);
      } else {
        body();
      }
    });
  };
  auto y = be.allocate(DType::f32, 64);
  try {
    be.launch(kernel(true, true), grid_1d(64, 64), {y});
    FAIL();
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.problem, "mma under divergent control flow");
  }
  try {
    be.launch(kernel(false, true), grid_1d(64, 16), {y});
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of 32 threads"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)passes::optimize(kernel(false, false)), ir::VerifyError);
}

TEST(Interp, AtomicsHistogram) {
  Interpreter be;
  const auto k = trace("histogram", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<u32>("x", n);
    auto h = b.inout<u32>("h", 4);
    auto m = b.inout<i32>("m", 2);
    auto i = b.program_id(0);
    auto j = select(i < n, i, 0u);
    auto v = load(x, j);
    if_(i < n, [&] {
      (void)atomic_add(h, v % 4u, 1u);
      (void)atomic_max(m, 0, cast<i32>(v));
      (void)atomic_min(m, 1, cast<i32>(v));
    });
  });
  auto x = make_buffer(be, DType::u32, iota_values(10, 0));  // 0..9
  auto h = make_buffer(be, DType::u32, {0, 0, 0, 0});
  auto m = make_buffer(be, DType::i32, {-100, 100});
  be.launch(k, grid_1d(10, 4), {scalar_arg<u32>(10), x, h, m});
  EXPECT_EQ(read_buffer(be, *h), (std::vector<double>{3, 3, 2, 2}));
  EXPECT_EQ(read_buffer(be, *m), (std::vector<double>{9, 0}));
}

TEST(Interp, RuntimeLoopsWithPerThreadBounds) {
  Interpreter be;
  // y[i] = sum of x[0..i]
  const auto k = trace("prefix", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<f32>("x", n);
    auto y = b.out<f32>("y", n);
    auto i = b.program_id(0);
    if_(i < n, [&] {
      Var<f32> acc(b, 0.0f, "acc");
      for_(0u, i + 1u, [&](Val<u32> j) { acc += load(x, j); });
      store(y, i, acc);
    });
  });
  auto x = make_buffer(be, DType::f32, iota_values(10));
  auto y = be.allocate(DType::f32, 10);
  be.launch(k, grid_1d(10, 8), {scalar_arg<u32>(10), x, y});
  const auto out = read_buffer(be, *y);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out[i], (i + 1) * (i + 2) / 2);
}

TEST(Interp, DivisionByZeroStopsTheLaunch) {
  Interpreter be;
  const auto k = trace("div", [](KernelBuilder& b) {
    auto d = b.scalar<u32>("d");
    auto y = b.out<u32>("y", 1);
    store(y, 0, 10u / d);
  });
  auto y = be.allocate(DType::u32, 1);
  EXPECT_THROW(be.launch(k, grid_1d(1, 1), {scalar_arg<u32>(0), y}), LaunchError);
  be.launch(k, grid_1d(1, 1), {scalar_arg<u32>(3), y});
  EXPECT_EQ(read_buffer(be, *y)[0], 3);
}

TEST(Interp, ArgumentsAreCheckedBeforeLaunch) {
  Interpreter be;
  const auto k = copy_kernel(true);
  auto x = make_buffer(be, DType::f32, iota_values(100));
  auto small = be.allocate(DType::f32, 50);
  auto halfs = be.allocate(DType::f16, 100);
  auto y = be.allocate(DType::f32, 100);
  auto expect_error = [&](const std::vector<Arg>& args, const std::string& needle) {
    try {
      be.launch(k, grid_1d(100, 64), args);
      ADD_FAILURE() << "expected ArgumentError containing: " << needle;
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error({scalar_arg<u32>(100), x}, "takes 3 arguments, got 2");
  expect_error({scalar_arg<i32>(100), x, y}, "expected a scalar of u32, got i32");
  expect_error({scalar_arg<u32>(100), halfs, y}, "expected a buffer of f32, got a buffer of f16");
  expect_error({x, x, y}, "expected a scalar, got a buffer");
  expect_error({scalar_arg<u32>(100), x, small}, "buffer 'y' has 50 elements but its declared extent n needs 100");
  expect_error({scalar_arg<u32>(100), y, y}, "buffers passed as 'x' and 'y' are the same memory or overlap");
  // nothing was written by the refused launches
  EXPECT_TRUE(std::isnan(read_buffer(be, *y)[0]));
}

// A buffer with a device address (as CUDA's, wrapped caller memory among them), for check_args.
class AddressedBuffer final : public DeviceBuffer {
 public:
  AddressedBuffer(DType t, std::size_t count, std::uint64_t address) : DeviceBuffer(t, count), address_(address) {}
  [[nodiscard]] std::string backend_name() const override { return "test"; }
  [[nodiscard]] std::uint64_t address() const override { return address_; }

 private:
  std::uint64_t address_;
};

TEST(Interp, CheckArgsComparesDeviceAddresses) {
  const auto k = copy_kernel(true);  // n, x (in), y (out)
  const auto at = [](std::uint64_t a, std::size_t n = 100) {
    return std::make_shared<AddressedBuffer>(DType::f32, n, a);
  };
  const auto refused = [&](const ir::Kernel& kernel, const std::vector<Arg>& args) -> std::string {
    try {
      check_args(kernel, args);
    } catch (const ArgumentError& e) {
      return e.what();
    }
    return "";
  };
  // Separate objects over overlapping memory (two wraps of one tensor): refused, the kernel writes y.
  EXPECT_NE(refused(k, {scalar_arg<u32>(100), at(0x10000), at(0x10000 + 396)}).find("are the same memory or overlap"),
            std::string::npos);
  EXPECT_NE(refused(k, {scalar_arg<u32>(100), at(0x10000 + 396), at(0x10000)}).find("overlap"), std::string::npos);
  EXPECT_EQ(refused(k, {scalar_arg<u32>(100), at(0x10000), at(0x10000 + 400)}), "");  // adjacent: fine
  // Vector accesses need aligned buffers; scalar kernels take any element-aligned address.
  const auto vk = trace("vec4", [](KernelBuilder& b) {
    auto x = b.in<f32>("x", 8u);
    auto y = b.out<f32>("y", 8u);
    auto i = b.program_id(0) * 4u;
    if_(i < 8u, [&] { store_vec(y, i, load_vec(x, i, 4)); });
  });
  const std::string msg = refused(vk, {at(0x20008, 8), at(0x30000, 8)});
  EXPECT_NE(msg.find("buffer 'x' starts at address"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a multiple of 16 bytes"), std::string::npos) << msg;
  EXPECT_EQ(refused(vk, {at(0x20010, 8), at(0x30000, 8)}), "");
  EXPECT_EQ(refused(k, {scalar_arg<u32>(100), at(0x20004), at(0x30000)}), "");
}

TEST(Interp, ExtentOverflowIsRefused) {
  Interpreter be;
  const auto k = trace("overflow", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto y = b.out<f32>("y", n * 1024u);
    store(y, 0, 1.0f);
  });
  auto y = be.allocate(DType::f32, 16);
  try {
    be.launch(k, grid_1d(1, 1), {scalar_arg<u32>(1u << 23), y});
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("overflows u32"), std::string::npos) << e.what();
  }
}

TEST(Interp, BadGeometryIsRefused) {
  Interpreter be;
  const auto k = copy_kernel(true);
  auto x = make_buffer(be, DType::f32, iota_values(4));
  auto y = be.allocate(DType::f32, 4);
  LaunchGeometry g;
  g.group_size = {2048, 1, 1};
  EXPECT_THROW(be.launch(k, g, {scalar_arg<u32>(4), x, y}), ArgumentError);
  g.group_size = {0, 1, 1};
  EXPECT_THROW(be.launch(k, g, {scalar_arg<u32>(4), x, y}), ArgumentError);
  // Past 2^32 - 1 work-groups on an axis (group ids are u32).
  EXPECT_THROW((void)grid_1d(1ull << 45, 256), std::invalid_argument);
}

// program_id<i64>: the global index of a launch past 2^32 threads, in 64 bits. The interpreter runs only the last
// work-groups (InterpOptions::first_group); each thread writes the high and low words of its index at index - base
// (a 64-bit subtraction), so the buffers stay small. The same launch of a kernel reading a 32-bit program_id is
// refused before anything runs.
TEST(Interp, WideProgramIdIndexesPast2To32Threads) {
  constexpr std::uint64_t kThreads = (std::uint64_t{1} << 32) + 300, kGroup = 128;
  const ir::Kernel wide = trace("wide_ids", [](KernelBuilder& k) {
    auto n = k.scalar<i64>("n");
    auto base = k.scalar<i64>("base");
    auto hi = k.out<u32>("hi", n - base);
    auto lo = k.out<u32>("lo", n - base);
    auto i = k.program_id<i64>(0);
    if_(i >= base && i < n, [&] {
      store(hi, i - base, cast<u32>(i >> 32));
      store(lo, i - base, cast<u32>(i));
    });
  });
  const auto g = grid_1d(kThreads, kGroup);
  ASSERT_EQ(g.groups[0], (kThreads + kGroup - 1) / kGroup);
  const std::uint64_t groups_run = 3, first = g.groups[0] - groups_run;
  const std::uint64_t base = first * kGroup, count = kThreads - base;
  Interpreter be(InterpOptions{.first_group = first});
  auto hi = be.allocate(DType::u32, count), lo = be.allocate(DType::u32, count);
  be.launch(
      wide, g,
      {scalar_arg<i64>(static_cast<std::int64_t>(kThreads)), scalar_arg<i64>(static_cast<std::int64_t>(base)), hi, lo});
  std::vector<std::uint32_t> h(count), l(count);
  be.download(*hi, h.data(), count * 4);
  be.download(*lo, l.data(), count * 4);
  for (std::uint64_t j = 0; j < count; ++j) {
    const std::uint64_t want = base + j;
    ASSERT_EQ((std::uint64_t{h[j]} << 32) | l[j], want) << "element " << j;
  }
  EXPECT_GT(base + count - 1, std::uint64_t{0xffffffffu});  // the last indexes are past 2^32

  const ir::Kernel narrow = trace("narrow_ids", [](KernelBuilder& k) {
    auto y = k.out<u32>("y", 1u);
    auto i = k.program_id(0);
    if_(i == 0u, [&] { store(y, 0u, i); });
  });
  auto y = be.allocate(DType::u32, 1);
  EXPECT_THROW(be.launch(narrow, g, {y}), ArgumentError);
  EXPECT_THROW(Interpreter(InterpOptions{.first_group = g.groups[0]})
                   .launch(wide, g, {scalar_arg<i64>(1), scalar_arg<i64>(0), hi, lo}),
               ArgumentError);
}

TEST(Interp, UploadSizeMismatchIsRefused) {
  Interpreter be;
  auto y = be.allocate(DType::f32, 4);
  std::vector<float> three(3);
  EXPECT_THROW(be.upload(*y, three.data(), 12), ArgumentError);
}

TEST(Interp, TwoDimensionalGrid) {
  Interpreter be;
  const auto k = ingot::testing::grid2d_kernel();
  auto y = be.allocate(DType::u32, std::size_t{7} * 5);
  be.launch(k, grid_2d(7, 5, 4, 2), {scalar_arg<u32>(7), scalar_arg<u32>(5), y});
  const auto out = read_buffer(be, *y);
  for (u32 r = 0; r < 5; ++r)
    for (u32 c = 0; c < 7; ++c) EXPECT_EQ(out[r * 7 + c], r * 100 + c);
}

TEST(Interp, SixteenBitConversionsMatchTheHostBitForBit) {
  Interpreter be;
  ingot::testing::expect_conversions_match_host(be);
}
