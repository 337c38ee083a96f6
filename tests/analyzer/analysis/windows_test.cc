// Event-time windows, the grace period, and hosts that come and go.

#include <gtest/gtest.h>

#include "tests/analyzer/analysis/fleet_test_base.h"

namespace hostmesh::analysis::testing {
namespace {

using WindowsTest = FleetTest;

TEST_F(WindowsTest, AbsentHostIsNotCountedAsDrops) {
  RunWindow(0, Faults{});
  const auto r = RunWindow(1, Faults{.absent = {7}});

  EXPECT_EQ(r.absent_hosts, std::vector<HostId>{7});
  EXPECT_EQ(r.present_hosts.size(), 7u);
  EXPECT_EQ(r.sla.cluster.timeouts, 0u);
  EXPECT_EQ(AnomalousRnics(r), 0);
  EXPECT_TRUE(r.loss.culprits.empty());
  for (const auto& h : r.sla.hosts) EXPECT_NE(h.host, 7u);
  const auto back = RunWindow(2, Faults{});  // and it may come back
  EXPECT_TRUE(back.absent_hosts.empty());
}

TEST_F(WindowsTest, LateBatchWithinGraceCounts) {
  const std::int64_t end = kT0 + 20 * kSecond;
  std::vector<ProbeRecord> held;  // host 4's uploads, stuck behind a slow link
  fleet_.Probe(kT0, 20, Faults{}, [&](const ProbeRecord& p) {
    if (p.host == 4) {
      held.push_back(p);
    } else {
      analysis_.AddResult(p);
    }
  });
  EXPECT_TRUE(analysis_.Advance(end + 5 * kSecond).empty());  // still within grace
  // Later results of other hosts (next window) arrive before host 4's batch.
  fleet_.Probe(end, 5, Faults{}, [&](const ProbeRecord& p) { analysis_.AddResult(p); });
  for (const auto& p : held) EXPECT_EQ(analysis_.AddResult(p), AddStatus::kAccepted);
  const auto reports = analysis_.Advance(end + 10 * kSecond);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports.front().sla.cluster.probes, 8u * 4 * 200);
  EXPECT_TRUE(reports.front().absent_hosts.empty());

  // After the window was judged, a result for it is late: counted, not analysed.
  EXPECT_EQ(analysis_.AddResult(held.front()), AddStatus::kLate);
  EXPECT_EQ(analysis_.stats().late, 1u);
}

TEST_F(WindowsTest, WindowIsJudgedByTheWatermarkNotByArrival) {
  fleet_.Probe(kT0, 20, Faults{}, [&](const ProbeRecord& p) { analysis_.AddResult(p); });
  // Results of the next window do not close this one.
  fleet_.Probe(kT0 + 20 * kSecond, 20, Faults{},
               [&](const ProbeRecord& p) { analysis_.AddResult(p); });
  EXPECT_EQ(analysis_.open_windows(), 2u);
  EXPECT_TRUE(analysis_.Advance(kT0 + 29 * kSecond).empty());
  EXPECT_EQ(analysis_.Advance(kT0 + 30 * kSecond).size(), 1u);
  EXPECT_EQ(analysis_.Advance(kT0 + 50 * kSecond).size(), 1u);
  EXPECT_EQ(analysis_.stats().windows_judged, 2u);
}

TEST_F(WindowsTest, RefusesFutureAndInvalidResults) {
  analysis_.Advance(kT0);
  ProbeRecord r{.host = 0, .src_nic = 0, .dst_nic = 1, .send_time_ns = kT0 + 120 * kSecond};
  EXPECT_EQ(analysis_.AddResult(r), AddStatus::kFuture);
  r.send_time_ns = kT0 + kSecond;
  r.dst_nic = 0;
  EXPECT_EQ(analysis_.AddResult(r), AddStatus::kInvalid);
  r.dst_nic = kMaxNics;
  EXPECT_EQ(analysis_.AddResult(r), AddStatus::kInvalid);
  r.dst_nic = 1;
  EXPECT_EQ(analysis_.AddResult(r), AddStatus::kAccepted);
}

TEST_F(WindowsTest, SendFailuresAreCountedApartNotAsLoss) {
  // Host 2's NIC 1 cannot send (port down, QP in error): its probes never left
  // the host. Were they read as timeouts, NIC 1's rail would look lossy.
  std::uint64_t failed = 0, offered = 0;
  fleet_.Probe(kT0, 20, Faults{}, [&](ProbeRecord p) {
    ++offered;
    if (p.host == 2 && p.src_nic == 1) {
      p.send_failed = true;
      p.timeout = false;
      p.t2_nic_send_ns = p.t3_nic_recv_ns = p.t4_app_recv_ns = 0;
      EXPECT_EQ(analysis_.AddResult(p), AddStatus::kSendFailed);
      ++failed;
      return;
    }
    EXPECT_EQ(analysis_.AddResult(p), AddStatus::kAccepted);
  });
  ASSERT_GT(failed, 0u);
  const auto reports = analysis_.Advance(kT0 + 30 * kSecond);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(analysis_.stats().send_failed, failed);
  EXPECT_EQ(reports.front().sla.cluster.probes, offered - failed);
  EXPECT_EQ(reports.front().sla.cluster.timeouts, 0u);
  EXPECT_TRUE(reports.front().loss.culprits.empty());
  EXPECT_EQ(AnomalousRnics(reports.front()), 0);
}

}  // namespace
}  // namespace hostmesh::analysis::testing
