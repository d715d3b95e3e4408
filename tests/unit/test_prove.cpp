// The proof pass (passes::prove) on small hand-written kernels: a correct kernel is proved, a
// missing tail guard and a misaligned vector tail are refuted with witnesses the checked
// interpreter replays as the out-of-range access, an index that wraps u32 is flagged; and
// preconditions: assumed by the proof, checked by every launch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "depthwise_conv1d.hpp"
#include "ingot/dsl.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/passes/prove.hpp"
#include "ingot/runtime/interp.hpp"
#include "ingot/scalar_eval.hpp"
#include "ingot/verify.hpp"

using namespace ingot;
using namespace ingot::dsl;
using namespace ingot::runtime;
using passes::ObligationKind;
using passes::ProofStatus;

namespace {

constexpr std::uint32_t kGroup = 64;

// y[i] = 2 * x[i]; tail threads read a safe element (element 0: n >= 1 is a precondition) and skip the store when
// guarded.
ir::Kernel scale_kernel(bool guarded) {
  return passes::optimize(trace(guarded ? "scale_guarded" : "scale_unguarded", [guarded](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    if (guarded) b.require(n >= 1u);
    auto x = b.in<f32>("x", n);
    auto y = b.out<f32>("y", n);
    auto i = b.program_id(0);
    if (guarded) {
      auto v = load(x, select(i < n, i, 0u));
      if_(i < n, [&] { store(y, i, v * 2.0f); });
    } else {
      store(y, i, load(x, i) * 2.0f);
    }
  }));
}

// y[i] = x[(i * stride) % n]: always in range, but i * stride wraps u32 for large strides.
ir::Kernel strided_kernel() {
  return passes::optimize(trace("strided_gather", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto stride = b.scalar<u32>("stride");
    b.require(n >= 1u);
    auto x = b.in<f32>("x", n);
    auto y = b.out<f32>("y", n);
    auto i = b.program_id(0);
    auto v = load(x, (select(i < n, i, 0u) * stride) % n);
    if_(i < n, [&] { store(y, i, v); });
  }));
}

// y[i] = x[i / stride]: needs stride >= 1, which the kernel states as a precondition or not.
ir::Kernel divided_kernel(bool with_precondition) {
  return passes::optimize(trace("divided", [with_precondition](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto stride = b.scalar<u32>("stride");
    b.require(n >= 1u);
    if (with_precondition) b.require(stride >= 1u);
    auto x = b.in<f32>("x", n);
    auto y = b.out<f32>("y", n);
    auto i = b.program_id(0);
    auto v = load(x, select(i < n, i, 0u) / stride);
    if_(i < n, [&] { store(y, i, v); });
  }));
}

// Four elements per thread in one vector access, guarded only by the access's first element.
ir::Kernel vec4_kernel() {
  return passes::optimize(trace("vec4_copy", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<f32>("x", n);
    auto y = b.out<f32>("y", n);
    auto i = b.program_id(0) * 4u;
    if_(i < n, [&] {
      auto v = load_vec(x, i, 4);
      store_vec(y, i, v);
    });
  }));
}

// y[r] = sum of row r of x (rows of `cols`): a run-time loop whose range bounds the index.
ir::Kernel row_sum_kernel() {
  return passes::optimize(trace("row_sum", [](KernelBuilder& b) {
    auto rows = b.scalar<u32>("rows");
    auto cols = b.scalar<u32>("cols");
    auto x = b.in<f32>("x", rows * cols);
    auto y = b.out<f32>("y", rows);
    auto r = b.program_id(0);
    if_(r < rows, [&] {
      Var<f32> acc(b, 0.0f, "acc");
      for_(0u, cols, [&](Val<u32> c) { acc += load(x, r * cols + c); });
      store(y, r, Val<f32>(acc));
    });
  }));
}

