// The async-event state machine of one RNIC, driven with a fake clock and a
// fake device that plays the transport's part: it resets the QPs NicHealth
// names and answers port queries.
#include "agent/verbs/nic_health.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <map>
#include <vector>

namespace hostmesh::agent::verbs {
namespace {

using namespace std::chrono_literals;

const MonoTime kT0 = MonoTime{} + 1000s;

// What the transport does with NicHealth each Poll, against a fake device.
struct FakeDevice {
  bool port_active = true;
  std::map<std::uint32_t, int> resets_failing;  // qp -> resets that fail before one works
  std::vector<std::uint32_t> resets;            // QPs reset, in order
  int port_queries = 0;

  void Turn(NicHealth& health, MonoTime now) {
    if (health.PortCheckDue(now)) {
      ++port_queries;
      health.OnPortState(port_active, now);
    }
    for (std::uint32_t qp : health.RecoveryDue(now)) {
      resets.push_back(qp);
      int& failing = resets_failing[qp];
      const bool ok = failing == 0;
      if (!ok) --failing;
      health.OnRecovery(qp, ok, now);
    }
  }
};

TEST(NicHealth, ClassifiesTheEventsThatMatter) {
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_PORT_ACTIVE), AsyncEventKind::kPortActive);
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_PORT_ERR), AsyncEventKind::kPortDown);
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_QP_FATAL), AsyncEventKind::kQpFatal);
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_QP_REQ_ERR), AsyncEventKind::kQpFatal);
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_QP_ACCESS_ERR), AsyncEventKind::kQpFatal);
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_CQ_ERR), AsyncEventKind::kCqError);
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_DEVICE_FATAL), AsyncEventKind::kDeviceFatal);
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_GID_CHANGE), AsyncEventKind::kOther);
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_LID_CHANGE), AsyncEventKind::kOther);
  for (std::size_t k = 0; k < kAsyncEventKindCount; ++k) {
    EXPECT_FALSE(AsyncEventKindName(static_cast<AsyncEventKind>(k)).empty());
  }
  EXPECT_EQ(AsyncEventKindName(AsyncEventKind::kQpFatal), "qp_fatal");
}

TEST(NicHealth, AFatalQpIsResetAtOnceAndSendsResume) {
  NicHealth health(3, true, kT0);
  FakeDevice device;
  EXPECT_TRUE(health.qp_ready(2));
  health.OnEvent(AsyncEventKind::kQpFatal, 2, kT0);
  EXPECT_FALSE(health.qp_ready(2));
  EXPECT_TRUE(health.qp_ready(0));
  EXPECT_TRUE(health.can_send());  // the other QPs still send
  EXPECT_EQ(health.NextDue(), kT0);
  device.Turn(health, kT0);
  EXPECT_EQ(device.resets, std::vector<std::uint32_t>{2});
  EXPECT_TRUE(health.qp_ready(2));
  EXPECT_EQ(health.counters().qp_recoveries, 1u);
  EXPECT_EQ(health.counters().events[static_cast<std::size_t>(AsyncEventKind::kQpFatal)], 1u);
  EXPECT_FALSE(health.NextDue());
}

TEST(NicHealth, AQpFoundInErrorIsRecoveredAndCountedApart) {
  NicHealth health(2, true, kT0);
  FakeDevice device;
  health.OnQpFoundInError(1, kT0);
  health.OnQpFoundInError(1, kT0);  // once is enough
  EXPECT_FALSE(health.qp_ready(1));
  device.Turn(health, kT0);
  EXPECT_EQ(device.resets, std::vector<std::uint32_t>{1});
  EXPECT_EQ(health.counters().qp_errors_found, 1u);
  EXPECT_EQ(health.counters().events[static_cast<std::size_t>(AsyncEventKind::kQpFatal)], 0u);
}

