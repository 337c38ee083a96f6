// Which capture requests of the analyzer the agent answers: once per
// incident, a burst then a rate, only sane ranges. Virtual time, no sleeping.
#include "agent/recorder/capture_policy.h"

#include <gtest/gtest.h>

#include "agent/recorder/capture_desk.h"

namespace hostmesh::agent::recorder {
namespace {

using std::chrono::seconds;

v1::CaptureRequest Request(std::uint64_t id, std::int64_t from = 1000, std::int64_t to = 2000) {
  v1::CaptureRequest r;
  r.set_incident_id(id);
  r.set_from_ns(from);
  r.set_to_ns(to);
  return r;
}

TEST(CapturePolicyTest, EachIncidentIsAnsweredOnce) {
  const MonoTime t0{};
  CapturePolicy policy({}, t0);
  std::string why;
  EXPECT_EQ(policy.Decide(Request(5), t0, &why), CaptureVerdict::kAccept);
  EXPECT_EQ(policy.Decide(Request(5), t0 + seconds{60}, &why), CaptureVerdict::kDuplicate);
  EXPECT_NE(why.find("incident 5"), std::string::npos);
}

TEST(CapturePolicyTest, ABurstThenTheRate) {
  const MonoTime t0{};
  CapturePolicy policy({.per_minute = 2, .burst = 3}, t0);
  std::string why;
  for (std::uint64_t id = 1; id <= 3; ++id) {
    EXPECT_EQ(policy.Decide(Request(id), t0, &why), CaptureVerdict::kAccept) << id;
  }
  EXPECT_EQ(policy.Decide(Request(4), t0, &why), CaptureVerdict::kRateLimited);
  // Refused for the rate, not remembered: asked again later it is answered.
  EXPECT_EQ(policy.Decide(Request(4), t0 + seconds{29}, &why), CaptureVerdict::kRateLimited);
  EXPECT_EQ(policy.Decide(Request(4), t0 + seconds{31}, &why), CaptureVerdict::kAccept);
  EXPECT_EQ(policy.Decide(Request(5), t0 + seconds{31}, &why), CaptureVerdict::kRateLimited);
}

TEST(CapturePolicyTest, BadRequestsAreInvalid) {
  const MonoTime t0{};
  CapturePolicy policy({.max_range = seconds{600}}, t0);
  std::string why;
  EXPECT_EQ(policy.Decide(Request(0), t0, &why), CaptureVerdict::kInvalid);
  EXPECT_EQ(policy.Decide(Request(1, 2000, 2000), t0, &why), CaptureVerdict::kInvalid);
  EXPECT_EQ(policy.Decide(Request(2, 3000, 2000), t0, &why), CaptureVerdict::kInvalid);
  EXPECT_EQ(policy.Decide(Request(3, INT64_MIN, INT64_MAX), t0, &why), CaptureVerdict::kInvalid);
  EXPECT_NE(why.find("longer than 600 s"), std::string::npos);
  EXPECT_EQ(policy.Decide(Request(3), t0, &why), CaptureVerdict::kDuplicate);
}

TEST(CapturePolicyTest, RemembersABoundedNumberOfIncidents) {
  const MonoTime t0{};
  CapturePolicy policy({.per_minute = 1e6, .burst = 1e6, .remembered = 2}, t0);
  std::string why;
  for (std::uint64_t id = 1; id <= 3; ++id) policy.Decide(Request(id), t0, &why);
  EXPECT_EQ(policy.Decide(Request(1), t0, &why), CaptureVerdict::kAccept);  // forgotten
  EXPECT_EQ(policy.Decide(Request(3), t0, &why), CaptureVerdict::kDuplicate);
}

TEST(CaptureDeskTest, CountsRequestsUploadsAndRefusalsByReason) {
  VirtualClock clock;
  FlightRecorder rec(clock, 4096);
  ProbeResult r;
  r.send_time_ns = 1500;
  rec.RecordProbe(r);
  CaptureDesk desk(rec, {.per_minute = 1, .burst = 1}, {}, clock.MonotonicNow());
  const auto record = desk.Answer(Request(9), clock.MonotonicNow());
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->incident_id(), 9u);
  EXPECT_EQ(record->events_size(), 1);
  EXPECT_FALSE(desk.Answer(Request(9), clock.MonotonicNow()));
  EXPECT_FALSE(desk.Answer(Request(10), clock.MonotonicNow()));
  EXPECT_FALSE(desk.Answer(Request(0), clock.MonotonicNow()));
  const CaptureCounters c = desk.counters();
  EXPECT_EQ(c.requested, 4u);
  EXPECT_EQ(c.uploaded, 1u);
  EXPECT_EQ(c.refused[static_cast<std::size_t>(CaptureVerdict::kDuplicate)], 1u);
  EXPECT_EQ(c.refused[static_cast<std::size_t>(CaptureVerdict::kRateLimited)], 1u);
  EXPECT_EQ(c.refused[static_cast<std::size_t>(CaptureVerdict::kInvalid)], 1u);
  EXPECT_EQ(c.refused_total(), 3u);
}

}  // namespace
}  // namespace hostmesh::agent::recorder
