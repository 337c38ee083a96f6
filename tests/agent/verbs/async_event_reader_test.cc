// The async-event reader between a device's events and NicHealth, driven by a
// queue of events in place of the device's async fd.
#include "agent/verbs/async_event_reader.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <deque>
#include <map>
#include <vector>

#include "agent/verbs/device_async_events.h"

namespace hostmesh::agent::verbs {
namespace {

using namespace std::chrono_literals;

const MonoTime kT0 = MonoTime{} + 1000s;

class QueuedEvents final : public AsyncEventSource {
 public:
  std::deque<AsyncEvent> events;
  std::string fail_with;  // once the queue is empty
  int reads = 0;

  std::optional<AsyncEvent> Next(std::string* error) override {
    ++reads;
    if (events.empty()) {
      if (!fail_with.empty()) *error = fail_with;
      return std::nullopt;
    }
    const AsyncEvent event = events.front();
    events.pop_front();
    return event;
  }
};

// A NIC on port 1 with QPs 0x11 (receive, index 0) and 0x20, 0x21 (send).
AsyncEventScope Scope() {
  static const std::map<std::uint32_t, std::uint32_t> kIndex = {{0x11, 0}, {0x20, 1}, {0x21, 2}};
  return {"nic0",
          1,
          [](std::uint32_t qp_num) -> std::optional<std::uint32_t> {
            const auto it = kIndex.find(qp_num);
            if (it == kIndex.end()) return std::nullopt;
            return it->second;
          },
          {}};
}

std::uint64_t Count(const NicHealth& health, AsyncEventKind kind) {
  return health.counters().events[static_cast<std::size_t>(kind)];
}

TEST(AsyncEventReader, EachEventIsToldToTheFlightRecorderHook) {
  NicHealth health(3, true, kT0);
  QueuedEvents source;
  source.events.push_back({.type = IBV_EVENT_QP_FATAL, .qp_num = 0x21});
  source.events.push_back({.type = IBV_EVENT_PORT_ERR, .port = 1});
  AsyncEventScope scope = Scope();
  std::vector<std::pair<AsyncEventKind, std::optional<std::uint32_t>>> told;
  scope.on_event = [&](std::string_view name, AsyncEventKind kind,
                       std::optional<std::uint32_t> qp) {
    EXPECT_FALSE(name.empty());
    told.emplace_back(kind, qp);
  };
  EXPECT_EQ(DrainAsyncEvents(source, scope, health, kT0), 0u);
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[0].first, AsyncEventKind::kQpFatal);
  EXPECT_EQ(told[0].second, 2u);
  EXPECT_EQ(told[1].first, AsyncEventKind::kPortDown);
}

TEST(AsyncEventReader, DeviceFatalStopsTheNicAndSchedulesAReopen) {
  NicHealth health(3, true, kT0);
  QueuedEvents source;
  source.events.push_back({.type = IBV_EVENT_DEVICE_FATAL});
  EXPECT_EQ(DrainAsyncEvents(source, Scope(), health, kT0), 0u);
  EXPECT_TRUE(health.failed());
  EXPECT_FALSE(health.can_send());
  EXPECT_FALSE(health.ReopenDue(kT0));
  EXPECT_TRUE(health.ReopenDue(kT0 + NicHealthOptions{}.first_reopen));
  EXPECT_EQ(Count(health, AsyncEventKind::kDeviceFatal), 1u);
}

TEST(AsyncEventReader, AQpEventNamesItsQpByTheTransportsIndex) {
  NicHealth health(3, true, kT0);
  QueuedEvents source;
  source.events.push_back({.type = IBV_EVENT_QP_FATAL, .qp_num = 0x21});
  DrainAsyncEvents(source, Scope(), health, kT0);
  EXPECT_TRUE(health.qp_ready(0));
  EXPECT_TRUE(health.qp_ready(1));
  EXPECT_FALSE(health.qp_ready(2));
  EXPECT_EQ(health.RecoveryDue(kT0), std::vector<std::uint32_t>{2});
  EXPECT_TRUE(health.can_send());  // the NIC's other QPs go on
}

TEST(AsyncEventReader, AQpEventOfAnotherQpBreaksNoneOfTheNics) {
  NicHealth health(3, true, kT0);
  QueuedEvents source;
  source.events.push_back({.type = IBV_EVENT_QP_FATAL, .qp_num = 0x99});
  DrainAsyncEvents(source, Scope(), health, kT0);
  for (std::uint32_t qp = 0; qp < 3; ++qp) EXPECT_TRUE(health.qp_ready(qp)) << qp;
  EXPECT_TRUE(health.RecoveryDue(kT0).empty());
}

TEST(AsyncEventReader, OnlyItsOwnPortsEventsPauseAndResumeTheNic) {
  NicHealth health(1, true, kT0);
  QueuedEvents source;
  source.events.push_back({.type = IBV_EVENT_PORT_ERR, .port = 2});
  DrainAsyncEvents(source, Scope(), health, kT0);
  EXPECT_TRUE(health.port_up());
  EXPECT_EQ(Count(health, AsyncEventKind::kOther), 1u);
  EXPECT_EQ(Count(health, AsyncEventKind::kPortDown), 0u);

  source.events.push_back({.type = IBV_EVENT_PORT_ERR, .port = 1});
  DrainAsyncEvents(source, Scope(), health, kT0 + 1s);
  EXPECT_FALSE(health.port_up());
  EXPECT_FALSE(health.can_send());
  source.events.push_back({.type = IBV_EVENT_PORT_ACTIVE, .port = 1});
  DrainAsyncEvents(source, Scope(), health, kT0 + 2s);
  EXPECT_TRUE(health.can_send());
  EXPECT_EQ(health.counters().port_down_transitions, 1u);
}

TEST(AsyncEventReader, ReadsEveryPendingEventInOrder) {
  NicHealth health(1, true, kT0);
  QueuedEvents source;
  source.events = {{.type = IBV_EVENT_PORT_ERR, .port = 1},
                   {.type = IBV_EVENT_GID_CHANGE, .port = 1},
                   {.type = IBV_EVENT_PORT_ACTIVE, .port = 1}};
  EXPECT_EQ(DrainAsyncEvents(source, Scope(), health, kT0), 0u);
  EXPECT_TRUE(source.events.empty());
  EXPECT_EQ(source.reads, 4);     // three events, then "none pending"
  EXPECT_TRUE(health.port_up());  // down, then up again: the last one counts
  EXPECT_EQ(Count(health, AsyncEventKind::kOther), 1u);
}

TEST(AsyncEventReader, AFailedReadIsCountedAndKeepsWhatCameBefore) {
  NicHealth health(1, true, kT0);
  QueuedEvents source;
  source.events.push_back({.type = IBV_EVENT_CQ_ERR});
  source.fail_with = "ibv_get_async_event: Bad file descriptor";
  EXPECT_EQ(DrainAsyncEvents(source, Scope(), health, kT0), 1u);
  EXPECT_TRUE(health.failed());
  EXPECT_EQ(Count(health, AsyncEventKind::kCqError), 1u);
}

TEST(AsyncEventReader, IsQpEventAndIsPortEventSayWhereTheElementIs) {
  EXPECT_TRUE(IsQpEvent(IBV_EVENT_QP_FATAL));
  EXPECT_TRUE(IsQpEvent(IBV_EVENT_QP_LAST_WQE_REACHED));
  EXPECT_FALSE(IsQpEvent(IBV_EVENT_PORT_ERR));
  EXPECT_FALSE(IsQpEvent(IBV_EVENT_DEVICE_FATAL));
  EXPECT_TRUE(IsPortEvent(IBV_EVENT_PORT_ACTIVE));
  EXPECT_TRUE(IsPortEvent(IBV_EVENT_GID_CHANGE));
  EXPECT_FALSE(IsPortEvent(IBV_EVENT_CQ_ERR));
  EXPECT_FALSE(IsPortEvent(IBV_EVENT_DEVICE_FATAL));
}

TEST(AsyncEventReader, AnInjectedEventComesBeforeTheDevicesOwn) {
  // No device: only the injected events are read (the context is never
  // touched while one is queued).
  DeviceAsyncEvents source(nullptr);
  source.Inject({.type = IBV_EVENT_DEVICE_FATAL});
  source.Inject({.type = IBV_EVENT_PORT_ERR, .port = 1});
  std::string error;
  const auto first = source.Next(&error);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->type, IBV_EVENT_DEVICE_FATAL);
  const auto second = source.Next(&error);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->type, IBV_EVENT_PORT_ERR);
  EXPECT_EQ(second->port, 1);
  EXPECT_TRUE(error.empty());
}

}  // namespace
}  // namespace hostmesh::agent::verbs
