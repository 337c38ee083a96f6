// The address handles of a source NIC without a device: a send only looks up
// (never builds), wanted keys are asked for once, built ones land in the
// bounded cache, failed ones are refused until their retry; and which keys a
// NIC wants for each way of rotating its source port.
#include "agent/verbs/address_handle_book.h"

#include <gtest/gtest.h>

#include <vector>

#include "agent/verbs/flow_label.h"
#include "agent/verbs/verbs_owner.h"

namespace hostmesh::agent::verbs {
namespace {

using namespace std::chrono_literals;

struct FakeAh {
  int id;
};
int g_destroyed = 0;
struct FakeAhDeleter {
  static constexpr const char* kName = "fake ah";
  int operator()(FakeAh* ah) const {
    ++g_destroyed;
    delete ah;
    return 0;
  }
};
using Owner = UniqueHandle<FakeAh, FakeAhDeleter>;
using Book = BasicAddressHandleBook<Owner>;
using State = Book::State;

const MonoTime kT0 = MonoTime{} + 100s;

TEST(AddressHandleBook, ASendOnlyLooksUpAndAsksForAMissingHandleOnce) {
  Book book(8);
  Book::Lookup first = book.ForSend({1, 7}, kT0);
  EXPECT_EQ(first.state, State::kWaiting);
  EXPECT_TRUE(first.request);  // the caller submits it to the builder
  Book::Lookup again = book.ForSend({1, 7}, kT0);
  EXPECT_EQ(again.state, State::kWaiting);
  EXPECT_FALSE(again.request);  // already asked for
  EXPECT_EQ(book.pending(), 1u);
  ASSERT_TRUE(book.OnBuilt({1, 7}, Owner(new FakeAh{42})));
  Book::Lookup ready = book.ForSend({1, 7}, kT0);
  EXPECT_EQ(ready.state, State::kReady);
  EXPECT_EQ(ready.ah->id, 42);
  EXPECT_EQ(book.pending(), 0u);
}

TEST(AddressHandleBook, WantAsksOnlyForWhatIsNeitherCachedNorPending) {
  Book book(8);
  const std::vector<AddressHandleKey> keys = {{1, 1}, {1, 2}, {2, 1}};
  EXPECT_EQ(book.Want(keys, kT0), keys);
  EXPECT_TRUE(book.Want(keys, kT0).empty());  // all pending
  ASSERT_TRUE(book.OnBuilt({1, 1}, Owner(new FakeAh{1})));
  const std::vector<AddressHandleKey> more = {{1, 1}, {1, 3}};
  EXPECT_EQ(book.Want(more, kT0), (std::vector<AddressHandleKey>{{1, 3}}));
  EXPECT_EQ(book.ForSend({1, 2}, kT0).state, State::kWaiting);
  EXPECT_FALSE(book.ForSend({1, 2}, kT0).request);
}

TEST(AddressHandleBook, AFailedBuildIsASendFailureUntilItsRetryIsDue) {
  Book book(8, 1s);
  book.Want(std::vector<AddressHandleKey>{{3, 9}}, kT0);
  book.OnFailed({3, 9}, 113 /* EHOSTUNREACH */, kT0);
  Book::Lookup failed = book.ForSend({3, 9}, kT0 + 999ms);
  EXPECT_EQ(failed.state, State::kFailed);
  EXPECT_EQ(failed.error, 113);
  EXPECT_TRUE(book.Want(std::vector<AddressHandleKey>{{3, 9}}, kT0 + 999ms).empty());
  // Due: asked for again, waiting meanwhile; a success clears the failure.
  Book::Lookup retry = book.ForSend({3, 9}, kT0 + 1s);
  EXPECT_EQ(retry.state, State::kWaiting);
  EXPECT_TRUE(retry.request);
  ASSERT_TRUE(book.OnBuilt({3, 9}, Owner(new FakeAh{5})));
  EXPECT_EQ(book.failed(), 0u);
  EXPECT_EQ(book.ForSend({3, 9}, kT0 + 1s).state, State::kReady);
}

TEST(AddressHandleBook, BoundedAndHandlesInFlightAreNeverEvicted) {
  g_destroyed = 0;
  Book book(2);
  ASSERT_TRUE(book.OnBuilt({1, 1}, Owner(new FakeAh{1})));
  ASSERT_TRUE(book.OnBuilt({1, 2}, Owner(new FakeAh{2})));
  book.AddInFlight({1, 1});
  book.ForSend({1, 1}, kT0);                                // the most recently used, and busy
  ASSERT_TRUE(book.OnBuilt({1, 3}, Owner(new FakeAh{3})));  // evicts {1, 2}
  EXPECT_EQ(book.size(), 2u);
  EXPECT_EQ(book.evicted(), 1u);
  EXPECT_EQ(g_destroyed, 1);
  EXPECT_EQ(book.ForSend({1, 2}, kT0).state, State::kWaiting);  // gone: asked for again
  // Full of handles in flight: a new one is dropped, not forced in.
  book.AddInFlight({1, 3});
  EXPECT_FALSE(book.OnBuilt({1, 2}, Owner(new FakeAh{4})));
  EXPECT_EQ(g_destroyed, 2);
  EXPECT_EQ(book.size(), 2u);
  book.ReleaseInFlight({1, 3});
  EXPECT_TRUE(book.OnBuilt({1, 2}, Owner(new FakeAh{5})));
}

TEST(AddressHandleBook, AnAbandonedRequestCanBeAskedForAgain) {
  Book book(4);
  EXPECT_TRUE(book.ForSend({2, 2}, kT0).request);
  book.Abandon({2, 2});
  EXPECT_TRUE(book.ForSend({2, 2}, kT0).request);
}

TEST(AddressHandleBook, WantedKeysPerRotationMode) {
  const std::vector<NicId> dsts = {0, 1, 2};
  const std::vector<std::uint16_t> ports = {49152, 50000, 1000};  // 1000: no flow label
  const auto label = [](std::uint16_t p) { return FlowLabelForUdpSport(p); };
  // Flow label: every other NIC x every port it can express.
  const auto by_label = WantedAddressHandles(false, 1, dsts, ports, label);
  ASSERT_EQ(by_label.size(), 4u);
  for (const AddressHandleKey& key : by_label) {
    EXPECT_NE(key.dst, 1u);
    EXPECT_TRUE(key.flow_label == *FlowLabelForUdpSport(49152) ||
                key.flow_label == *FlowLabelForUdpSport(50000));
  }
  // Per QP: one per other NIC, whatever the ports.
  EXPECT_EQ(WantedAddressHandles(true, 1, dsts, ports, label),
            (std::vector<AddressHandleKey>{{0, 0}, {2, 0}}));
}

}  // namespace
}  // namespace hostmesh::agent::verbs