// A work-group's tile of x with a halo of one element on the right in shared memory; y[i] = x[i] + x[i + 1] read
// from the tile. `tile` elements: kGroup + 1 is right, kGroup leaves the halo's slot outside the array.
ir::Kernel halo_kernel(std::uint32_t tile) {
  return passes::optimize(trace("halo_sum", [tile](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    b.require(n >= 1u);
    auto x = b.in<f32>("x", n);
    auto y = b.out<f32>("y", n);
    auto t = b.shared<f32>("t", tile);
    auto l = b.local_id(0);
    auto i = b.program_id(0);
    store(t, l, load(x, min(i, n - 1u)));
    if_(l == 0u, [&] { store(t, Val<u32>(kGroup), load(x, min(i + kGroup, n - 1u))); });
    b.barrier();
    auto v = load(t, l) + load(t, l + 1u);
    if_(i < n, [&] { store(y, i, v); });
  }));
}

passes::ProveOptions launch_of(std::uint32_t groups, std::map<std::string, std::uint64_t> scalars) {
  passes::ProveOptions o;
  o.group_size = {kGroup, 1, 1};
  o.groups = std::array<std::uint32_t, 3>{groups, 1, 1};
  o.scalars = std::move(scalars);
  return o;
}

// Runs the witness on the interpreter: its scalars, its grid, buffers of exactly their declared
// extents. Returns the LaunchError the launch stops with (none: the witness was spurious).
std::optional<LaunchError> replay(const ir::Kernel& k, const passes::Witness& w, std::uint32_t group = kGroup) {
  Interpreter be;
  std::vector<Arg> args(k.params.size());
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const ir::Param& p = k.params[i];
    if (!ir::is_buffer(p.kind)) args[i] = ScalarArg{p.type, w.scalars.at(p.name)};
  }
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const ir::Param& p = k.params[i];
    if (!ir::is_buffer(p.kind)) continue;
    const std::uint64_t need = required_extent(k, i, args);
    args[i] = make_buffer(be, p.type, std::vector<double>(need, 1.0));
  }
  LaunchGeometry g;
  g.groups = w.groups;
  g.group_size = {group, 1, 1};
  try {
    be.launch(k, g, args);
  } catch (const LaunchError& e) {
    return e;
  }
  return std::nullopt;
}

const passes::ProofIssue* find_issue(const passes::ProofReport& r, ObligationKind kind) {
  for (const auto& i : r.issues)
    if (i.kind == kind) return &i;
  return nullptr;
}

}  // namespace

TEST(Prove, GuardedKernelIsProvedForEveryLaunch) {
  const auto k = scale_kernel(true);
  // Every n, every grid.
  passes::ProveOptions o;
  o.group_size = {kGroup, 1, 1};
  const auto r = passes::prove(k, o);
  EXPECT_TRUE(r.proved()) << (r.issues.empty() ? "" : passes::describe(r.issues[0]));
  EXPECT_GE(r.obligations, 2u);
  // A concrete case with a partial last group.
  EXPECT_TRUE(passes::prove(k, launch_of(16, {{"n", 1000}})).proved());
}

TEST(Prove, MissingTailGuardIsRefutedAndTheWitnessReplays) {
  const auto k = scale_kernel(false);
  // n = 1000 in 16 groups of 64: threads 1000..1023 are tail threads.
  const auto r = passes::prove(k, launch_of(16, {{"n", 1000}}));
  ASSERT_FALSE(r.proved());
  const auto* is = find_issue(r, ObligationKind::InRange);
  ASSERT_NE(is, nullptr);
  ASSERT_EQ(is->status, ProofStatus::Refuted);
  ASSERT_TRUE(is->witness);
  const auto& w = *is->witness;
  EXPECT_GE(w.index, 1000);
  EXPECT_EQ(w.extent, 1000u);
  EXPECT_EQ(static_cast<std::int64_t>(w.group_id[0]) * kGroup + w.local_id[0], w.index);
  const auto err = replay(k, w);
  ASSERT_TRUE(err) << "the witness did not fail on the interpreter";
  EXPECT_GE(err->index, 1000);
  // With n free, the proof finds a launch of its own, which replays too.
  passes::ProveOptions free;
  free.group_size = {kGroup, 1, 1};
  const auto r2 = passes::prove(k, free);
  const auto* is2 = find_issue(r2, ObligationKind::InRange);
  ASSERT_NE(is2, nullptr);
  ASSERT_EQ(is2->status, ProofStatus::Refuted);
  ASSERT_TRUE(replay(k, *is2->witness));
}

