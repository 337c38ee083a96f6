// DisagreementBook: a place is reported from its second trace on, every trace
// is counted by kind, places are bounded.
#include "analyzer/feed/disagreement_book.h"

#include <gtest/gtest.h>

namespace hostmesh::analyzer::app {
namespace {

using topology::DisagreementKind;

topology::TraceDisagreement Miscabled(const std::string& key, std::uint32_t where = 1) {
  return {DisagreementKind::kMiscabledLink, key, "link " + key + " is cabled elsewhere",
          topology::Ipv4{where}};
}

DisagreementBook::Trace At(std::int64_t t) {
  return {"h1", "198.18.0.1", "198.18.0.3", 49152, t};
}

TEST(DisagreementBook, APlaceIsConfirmedByItsSecondTrace) {
  DisagreementBook book;
  EXPECT_FALSE(book.Add(Miscabled("a"), At(20)));
  EXPECT_TRUE(book.Confirmed()->empty());
  EXPECT_TRUE(book.Add(Miscabled("a"), At(10)));  // confirms: log it once
  EXPECT_FALSE(book.Add(Miscabled("a"), At(30)));
  EXPECT_FALSE(book.Add(Miscabled("b"), At(40)));
  EXPECT_FALSE(book.Add({DisagreementKind::kUnknownAddress, "a", "unknown a"}, At(5)));

  const auto confirmed = book.Confirmed();
  ASSERT_EQ(confirmed->size(), 1u);
  const api::TopologyDisagreement& d = (*confirmed)[0];
  EXPECT_EQ(d.kind, "miscabled_link");
  EXPECT_EQ(d.description, "link a is cabled elsewhere");
  EXPECT_EQ(d.traces, 3u);
  EXPECT_EQ(d.first_seen_ns, 10);
  EXPECT_EQ(d.last_seen_ns, 30);
  EXPECT_EQ(d.agent_id, "h1");
  EXPECT_EQ(d.src_port, 49152u);
  EXPECT_EQ(book.traces()[static_cast<std::size_t>(DisagreementKind::kMiscabledLink)], 4u);
  EXPECT_EQ(book.traces()[static_cast<std::size_t>(DisagreementKind::kUnknownAddress)], 1u);
  EXPECT_EQ(book.Confirmed(), confirmed);  // shared until something changes
}

// A link that flaps makes traces that mix two paths, now and then: the place
// they accuse is crossed in agreement with the inventory far more often.
TEST(DisagreementBook, APlaceMostTracesAgreeWithIsNotReported) {
  DisagreementBook book;
  EXPECT_FALSE(book.watching());
  EXPECT_FALSE(book.Add(Miscabled("mixed", 7), At(1)));
  EXPECT_TRUE(book.watching());
  for (int i = 0; i < 5; ++i) book.Agree(topology::Ipv4{7});
  book.Agree(topology::Ipv4{8});  // another address: no place there
  EXPECT_FALSE(book.Add(Miscabled("mixed", 7), At(2)));
  EXPECT_TRUE(book.Confirmed()->empty());
  for (int i = 0; i < 4; ++i) book.Add(Miscabled("mixed", 7), At(3));  // 6 against 5
  const auto confirmed = book.Confirmed();
  ASSERT_EQ(confirmed->size(), 1u);
  EXPECT_EQ((*confirmed)[0].traces, 6u);
  EXPECT_EQ((*confirmed)[0].agreeing_traces, 5u);
  book.Agree(topology::Ipv4{7});  // 6 against 6: in doubt again
  EXPECT_TRUE(book.Confirmed()->empty());
}

TEST(DisagreementBook, PlacesBeyondTheBoundAreCountedNotKept) {
  DisagreementBook book;
  for (std::size_t i = 0; i < DisagreementBook::kMaxPlaces + 5; ++i) {
    book.Add(Miscabled(std::to_string(i)), At(1));
    book.Add(Miscabled(std::to_string(i)), At(2));
  }
  EXPECT_EQ(book.Confirmed()->size(), DisagreementBook::kMaxPlaces);
  EXPECT_EQ(book.overflow(), 10u);
  EXPECT_EQ(book.traces()[static_cast<std::size_t>(DisagreementKind::kMiscabledLink)],
            2 * (DisagreementBook::kMaxPlaces + 5));
}

}  // namespace
}  // namespace hostmesh::analyzer::app
