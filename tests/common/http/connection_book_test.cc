// The connection caps and deadlines in virtual time: no sockets, no sleeping.
#include "common/http/connection_book.h"

#include <gtest/gtest.h>

namespace hostmesh::http {
namespace {

using namespace std::chrono_literals;
using Overdue = std::vector<std::pair<ConnectionBook::Id, ConnectionPhase>>;

constexpr MonoTime kT0{std::chrono::seconds{100}};

ConnectionBook Book(std::size_t max, std::size_t per_peer) {
  return ConnectionBook(ConnectionLimits{max, per_peer, 10s});
}

TEST(HttpConnectionBook, OnePeerCannotTakeMoreThanItsShare) {
  ConnectionBook book = Book(10, 2);
  EXPECT_EQ(book.Admit("10.0.0.1"), Admission::kAdmitted);
  EXPECT_EQ(book.Admit("10.0.0.1"), Admission::kAdmitted);
  EXPECT_EQ(book.Admit("10.0.0.1"), Admission::kRefusedPerPeer);
  EXPECT_EQ(book.Admit("10.0.0.2"), Admission::kAdmitted);
  EXPECT_EQ(book.admitted(), 3u);
  EXPECT_EQ(book.admitted_from("10.0.0.1"), 2u);
  book.Opened(1, "10.0.0.1", kT0);
  book.Closed(1);
  EXPECT_EQ(book.Admit("10.0.0.1"), Admission::kAdmitted);
}

TEST(HttpConnectionBook, TheGlobalCapHoldsAcrossPeers) {
  ConnectionBook book = Book(3, 3);
  EXPECT_EQ(book.Admit("a"), Admission::kAdmitted);
  EXPECT_EQ(book.Admit("b"), Admission::kAdmitted);
  EXPECT_EQ(book.Admit("c"), Admission::kAdmitted);
  EXPECT_EQ(book.Admit("d"), Admission::kRefusedMaxConnections);
  EXPECT_EQ(book.admitted_from("d"), 0u);
  // An admission that never opened gives its place back.
  book.Cancel("b");
  EXPECT_EQ(book.Admit("d"), Admission::kAdmitted);
}

TEST(HttpConnectionBook, ASilentClientIsOverdueAfterTheTimeout) {
  ConnectionBook book = Book(10, 10);
  book.Admit("p");
  book.Opened(7, "p", kT0);
  EXPECT_EQ(book.TakeOverdue(kT0 + 9999ms), Overdue{});
  EXPECT_EQ(book.TakeOverdue(kT0 + 10s), (Overdue{{7, ConnectionPhase::kRequest}}));
  EXPECT_EQ(book.TakeOverdue(kT0 + 20s), Overdue{}) << "reported once";
  EXPECT_EQ(book.open(), 1u) << "stays until the server closes it";
  book.Closed(7);
  EXPECT_EQ(book.open(), 0u);
  EXPECT_EQ(book.admitted(), 0u);
}

TEST(HttpConnectionBook, ATrickledRequestLineDoesNotMoveTheDeadline) {
  ConnectionBook book = Book(10, 10);
  book.Admit("p");
  book.Opened(7, "p", kT0);
  book.RequestLineArrived(7);  // the headers still trickle in
  EXPECT_EQ(book.TakeOverdue(kT0 + 10s), (Overdue{{7, ConnectionPhase::kRequest}}));
}

TEST(HttpConnectionBook, HandlersHaveNoDeadlineResponsesAndIdleHaveTheirOwn) {
  ConnectionBook book = Book(10, 10);
  book.Admit("p");
  book.Opened(7, "p", kT0);
  book.RequestReceived(7);
  EXPECT_EQ(book.TakeOverdue(kT0 + 1h), Overdue{}) << "the handler's time is the server's";
  book.ResponseQueued(7, kT0 + 1h);
  EXPECT_EQ(book.TakeOverdue(kT0 + 1h + 9s), Overdue{});
  EXPECT_EQ(book.TakeOverdue(kT0 + 1h + 10s), (Overdue{{7, ConnectionPhase::kResponse}}));

  book.Admit("p");
  book.Opened(8, "p", kT0);
  book.RequestReceived(8);
  book.ResponseQueued(8, kT0 + 1s);
  book.RequestDone(8, kT0 + 2s);  // kept alive for a next request
  EXPECT_EQ(book.TakeOverdue(kT0 + 11s), Overdue{});
  EXPECT_EQ(book.TakeOverdue(kT0 + 12s), (Overdue{{8, ConnectionPhase::kIdle}}));
}

TEST(HttpConnectionBook, ANextRequestOnAKeptAliveConnectionIsARequestAgain) {
  ConnectionBook book = Book(10, 10);
  book.Admit("p");
  book.Opened(8, "p", kT0);
  book.RequestReceived(8);
  book.ResponseQueued(8, kT0);
  book.RequestDone(8, kT0);
  book.RequestLineArrived(8);
  EXPECT_EQ(book.TakeOverdue(kT0 + 10s), (Overdue{{8, ConnectionPhase::kRequest}}));
}

TEST(HttpConnectionBook, PhaseNamesAreTheCounterLabels) {
  EXPECT_EQ(PhaseName(ConnectionPhase::kRequest), "request");
  EXPECT_EQ(PhaseName(ConnectionPhase::kResponse), "response");
  EXPECT_EQ(PhaseName(ConnectionPhase::kIdle), "idle");
}

}  // namespace
}  // namespace hostmesh::http