TEST(Prove, VectorTailPastTheEndIsRefutedAndReplays) {
  const auto k = vec4_kernel();
  // Divisible n: proved. An odd tail: the last vector reads past the end.
  EXPECT_TRUE(passes::prove(k, launch_of(1, {{"n", 256}})).proved());
  const auto r = passes::prove(k, launch_of(1, {{"n", 250}}));
  const auto* is = find_issue(r, ObligationKind::InRange);
  ASSERT_NE(is, nullptr);
  ASSERT_EQ(is->status, ProofStatus::Refuted);
  EXPECT_EQ(is->witness->index, 248);
  const auto err = replay(k, *is->witness);
  ASSERT_TRUE(err);
  EXPECT_GE(err->index, 250);  // the first element of the vector past the end
  EXPECT_LT(err->index, 252);
}

TEST(Prove, IndexThatWrapsU32IsFlagged) {
  const auto k = strided_kernel();
  // (i * stride) % n stays in range for every stride, so no access is out of range...
  const auto r = passes::prove(k, launch_of(16, {{"n", 1000}, {"stride", 1u << 23}}));
  EXPECT_EQ(find_issue(r, ObligationKind::InRange), nullptr);
  // ...but i * stride wraps: the product needs 64 bits.
  const auto* is = find_issue(r, ObligationKind::NoWrap);
  ASSERT_NE(is, nullptr);
  ASSERT_EQ(is->status, ProofStatus::Refuted);
  const auto& w = *is->witness;
  const std::uint64_t i = static_cast<std::uint64_t>(w.group_id[0]) * kGroup + w.local_id[0];
  EXPECT_LT(i, 1000u);
  EXPECT_GE(i * (1u << 23), std::uint64_t{1} << 32);
  // A small stride does not wrap.
  EXPECT_TRUE(passes::prove(k, launch_of(16, {{"n", 1000}, {"stride", 3}})).proved());
}

TEST(Prove, PreconditionIsAssumedAndDivisionByZeroFlaggedWithout) {
  passes::ProveOptions o;
  o.group_size = {kGroup, 1, 1};
  const auto without = passes::prove(divided_kernel(false), o);
  const auto* is = find_issue(without, ObligationKind::NoWrap);
  ASSERT_NE(is, nullptr);
  ASSERT_EQ(is->status, ProofStatus::Refuted);
  EXPECT_EQ(is->witness->scalars.at("stride"), 0u);
  const auto with = passes::prove(divided_kernel(true), o);
  EXPECT_TRUE(with.proved()) << (with.issues.empty() ? "" : passes::describe(with.issues[0]));
}

TEST(Prove, LaunchRefusesScalarsThatBreakAPrecondition) {
  const auto k = divided_kernel(true);
  ASSERT_TRUE(ir::verify(k).empty());
  Interpreter be;
  auto x = make_buffer(be, DType::f32, std::vector<double>(100, 1.0));
  auto y = be.allocate(DType::f32, 100);
  EXPECT_THROW(be.launch(k, grid_1d(100, kGroup), {scalar_arg<u32>(100), scalar_arg<u32>(0), x, y}), PreconditionError);
  // Nothing ran: the output is still poisoned.
  for (const double v : read_buffer(be, *y)) EXPECT_TRUE(std::isnan(v));
  be.launch(k, grid_1d(100, kGroup), {scalar_arg<u32>(100), scalar_arg<u32>(1), x, y});
  EXPECT_EQ(read_buffer(be, *y), std::vector<double>(100, 1.0));
}

TEST(Prove, PreconditionsSurviveThePipelineAndMustUseScalarsOnly) {
  const auto k = divided_kernel(true);
  ASSERT_EQ(k.preconditions.size(), 2u);
  EXPECT_EQ(k.exprs[k.preconditions[0]].type, DType::boolean);
  EXPECT_THROW(trace("bad", [](KernelBuilder& b) { b.require(b.program_id(0) < 4u); }), TraceError);
  EXPECT_THROW(trace("never", [](KernelBuilder& b) { b.require(Val<bool>(false)); }), TraceError);
}

