// The norm family's row plan (kernels/norm/row_plan.hpp): the defaults each width gets and the refusals of what cannot
// run. The kernels themselves are checked against their oracles by the harness tests on every backend.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "ingot/harness/registry.hpp"
#include "norm/row_plan.hpp"

using namespace ingot;
using ingot::kernels::row_plan;
using ingot::kernels::RowPlan;

namespace {
RowPlan plan(const harness::Params& p, std::uint32_t elem_bytes) { return row_plan(p, elem_bytes, "rmsnorm"); }
}  // namespace

TEST(NormRowPlan, DefaultsFollowTheWidth) {
  // The bench width: 16-byte vectors, two per thread.
  const RowPlan b = plan({{"D", 4096}}, 2);
  EXPECT_EQ(b.vec, 8u);
  EXPECT_EQ(b.threads, 256u);
  EXPECT_EQ(b.rows, 1u);
  EXPECT_EQ(b.per_thread(), 2u);
  EXPECT_FALSE(b.ragged());
  const RowPlan f = plan({{"D", 4096}}, 4);
  EXPECT_EQ(f.vec, 4u);
  EXPECT_EQ(f.threads, 512u);
  // An odd width: scalar accesses; a narrow row shares its work-group with three others.
  const RowPlan odd = plan({{"D", 7}}, 2);
  EXPECT_EQ(odd.vec, 1u);
  EXPECT_EQ(odd.threads, 32u);
  EXPECT_EQ(odd.rows, 4u);
  EXPECT_TRUE(odd.ragged());
  EXPECT_EQ(odd.geometry(5).groups[0], 2u);  // rows 4..7 of the second group: one live, three tail teams
  // The widest row: 1024 threads of 64 values.
  const RowPlan wide = plan({{"D", 65536}}, 4);
  EXPECT_EQ(wide.threads, 1024u);
  EXPECT_EQ(wide.per_thread() * wide.vec, 64u);
  // A width of 2 x odd 16-bit values: 4-byte vectors.
  EXPECT_EQ(plan({{"D", 1000 + 2}}, 2).vec, 2u);
}

TEST(NormRowPlan, OptionsOverrideTheDefaults) {
  const RowPlan p = plan({{"D", 1000}, {"vec", 2}, {"threads", 64}, {"rows", 2}}, 4);
  EXPECT_EQ(p.vec, 2u);
  EXPECT_EQ(p.threads, 64u);
  EXPECT_EQ(p.rows, 2u);
  EXPECT_EQ(p.group(), 128u);
}

TEST(NormRowPlan, RefusesWhatCannotRun) {
  const auto refused = [](const harness::Params& p, std::uint32_t elem_bytes, const std::string& why) {
    try {
      (void)plan(p, elem_bytes);
      ADD_FAILURE() << "accepted " << harness::format_params(p);
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused({{"D", 0}}, 4, "D = 0 must be in [1, 65536]");
  refused({{"D", 65537}}, 2, "D = 65537 must be in [1, 65536]");
  refused({{"D", 96}, {"vec", 3}}, 4, "is not a 4-, 8- or 16-byte access");
  refused({{"D", 96}, {"vec", 8}}, 4, "is not a 4-, 8- or 16-byte access");
  refused({{"D", 7}, {"vec", 4}}, 4, "does not divide D = 7");
  refused({{"D", 4096}, {"threads", 48}}, 4, "must be a multiple of 32");
  refused({{"D", 65536}, {"threads", 32}}, 4, "more than the 64 a thread holds");
  refused({{"D", 65536}, {"rows", 2}}, 4, "must be at most 1024 threads per work-group");
  refused({{"D", 64}, {"threads", 2048}}, 4, "threads = 2048 must be in [32, 1024]");
}
