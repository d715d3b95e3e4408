// The SM occupancy model (cuda_occupancy.hpp): the limits of NVIDIA's occupancy calculator for sm_90, checked on
// kernels whose residency the H200 and NVRTC have shown (docs/performance.md), and ptxas's report parsed.
#include <gtest/gtest.h>

#include "ingot/runtime/cuda_occupancy.hpp"

using namespace ingot::runtime;

TEST(CudaOccupancy, Sm90Limits) {
  const auto l = cuda_sm_limits("sm_90");
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->units, 132);
  EXPECT_EQ(l->shared_bytes, 233472u);
  EXPECT_EQ(cuda_sm_limits("sm_80")->units, 108);
  EXPECT_FALSE(cuda_sm_limits("sm_75").has_value());
}

TEST(CudaOccupancy, EachLimitBinds) {
  const CudaSmLimits l = *cuda_sm_limits("sm_90");
  // The NHWC 7x7 16-bit ring kernel: 256 threads, 64 registers, 40896 bytes: 4 per SM by registers (step 30).
  CudaOccupancy o = cuda_occupancy(l, 256, 64, 40896);
  EXPECT_EQ(o.groups, 4);
  EXPECT_EQ(o.limiter, "registers");
  // The NCHW 7x7 row-pair kernel: 128 threads, 72 registers: 7 per SM (step 24).
  EXPECT_EQ(cuda_occupancy(l, 128, 72, 24416).groups, 7);
  // Registers are allocated per warp in units of 256: 65 registers take 72 per thread's worth (2304 per warp).
  EXPECT_EQ(cuda_occupancy(l, 256, 65, 0).groups, cuda_occupancy(l, 256, 72, 0).groups);
  EXPECT_EQ(cuda_occupancy(l, 256, 72, 0).groups, 3);
  // Shared memory: 1 KB reserved per work-group, 128-byte granules.
  o = cuda_occupancy(l, 64, 32, std::uint64_t{57} * 1024);
  EXPECT_EQ(o.groups, 3);  // 233472 / (58368 + 1024)
  EXPECT_EQ(o.limiter, "shared memory");
  EXPECT_EQ(cuda_occupancy(l, 64, 32, std::uint64_t{233472} / 4 - 1024).groups, 4);
  EXPECT_EQ(cuda_occupancy(l, 64, 32, std::uint64_t{233472} / 4 - 1023).groups, 3);  // one byte more: a granule more
  // Threads and the work-group count.
  o = cuda_occupancy(l, 1024, 32, 0);
  EXPECT_EQ(o.groups, 2);
  EXPECT_EQ(o.limiter, "threads");
  o = cuda_occupancy(l, 32, 16, 0);
  EXPECT_EQ(o.groups, 32);
  EXPECT_EQ(o.limiter, "work-groups per SM");
  EXPECT_EQ(cuda_occupancy(l, 33, 16, 0).groups, 32);  // (a partial warp costs a whole one: 2 warps, 32 groups)
  // A kernel no SM can hold: 0.
  EXPECT_EQ(cuda_occupancy(l, 64, 32, 240000).groups, 0);
  EXPECT_THROW((void)cuda_occupancy(l, 0, 32, 0), std::invalid_argument);
  EXPECT_THROW((void)cuda_occupancy(l, 4096, 32, 0), std::invalid_argument);
  EXPECT_THROW((void)cuda_occupancy(l, 64, 256, 0), std::invalid_argument);
}

TEST(CudaOccupancy, PtxasReportIsParsed) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Function properties for k\n"
      "ptxas         .     0 bytes stack frame, 16 bytes spill stores, 16 bytes spill loads\n"
      "ptxas info    : Used 64 registers, used 1 barriers, 40896 bytes smem, 380 bytes cmem[0]\n";
  const auto u = parse_ptxas_usage(log);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->registers, 64);
  EXPECT_EQ(u->shared_bytes, 40896u);
  EXPECT_EQ(u->spill_store_bytes, 16u);
  const auto none = parse_ptxas_usage("ptxas info    : Used 30 registers, used 0 barriers, 380 bytes cmem[0]\n");
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->registers, 30);
  EXPECT_EQ(none->shared_bytes, 0u);
  EXPECT_FALSE(parse_ptxas_usage("no report").has_value());
}
