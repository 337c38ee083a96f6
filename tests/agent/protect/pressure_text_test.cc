// The kernel's pressure file formats, as Documentation/accounting/psi.rst and
// the cgroup v1/v2 docs give them.
#include "agent/protect/pressure_text.h"

#include <gtest/gtest.h>

namespace hostmesh::agent::protect {
namespace {

TEST(ParsePsi, ReadsSomeAndFullAvg10) {
  const auto psi = ParsePsi(
      "some avg10=72.50 avg60=30.00 avg300=5.01 total=123456789\n"
      "full avg10=12.25 avg60=3.00 avg300=0.50 total=2345\n");
  ASSERT_TRUE(psi);
  EXPECT_DOUBLE_EQ(psi->some_avg10, 72.5);
  EXPECT_DOUBLE_EQ(psi->full_avg10, 12.25);
}

TEST(ParsePsi, CpuFileWithoutFullLineIsFine) {
  const auto psi = ParsePsi("some avg10=0.08 avg60=0.34 avg300=0.74 total=2300788153\n");
  ASSERT_TRUE(psi);
  EXPECT_DOUBLE_EQ(psi->some_avg10, 0.08);
  EXPECT_DOUBLE_EQ(psi->full_avg10, 0.0);
}

TEST(ParsePsi, RefusesWhatIsNotPsi) {
  EXPECT_FALSE(ParsePsi(""));
  EXPECT_FALSE(ParsePsi("nr_periods 5\n"));
  EXPECT_FALSE(ParsePsi("some avg60=1.00 total=3\n"));       // no avg10
  EXPECT_FALSE(ParsePsi("some avg10=abc avg60=1.00\n"));     // not a number
  EXPECT_FALSE(ParsePsi("some avg10=250.00 avg60=1.00\n"));  // not a percentage
}

TEST(ParseCpuStat, ReadsV1NanosecondsAndV2Microseconds) {
  const auto v1 = ParseCpuStat("nr_periods 100\nnr_throttled 40\nthrottled_time 2000000000\n");
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->nr_periods, 100u);
  EXPECT_EQ(v1->nr_throttled, 40u);
  EXPECT_EQ(v1->throttled_ns, 2'000'000'000u);
  const auto v2 = ParseCpuStat(
      "usage_usec 5000\nuser_usec 4000\nsystem_usec 1000\nnr_periods 7\nnr_throttled 3\n"
      "throttled_usec 1500\n");
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->nr_periods, 7u);
  EXPECT_EQ(v2->nr_throttled, 3u);
  EXPECT_EQ(v2->throttled_ns, 1'500'000u);
}

TEST(ParseCpuStat, NoThrottlingFieldsIsNoStat) {
  // cgroup v2 without the cpu controller enabled lists only usage.
  EXPECT_FALSE(ParseCpuStat("usage_usec 5000\nuser_usec 4000\nsystem_usec 1000\n"));
}

TEST(ParseCgroup2Mount, FindsTheUnifiedHierarchyWhereverItIsMounted) {
  EXPECT_EQ(ParseCgroup2Mount("cgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate 0 0\n"),
            "/sys/fs/cgroup");
  EXPECT_EQ(ParseCgroup2Mount("sysfs /sys sysfs rw 0 0\n"
                              "cgroup2 /run/hostmesh-cgroup/hm- cgroup2 rw 0 0\n"),
            "/run/hostmesh-cgroup/hm-");
  EXPECT_EQ(ParseCgroup2Mount("cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n"), "");
}

TEST(ParseSchedstatWait, TheSecondFieldIsTheRunQueueWait) {
  EXPECT_EQ(ParseSchedstatWait("489159753 252032296 1747\n"), 252032296u);
  EXPECT_FALSE(ParseSchedstatWait("489159753\n"));
  EXPECT_FALSE(ParseSchedstatWait("1 x 3\n"));
}

TEST(ParseSelfCgroup, FindsUnifiedAndTheCpuControllersPath) {
  const CgroupPaths hybrid = ParseSelfCgroup(
      "12:memory:/process_api/abc\n"
      "3:cpu,cpuacct:/hm-cpu-1\n"
      "0::/system.slice/hostmesh-agent.service\n");
  EXPECT_EQ(hybrid.unified, "/system.slice/hostmesh-agent.service");
  EXPECT_EQ(hybrid.cpu_v1, "/hm-cpu-1");
  const CgroupPaths v1 = ParseSelfCgroup("4:cpuacct,cpu:/a/b\n2:cpuset:/x\n");
  EXPECT_EQ(v1.cpu_v1, "/a/b");
  EXPECT_EQ(v1.unified, "");
  // "cpuset" is not "cpu".
  EXPECT_EQ(ParseSelfCgroup("2:cpuset:/x\n").cpu_v1, "");
}

TEST(ParseCpuMount, FindsTheCgroupWhoseOptionsListCpu) {
  EXPECT_EQ(ParseCpuMount("tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n"
                          "cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0\n"
                          "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,cpu,cpuacct 0 0\n"),
            "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(ParseCpuMount("cgroup /mnt/my\\040cgroups cgroup rw,cpu 0 0\n"), "/mnt/my cgroups");
  EXPECT_EQ(ParseCpuMount("cgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate 0 0\n"), "");
  EXPECT_EQ(ParseCpuMount("cgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0\n"), "");
}

}  // namespace
}  // namespace hostmesh::agent::protect
