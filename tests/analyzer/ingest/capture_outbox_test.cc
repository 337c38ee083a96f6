// Capture requests waiting for an agent's next ack: bounded per agent and in
// agents, one per incident, forgotten once sent or expired. Virtual time.
#include "analyzer/ingest/capture_outbox.h"

#include <gtest/gtest.h>

namespace hostmesh::analyzer::ingest {
namespace {

using namespace std::chrono_literals;

v1::CaptureRequest Request(std::uint64_t incident) {
  v1::CaptureRequest r;
  r.set_incident_id(incident);
  r.set_from_ns(1000);
  r.set_to_ns(2000);
  return r;
}

std::vector<std::uint64_t> Attached(CaptureOutbox& outbox, const std::string& agent) {
  v1::UploadAck ack;
  outbox.AttachTo(agent, ack);
  std::vector<std::uint64_t> ids;
  for (const v1::CaptureRequest& r : ack.captures()) ids.push_back(r.incident_id());
  return ids;
}

TEST(capture_outbox, RequestsGoOutOnTheAgentsNextAckOnce) {
  VirtualClock clock;
  CaptureOutbox outbox(clock);
  EXPECT_TRUE(outbox.Request("h1", Request(1)));
  EXPECT_TRUE(outbox.Request("h1", Request(2)));
  EXPECT_TRUE(outbox.Request("h1", Request(1)));  // again: replaces, not added
  EXPECT_TRUE(outbox.Request("h2", Request(3)));
  EXPECT_TRUE(Attached(outbox, "h9").empty());
  EXPECT_EQ(Attached(outbox, "h1"), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_TRUE(Attached(outbox, "h1").empty());
  const CaptureOutboxCounters c = outbox.counters();
  EXPECT_EQ(c.requested, 3u);
  EXPECT_EQ(c.sent, 2u);
  EXPECT_EQ(c.pending, 1u);
}

TEST(capture_outbox, BadRequestsAndFullQueuesAreRefused) {
  VirtualClock clock;
  CaptureOutbox outbox(clock, {.max_per_agent = 2, .max_agents = 1});
  EXPECT_FALSE(outbox.Request("h1", Request(0)));
  v1::CaptureRequest empty = Request(4);
  empty.set_to_ns(empty.from_ns());
  EXPECT_FALSE(outbox.Request("h1", empty));
  EXPECT_FALSE(outbox.Request("", Request(4)));
  EXPECT_TRUE(outbox.Request("h1", Request(1)));
  EXPECT_TRUE(outbox.Request("h1", Request(2)));
  EXPECT_FALSE(outbox.Request("h1", Request(3)));  // its queue is full
  EXPECT_FALSE(outbox.Request("h2", Request(1)));  // so are the agents
  EXPECT_EQ(outbox.counters().refused, 5u);
  Attached(outbox, "h1");
  EXPECT_TRUE(outbox.Request("h2", Request(1)));  // h1's place is free again
}

TEST(capture_outbox, RequestsForAnAgentWithoutAStreamExpire) {
  VirtualClock clock;
  CaptureOutbox outbox(clock, {.expiry = 5min});
  EXPECT_TRUE(outbox.Request("h1", Request(1)));
  clock.Advance(4min);
  EXPECT_TRUE(outbox.Request("h1", Request(2)));
  clock.Advance(1min);
  EXPECT_EQ(Attached(outbox, "h1"), (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(outbox.counters().expired, 1u);
  EXPECT_EQ(outbox.counters().pending, 0u);
}

// What went out is remembered for the answer window: a record is taken only
// from the agent asked, for the incident asked, within the window.
TEST(capture_outbox, OnlyAnAgentAskedForAnIncidentMayAnswerWithinTheWindow) {
  VirtualClock clock;
  CaptureOutbox outbox(clock, {.answer_window = 10min});
  EXPECT_TRUE(outbox.Request("h1", Request(7)));
  EXPECT_FALSE(outbox.WasAsked("h1", 7)) << "queued is not asked: no ack carried it yet";
  Attached(outbox, "h1");
  EXPECT_TRUE(outbox.WasAsked("h1", 7));
  EXPECT_TRUE(outbox.WasAsked("h1", 7)) << "a resent answer is still an answer";
  EXPECT_FALSE(outbox.WasAsked("h1", 8));
  EXPECT_FALSE(outbox.WasAsked("h2", 7));
  clock.Advance(10min);
  EXPECT_FALSE(outbox.WasAsked("h1", 7)) << "past the answer window";
  EXPECT_EQ(outbox.counters().unasked, 4u);
}

TEST(capture_outbox, TheAskMemoryIsBoundedPerAgentAndInAgents) {
  VirtualClock clock;
  CaptureOutbox outbox(clock, {.max_agents = 2, .max_asked_per_agent = 2});
  for (std::uint64_t incident = 1; incident <= 3; ++incident) {
    EXPECT_TRUE(outbox.Request("h1", Request(incident)));
    Attached(outbox, "h1");
  }
  EXPECT_FALSE(outbox.WasAsked("h1", 1)) << "the oldest ask is forgotten first";
  EXPECT_TRUE(outbox.WasAsked("h1", 2));
  EXPECT_TRUE(outbox.WasAsked("h1", 3));
  clock.Advance(1s);
  EXPECT_TRUE(outbox.Request("h2", Request(4)));
  Attached(outbox, "h2");
  clock.Advance(1s);
  EXPECT_TRUE(outbox.Request("h3", Request(5)));
  Attached(outbox, "h3");  // a third agent: the one asked longest ago goes
  EXPECT_FALSE(outbox.WasAsked("h1", 3));
  EXPECT_TRUE(outbox.WasAsked("h2", 4));
  EXPECT_TRUE(outbox.WasAsked("h3", 5));
}

}  // namespace
}  // namespace hostmesh::analyzer::ingest
