#include "common/base/proc_stats.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace hostmesh {
namespace {

TEST(ProcStats, ParsesCpuAndRss) {
  // A command name with spaces and parentheses must not shift the fields.
  const std::string stat =
      "4242 (host mesh) (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 "
      "12345 123456789 1000 18446744073709551615";
  const auto stats = ParseProcStat(stat, 100, 4096);
  ASSERT_TRUE(stats);
  EXPECT_DOUBLE_EQ(stats->cpu_seconds, 3.0);
  EXPECT_DOUBLE_EQ(stats->resident_bytes, 1000.0 * 4096);
  EXPECT_FALSE(ParseProcStat("4242 (short) S 1 2", 100, 4096));
  EXPECT_FALSE(ParseProcStat("no parenthesis", 100, 4096));
  EXPECT_TRUE(ReadSelfProcStats());
}

TEST(ProcStats, OpenFilesCountsThisProcessDescriptorsAgainstItsLimit) {
  const auto before = CountOpenFiles();
  ASSERT_TRUE(before);
  const int fd = ::dup(0);
  ASSERT_GE(fd, 0);
  const auto during = CountOpenFiles();
  ::close(fd);
  ASSERT_TRUE(during);
  EXPECT_EQ(*during, *before + 1);
  const auto limit = OpenFilesLimit();
  ASSERT_TRUE(limit);
  EXPECT_GT(*limit, *during);
}

}  // namespace
}  // namespace hostmesh
