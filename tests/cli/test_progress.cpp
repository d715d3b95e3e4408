// The progress line of long CLI runs (tools/ingot/progress.hpp): count, bar, estimate of the time left, width.
#include <gtest/gtest.h>

#include "../../tools/ingot/progress.hpp"

namespace ingot::tools {
namespace {

TEST(Progress, DurationsReadAsSecondsMinutesHours) {
  EXPECT_EQ(duration_text(0), "0s");
  EXPECT_EQ(duration_text(42.4), "42s");
  EXPECT_EQ(duration_text(185), "3m05s");
  EXPECT_EQ(duration_text(3720), "1h02m");
  EXPECT_EQ(duration_text(-3), "0s");
}

TEST(Progress, TheLineCountsAndEstimatesTheTimeLeft) {
  // 5 of 20 done in 10 s: 2 s each, 15 left -> 30 s.
  const std::string line = progress_line(5, 20, "depthwise_conv1d f16", 10.0, 200);
  EXPECT_NE(line.find("5/20"), std::string::npos) << line;
  EXPECT_NE(line.find("25%"), std::string::npos) << line;
  EXPECT_NE(line.find("eta 30s"), std::string::npos) << line;
  EXPECT_NE(line.find("[#####---------------]"), std::string::npos) << line;
  EXPECT_NE(line.find("depthwise_conv1d f16"), std::string::npos) << line;
}

TEST(Progress, NoEstimateBeforeTheFirstItemFinishes) {
  const std::string line = progress_line(0, 7, "silu", 3.0, 200);
  EXPECT_NE(line.find("0/7"), std::string::npos) << line;
  EXPECT_NE(line.find("eta --"), std::string::npos) << line;
}

TEST(Progress, TheLineFitsTheWidth) {
  const std::string label(300, 'x');
  for (std::size_t width : {10u, 40u, 79u}) EXPECT_LE(progress_line(3, 9, label, 1.0, width).size(), width);
  EXPECT_NE(progress_line(3, 9, "short", 1.0, 120).find("short"), std::string::npos);
}

}  // namespace
}  // namespace ingot::tools