TEST(NicHealth, AFailingResetBacksOffDoublingToTheCap) {
  NicHealthOptions options;
  options.first_retry = 100ms;
  options.max_retry = 500ms;
  NicHealth health(1, true, kT0, options);
  FakeDevice device;
  device.resets_failing[0] = 4;
  health.OnEvent(AsyncEventKind::kQpFatal, 0, kT0);
  std::vector<MonoTime> tried;
  for (auto t = kT0; t <= kT0 + 3s; t += 10ms) {
    const std::size_t before = device.resets.size();
    device.Turn(health, t);
    if (device.resets.size() > before) tried.push_back(t);
  }
  // At once, then +100, +200, +400 and +500 (capped) ms; the fifth works.
  ASSERT_EQ(tried.size(), 5u);
  EXPECT_EQ(tried[1] - tried[0], 100ms);
  EXPECT_EQ(tried[2] - tried[1], 200ms);
  EXPECT_EQ(tried[3] - tried[2], 400ms);
  EXPECT_EQ(tried[4] - tried[3], 500ms);
  EXPECT_TRUE(health.qp_ready(0));
  EXPECT_EQ(health.counters().qp_recovery_failures, 4u);
  EXPECT_EQ(health.counters().qp_recoveries, 1u);
}

TEST(NicHealth, APortDownPausesSendingAndQpsWaitForItToComeBack) {
  NicHealth health(2, true, kT0);
  FakeDevice device;
  health.OnEvent(AsyncEventKind::kPortDown, std::nullopt, kT0);
  device.port_active = false;
  EXPECT_FALSE(health.can_send());
  EXPECT_EQ(health.counters().port_down_transitions, 1u);
  // A QP that breaks while the port is down is not reset into a dead port.
  health.OnEvent(AsyncEventKind::kQpFatal, 1, kT0 + 1ms);
  device.Turn(health, kT0 + 2ms);
  EXPECT_TRUE(device.resets.empty());
  EXPECT_EQ(health.NextDue(), kT0 + 1s);  // the port recheck
  health.OnEvent(AsyncEventKind::kPortActive, std::nullopt, kT0 + 5s);
  device.port_active = true;
  EXPECT_TRUE(health.can_send());
  device.Turn(health, kT0 + 5s);
  EXPECT_EQ(device.resets, std::vector<std::uint32_t>{1});
  EXPECT_TRUE(health.qp_ready(1));
  EXPECT_EQ(device.port_queries, 0);  // the event said it
}

TEST(NicHealth, AMissedPortActiveIsFoundByQueryingWhileDown) {
  NicHealth health(1, false, kT0);  // opened with the port down
  FakeDevice device;
  device.port_active = false;
  EXPECT_FALSE(health.can_send());
  device.Turn(health, kT0 + 500ms);
  EXPECT_EQ(device.port_queries, 0);
  device.Turn(health, kT0 + 1s);
  EXPECT_EQ(device.port_queries, 1);
  EXPECT_FALSE(health.can_send());
  device.port_active = true;  // came up; its event went missing
  device.Turn(health, kT0 + 1500ms);
  EXPECT_EQ(device.port_queries, 1);
  device.Turn(health, kT0 + 2s);
  EXPECT_EQ(device.port_queries, 2);
  EXPECT_TRUE(health.can_send());
  EXPECT_EQ(health.counters().port_down_transitions, 0u);  // it never was up before
  device.Turn(health, kT0 + 10s);
  EXPECT_EQ(device.port_queries, 2);  // no queries while up
}

TEST(NicHealth, CqErrorOrDeviceFatalStopsTheNicUntilReopened) {
  for (const AsyncEventKind kind : {AsyncEventKind::kCqError, AsyncEventKind::kDeviceFatal}) {
    NicHealthOptions options;
    options.first_reopen = 1s;
    NicHealth health(1, true, kT0, options);
    FakeDevice device;
    health.OnEvent(AsyncEventKind::kQpFatal, 0, kT0);
    health.OnEvent(kind, std::nullopt, kT0);
    EXPECT_TRUE(health.failed());
    EXPECT_FALSE(health.can_send());
    // No QP resets and no port queries on a dead device; a port event does not revive it.
    device.Turn(health, kT0 + 999ms);
    EXPECT_TRUE(device.resets.empty());
    EXPECT_EQ(device.port_queries, 0);
    health.OnEvent(AsyncEventKind::kPortActive, std::nullopt, kT0 + 999ms);
    EXPECT_FALSE(health.can_send());
    EXPECT_FALSE(health.ReopenDue(kT0 + 999ms));
    EXPECT_EQ(health.NextDue(), kT0 + 1s);
    ASSERT_TRUE(health.ReopenDue(kT0 + 1s));
    // Reopened with 3 fresh QPs (the old QP's pending reset is gone with it).
    health.OnReopen(true, 3, true, kT0 + 1s);
    EXPECT_FALSE(health.failed());
    EXPECT_TRUE(health.can_send());
    EXPECT_TRUE(health.qp_ready(0));
    EXPECT_TRUE(health.qp_ready(2));
    EXPECT_FALSE(health.NextDue());
    EXPECT_EQ(health.counters().reopens, 1u);
    EXPECT_EQ(health.counters().reopen_failures, 0u);
    EXPECT_EQ(health.counters().events[static_cast<std::size_t>(kind)], 1u);
  }
}

