#include "agent/core/payload_pool.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace hostmesh::agent {
namespace {

std::vector<TransportEvent> Received(PayloadPool& pool, std::span<const std::uint8_t> bytes,
                                     int n) {
  std::vector<TransportEvent> events(static_cast<std::size_t>(n));
  for (TransportEvent& event : events) pool.Fill(event.payload, bytes);
  return events;
}

TEST(agent_payload_pool, AHandledEventsBufferCarriesTheNextPayload) {
  PayloadPool pool(4);
  const std::array<std::uint8_t, 3> first{1, 2, 3};
  std::vector<TransportEvent> events = Received(pool, first, 1);
  const std::uint8_t* buffer = events[0].payload.data();
  pool.Reclaim(events);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(pool.spare(), 1U);

  const std::array<std::uint8_t, 2> second{7, 8};
  events = Received(pool, second, 1);
  EXPECT_EQ(events[0].payload.data(), buffer);  // reused, not allocated
  EXPECT_EQ(events[0].payload, std::vector<std::uint8_t>({7, 8}));
  EXPECT_EQ(pool.spare(), 0U);
}

TEST(agent_payload_pool, KeepsAtMostMaxSpareBuffers) {
  PayloadPool pool(2);
  const std::array<std::uint8_t, 1> bytes{9};
  std::vector<TransportEvent> events = Received(pool, bytes, 5);
  events.emplace_back();  // an event without a payload (a send stamp) keeps nothing
  pool.Reclaim(events);
  EXPECT_EQ(pool.spare(), 2U);
}

}  // namespace
}  // namespace hostmesh::agent
