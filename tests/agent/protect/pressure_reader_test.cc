// The reader on fake /proc and /sys/fs/cgroup trees: which files it finds,
// the throttled share between reads, an agent moved to another cgroup, and
// files that are there but do not read.
#include "agent/protect/pressure_reader.h"

#include <gtest/gtest.h>

#include "tests/agent/telemetry/fake_sysfs.h"

namespace hostmesh::agent::protect {
namespace {

using telemetry::testing::FakeSysfs;
using namespace std::chrono_literals;

MonoTime At(std::chrono::nanoseconds t) {
  return MonoTime{} + t;
}

std::string Psi(const std::string& avg10) {
  return "some avg10=" + avg10 + " avg60=1.00 avg300=0.50 total=100\n";
}

std::string V1Stat(int periods, int throttled) {
  return "nr_periods " + std::to_string(periods) + "\nnr_throttled " + std::to_string(throttled) +
         "\nthrottled_time 123\n";
}

TEST(PressureReader, HostPsiOnlyWhenTheAgentIsInTheRootCgroup) {
  FakeSysfs fs;
  fs.Write("proc/pressure/cpu", Psi("42.00"));
  fs.Write("proc/pressure/memory", Psi("3.50") + "full avg10=1.00 avg60=0 avg300=0 total=1\n");
  fs.Write("proc/self/cgroup", "3:cpu,cpuacct:/\n0::/\n");
  fs.Write("sys/fs/cgroup/cpu/cpu.stat", V1Stat(10, 5));  // the root's: the host's, not ours
  PressureReader reader(fs.root());
  const PressureSample s = reader.Read(At(1s));
  ASSERT_TRUE(s.cpu);
  EXPECT_DOUBLE_EQ(*s.cpu, 42.0);
  ASSERT_TRUE(s.memory);
  EXPECT_DOUBLE_EQ(*s.memory, 3.5);
  EXPECT_FALSE(s.cgroup_cpu);
  EXPECT_FALSE(s.cgroup_throttled);
  EXPECT_EQ(reader.Describe(), "host cpu PSI, host memory PSI");
  EXPECT_EQ(reader.read_errors(), 0u);
}

TEST(PressureReader, V1ThrottledShareIsOverThePeriodsSinceTheLastRead) {
  FakeSysfs fs;
  fs.Write("proc/self/cgroup", "3:cpu,cpuacct:/hm-cpu-7\n0::/\n");
  fs.Write("sys/fs/cgroup/cpu/hm-cpu-7/cpu.stat", V1Stat(100, 10));
  PressureReader reader(fs.root());
  EXPECT_FALSE(reader.Read(At(2s)).cgroup_throttled) << "no share before a second read";
  fs.Write("sys/fs/cgroup/cpu/hm-cpu-7/cpu.stat", V1Stat(120, 28));
  const auto share = reader.Read(At(3s)).cgroup_throttled;
  ASSERT_TRUE(share);
  EXPECT_DOUBLE_EQ(*share, 90.0);  // 18 of 20 periods
  // No period ran (the cgroup never wanted the CPU): nothing throttled.
  EXPECT_DOUBLE_EQ(reader.Read(At(4s)).cgroup_throttled.value_or(-1), 0.0);
  EXPECT_FALSE(reader.Read(At(5s)).cpu) << "no host PSI in this tree";
}

// A network namespace's `ip netns exec` mounts its own sysfs over /sys: the
// cgroups are then only where a bind mount put them, which /proc/self/mounts
// tells (the testbed's fabric does this for its agents).
TEST(PressureReader, FindsTheCpuHierarchyWhereTheMountsSayItIs) {
  FakeSysfs fs;
  fs.Write("proc/self/cgroup", "3:cpu,cpuacct:/hostmesh-hm-f2\n0::/\n");
  fs.Write("proc/self/mounts",
           "sysfs /sys sysfs rw 0 0\n"
           "cgroup /run/hostmesh-cgroup/hm- cgroup rw,relatime,cpu 0 0\n");
  fs.Write("run/hostmesh-cgroup/hm-/hostmesh-hm-f2/cpu.stat", V1Stat(10, 0));
  PressureReader reader(fs.root());
  reader.Read(At(1s));
  fs.Write("run/hostmesh-cgroup/hm-/hostmesh-hm-f2/cpu.stat", V1Stat(30, 20));
  const auto share = reader.Read(At(3s)).cgroup_throttled;
  ASSERT_TRUE(share);
  EXPECT_DOUBLE_EQ(*share, 100.0);
}

TEST(PressureReader, FollowsTheAgentIntoAnotherCgroup) {
  FakeSysfs fs;
  fs.Write("proc/self/cgroup", "0::/\n");
  fs.Write("sys/fs/cgroup/agents/cpu.pressure", Psi("80.00"));
  fs.Write("sys/fs/cgroup/agents/memory.pressure", Psi("1.00"));
  fs.Write("sys/fs/cgroup/agents/cpu.stat",
           "usage_usec 1\nnr_periods 10\nnr_throttled 0\n"
           "throttled_usec 0\n");
  PressureReader reader(fs.root());
  EXPECT_FALSE(reader.Read(At(6s)).cgroup_cpu);
  fs.Write("proc/self/cgroup", "0::/agents\n");  // moved (systemd, a test's cgroup)
  PressureSample s = reader.Read(At(7s));
  ASSERT_TRUE(s.cgroup_cpu);
  EXPECT_DOUBLE_EQ(*s.cgroup_cpu, 80.0);
  ASSERT_TRUE(s.cgroup_memory);
  EXPECT_DOUBLE_EQ(*s.cgroup_memory, 1.0);
  fs.Write("sys/fs/cgroup/agents/cpu.stat",
           "usage_usec 1\nnr_periods 14\nnr_throttled 1\n"
           "throttled_usec 9\n");
  s = reader.Read(At(8s));
  ASSERT_TRUE(s.cgroup_throttled);
  EXPECT_DOUBLE_EQ(*s.cgroup_throttled, 25.0);
}

TEST(PressureReader, FilesThatDoNotReadAreCountedAndLeftOut) {
  FakeSysfs fs;
  fs.Write("proc/pressure/cpu", Psi("10.00"));
  fs.Write("proc/pressure/memory", "garbage\n");
  PressureReader reader(fs.root());
  PressureSample s = reader.Read(At(9s));
  EXPECT_TRUE(s.cpu);
  EXPECT_FALSE(s.memory);
  EXPECT_EQ(reader.read_errors(), 1u);
  fs.MakeUnreadable("proc/pressure/cpu");
  s = reader.Read(At(10s));
  EXPECT_FALSE(s.cpu);
  EXPECT_EQ(reader.read_errors(), 3u);
}

std::string Schedstat(std::uint64_t run_ns, std::uint64_t wait_ns) {
  return std::to_string(run_ns) + " " + std::to_string(wait_ns) + " 42\n";
}

// The agent's own wait for a CPU, summed over its threads, over the time
// between reads: what a throttled or crowded agent feels, where no cgroup
// file can be seen (a network namespace's sysfs hides /sys/fs/cgroup).
TEST(PressureReader, SelfCpuWaitSumsTheThreadsWaitsOverTheInterval) {
  FakeSysfs fs;
  fs.Write("proc/self/task/100/schedstat", Schedstat(5'000'000, 1'000'000'000));
  fs.Write("proc/self/task/101/schedstat", Schedstat(1'000, 2'000'000'000));
  PressureReader reader(fs.root());
  EXPECT_FALSE(reader.Read(At(10s)).self_cpu_wait) << "nothing to compare the first read with";
  // 2 s later: thread 100 waited 0.9 s more, 101 exited, 102 is new and waited 0.1 s.
  fs.Write("proc/self/task/100/schedstat", Schedstat(6'000'000, 1'900'000'000));
  fs.Remove("proc/self/task/101");
  fs.Write("proc/self/task/102/schedstat", Schedstat(1'000, 100'000'000));
  auto wait = reader.Read(At(12s)).self_cpu_wait;
  ASSERT_TRUE(wait);
  EXPECT_DOUBLE_EQ(*wait, 50.0);  // 1 s of 2
  // Several threads waiting at once can sum past the interval: capped.
  fs.Write("proc/self/task/100/schedstat", Schedstat(6'000'000, 3'900'000'000));
  fs.Write("proc/self/task/102/schedstat", Schedstat(1'000, 2'100'000'000));
  wait = reader.Read(At(14s)).self_cpu_wait;
  ASSERT_TRUE(wait);
  EXPECT_DOUBLE_EQ(*wait, 100.0);
  EXPECT_NE(reader.Describe().find("CPU wait"), std::string::npos);
}

// protect.signals: what is not watched is neither read nor described.
TEST(PressureReader, ReadsOnlyTheWatchedSignals) {
  FakeSysfs fs;
  fs.Write("proc/pressure/cpu", Psi("42.00"));
  fs.Write("proc/self/task/100/schedstat", Schedstat(1, 2));
  fs.Write("proc/self/cgroup", "3:cpu,cpuacct:/hm\n0::/\n");
  fs.Write("sys/fs/cgroup/cpu/hm/cpu.stat", V1Stat(10, 5));
  SignalMask only_cgroup{};
  only_cgroup[kCgroupThrottled] = true;
  PressureReader reader(fs.root(), only_cgroup);
  reader.Read(At(1s));
  fs.Write("sys/fs/cgroup/cpu/hm/cpu.stat", V1Stat(20, 15));
  const PressureSample s = reader.Read(At(3s));
  EXPECT_FALSE(s.cpu);
  EXPECT_FALSE(s.self_cpu_wait);
  EXPECT_DOUBLE_EQ(s.cgroup_throttled.value_or(-1), 100.0);
  EXPECT_EQ(reader.Describe(), (fs.root() / "sys/fs/cgroup/cpu/hm/cpu.stat").string());
}

TEST(PressureReader, NothingToReadIsBlindNotAnError) {
  FakeSysfs fs;
  PressureReader reader(fs.root());
  const PressureSample s = reader.Read(At(11s));
  EXPECT_FALSE(s.cpu || s.memory || s.cgroup_cpu || s.cgroup_memory || s.cgroup_throttled);
  EXPECT_EQ(reader.Describe(), "");
  EXPECT_EQ(reader.read_errors(), 0u);
}

}  // namespace
}  // namespace hostmesh::agent::protect