// What the transport does when ReopenDue: close, open, report (virtual time).
TEST(NicHealth, AFailingReopenBacksOffDoublingToTheCap) {
  NicHealthOptions options;
  options.first_reopen = 1s;
  options.max_reopen = 5s;
  NicHealth health(1, true, kT0, options);
  health.OnEvent(AsyncEventKind::kDeviceFatal, std::nullopt, kT0);
  int failing = 4;  // the device comes back at the fifth attempt
  std::vector<MonoTime> tried;
  for (auto t = kT0; t <= kT0 + 30s; t += 100ms) {
    if (!health.ReopenDue(t)) continue;
    tried.push_back(t);
    const bool ok = failing-- == 0;
    health.OnReopen(ok, 1, /*port_up=*/false, t);
  }
  // +1 s, then +1, +2, +4 and +5 (capped) s.
  ASSERT_EQ(tried.size(), 5u);
  EXPECT_EQ(tried[0] - kT0, 1s);
  EXPECT_EQ(tried[1] - tried[0], 1s);
  EXPECT_EQ(tried[2] - tried[1], 2s);
  EXPECT_EQ(tried[3] - tried[2], 4s);
  EXPECT_EQ(tried[4] - tried[3], 5s);
  EXPECT_EQ(health.counters().reopen_failures, 4u);
  EXPECT_EQ(health.counters().reopens, 1u);
  // Reopened with its port down: paused, and the port is queried again.
  EXPECT_FALSE(health.failed());
  EXPECT_FALSE(health.can_send());
  EXPECT_EQ(health.NextDue(), tried[4] + options.port_recheck);
}

TEST(NicHealth, ASecondErrorWhileFailedKeepsTheReopenSchedule) {
  NicHealthOptions options;
  options.first_reopen = 1s;
  NicHealth health(1, true, kT0, options);
  health.OnEvent(AsyncEventKind::kCqError, std::nullopt, kT0);
  health.OnReopen(false, 1, true, kT0 + 1s);  // next at +1 s more
  health.OnEvent(AsyncEventKind::kDeviceFatal, std::nullopt, kT0 + 1500ms);
  EXPECT_EQ(health.NextDue(), kT0 + 2s);
  // A reopen outcome when nothing failed is ignored.
  NicHealth fine(1, true, kT0, options);
  fine.OnReopen(true, 4, true, kT0);
  EXPECT_EQ(fine.counters().reopens, 0u);
  EXPECT_FALSE(fine.qp_ready(3));
}

TEST(NicHealth, OtherEventsAndUnknownQpsAreOnlyCounted) {
  NicHealth health(1, true, kT0);
  health.OnEvent(AsyncEventKind::kOther, std::nullopt, kT0);
  health.OnEvent(AsyncEventKind::kQpFatal, 7, kT0);  // not one of ours
  health.OnEvent(AsyncEventKind::kQpFatal, std::nullopt, kT0);
  EXPECT_TRUE(health.can_send());
  EXPECT_TRUE(health.qp_ready(0));
  EXPECT_FALSE(health.NextDue());
  EXPECT_EQ(health.counters().events[static_cast<std::size_t>(AsyncEventKind::kOther)], 1u);
  EXPECT_EQ(health.counters().events[static_cast<std::size_t>(AsyncEventKind::kQpFatal)], 2u);
  health.OnRecovery(0, true, kT0);  // a stray outcome changes nothing
  EXPECT_EQ(health.counters().qp_recoveries, 0u);
}

}  // namespace
}  // namespace hostmesh::agent::verbs