TEST(Prove, LoopRangeBoundsTheIndex) {
  const auto k = row_sum_kernel();
  const auto r = passes::prove(k, launch_of(2, {{"rows", 100}, {"cols", 37}}));
  EXPECT_TRUE(r.proved()) << (r.issues.empty() ? "" : passes::describe(r.issues[0]));
  // For every row count and grid whose extent fits u32: rows * cols is an extent, r * cols + c stays below it.
  passes::ProveOptions o;
  o.group_size = {kGroup, 1, 1};
  o.scalars = {{"cols", 37}};
  const auto free = passes::prove(k, o);
  EXPECT_TRUE(free.proved()) << (free.issues.empty() ? "" : passes::describe(free.issues[0]));
}

TEST(Prove, HaloPastASharedTileIsRefutedAndReplays) {
  EXPECT_TRUE(passes::prove(halo_kernel(kGroup + 1), launch_of(3, {{"n", 150}})).proved());
  const auto k = halo_kernel(kGroup);
  const auto r = passes::prove(k, launch_of(3, {{"n", 150}}));
  const auto* is = find_issue(r, ObligationKind::InRange);
  ASSERT_NE(is, nullptr);
  ASSERT_EQ(is->status, ProofStatus::Refuted);
  const std::string tile = k.mem_name({ir::Space::Shared, 0});
  EXPECT_EQ(is->buffer, tile);
  EXPECT_EQ(is->witness->index, kGroup);
  const auto err = replay(k, *is->witness);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->buffer, tile);
}

// The bug this project exists for: tail threads of grid_1d(n, 256) reading past x. The unguarded example kernel is
// rejected with a witness that replays as the interpreter's out-of-range load; the guarded one is proved.
TEST(Prove, UnguardedDepthwiseConv1dIsRejectedAndTheGuardedOneProved) {
  using examples::Conv1dShape;
  using examples::TailPolicy;
  for (const auto& shape : {Conv1dShape{8, 17, 3, 1, 0, 1}, Conv1dShape{3, 19, 3, 1, 0, 1}}) {
    const std::uint32_t n = shape.channels * shape.out_len();
    passes::ProveOptions o;
    o.group_size = {256, 1, 1};
    o.groups = std::array<std::uint32_t, 3>{1, 1, 1};
    o.scalars = {{"batch", 1}};
    ASSERT_LT(n, 256u);
    for (const TailPolicy tail : {TailPolicy::Guarded, TailPolicy::Unguarded}) {
      const auto k = passes::optimize(
          trace("dwconv1d", [&](KernelBuilder& b) { examples::depthwise_conv1d<f16>(b, shape, tail); }));
      const auto r = passes::prove(k, o);
      if (tail == TailPolicy::Guarded) {
        EXPECT_TRUE(r.proved()) << (r.issues.empty() ? "" : passes::describe(r.issues[0]));
        continue;
      }
      const auto* is = find_issue(r, ObligationKind::InRange);
      ASSERT_NE(is, nullptr);
      ASSERT_EQ(is->status, ProofStatus::Refuted);
      EXPECT_EQ(is->buffer, "x");
      EXPECT_GE(is->witness->local_id[0], n);  // a tail thread
      EXPECT_GE(is->witness->index, static_cast<std::int64_t>(is->witness->extent));
      const auto err = replay(k, *is->witness, 256);
      ASSERT_TRUE(err);
      EXPECT_EQ(err->buffer, "x");
      EXPECT_GE(err->index, static_cast<std::int64_t>(err->extent));
    }
  }
}

TEST(Prove, ScalarsNoLaunchAcceptsAreReportedNotVacuouslyProved) {
  // rows * cols = 2^32 does not fit the extent's u32: check_args refuses every such launch.
  const auto r = passes::prove(row_sum_kernel(), launch_of(1, {{"rows", 65536}, {"cols", 65536}}));
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_EQ(r.issues[0].kind, ObligationKind::Launchable);
  EXPECT_EQ(r.issues[0].status, ProofStatus::Refuted);
}
