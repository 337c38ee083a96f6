// RecvBatch over a local datagram socket pair: no network, no waiting.
#include "agent/udp/recv_batch.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/base/unique_fd.h"

namespace hostmesh::agent::udp {
namespace {

struct Pair {
  UniqueFd reader;
  UniqueFd writer;
};

Pair DatagramPair() {
  int fds[2] = {-1, -1};
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, fds), 0);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

void Send(int fd, const std::string& text) {
  ASSERT_EQ(::send(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
}

std::string Text(const RecvBatch& batch, std::size_t i) {
  const auto bytes = batch.data(i);
  return {bytes.begin(), bytes.end()};
}

TEST(agent_udp_recv_batch, ReadsEverythingWaitingInOneCallAndAShortCountMeansEmpty) {
  Pair pair = DatagramPair();
  RecvBatch batch(4, 64, 64);
  Send(pair.writer.get(), "one");
  Send(pair.writer.get(), "two");
  Send(pair.writer.get(), "three");
  ASSERT_EQ(batch.Receive(pair.reader.get(), 0, 16), 3);
  EXPECT_EQ(Text(batch, 0), "one");
  EXPECT_EQ(Text(batch, 1), "two");
  EXPECT_EQ(Text(batch, 2), "three");
  EXPECT_EQ(batch.length(2), 5U);
  EXPECT_EQ(batch.Receive(pair.reader.get(), 0, 16), -1);
  EXPECT_EQ(errno, EAGAIN);
}

TEST(agent_udp_recv_batch, NeverReadsMoreThanAskedOrThanItHolds) {
  Pair pair = DatagramPair();
  RecvBatch batch(2, 64, 64);
  for (int i = 0; i < 5; ++i) Send(pair.writer.get(), std::to_string(i));
  ASSERT_EQ(batch.Receive(pair.reader.get(), 0, 1), 1);
  EXPECT_EQ(Text(batch, 0), "0");
  ASSERT_EQ(batch.Receive(pair.reader.get(), 0, 16), 2);  // capacity 2
  EXPECT_EQ(Text(batch, 1), "2");
  ASSERT_EQ(batch.Receive(pair.reader.get(), 0, 16), 2);
  EXPECT_EQ(Text(batch, 0), "3");
  EXPECT_EQ(Text(batch, 1), "4");
}

TEST(agent_udp_recv_batch, ALongerDatagramIsCutToTheSlotAndFlaggedTruncated) {
  Pair pair = DatagramPair();
  RecvBatch batch(2, 4, 64);
  Send(pair.writer.get(), "abcdefgh");
  Send(pair.writer.get(), "xyz");
  ASSERT_EQ(batch.Receive(pair.reader.get(), 0, 2), 2);
  EXPECT_EQ(Text(batch, 0), "abcd");
  EXPECT_NE(batch.flags(0) & MSG_TRUNC, 0);
  EXPECT_EQ(Text(batch, 1), "xyz");
  EXPECT_EQ(batch.flags(1) & MSG_TRUNC, 0);
}

// Sends `text` with one file descriptor attached (SCM_RIGHTS): a datagram
// that needs its control room.
void SendWithFd(int fd, const std::string& text, int attached) {
  iovec iov{const_cast<char*>(text.data()), text.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &attached, sizeof(int));
  ASSERT_EQ(::sendmsg(fd, &msg, 0), static_cast<ssize_t>(text.size()));
}

TEST(agent_udp_recv_batch, ASlotTheLastCallFilledGetsItsRoomAndFlagsBack) {
  Pair pair = DatagramPair();
  RecvBatch batch(2, 4, 64);
  // Slot 0 comes back with no control data and truncated; slot 1 unused.
  Send(pair.writer.get(), "abcdefgh");
  ASSERT_EQ(batch.Receive(pair.reader.get(), 0, 2), 1);
  EXPECT_EQ(batch.header(0).msg_controllen, 0U);
  EXPECT_NE(batch.flags(0) & MSG_TRUNC, 0);
  // Both slots now carry a descriptor: each must have its full room again.
  SendWithFd(pair.writer.get(), "one", pair.writer.get());
  SendWithFd(pair.writer.get(), "two", pair.writer.get());
  ASSERT_EQ(batch.Receive(pair.reader.get(), 0, 2), 2);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(batch.flags(i) & (MSG_TRUNC | MSG_CTRUNC), 0) << "slot " << i;
    const cmsghdr* c = CMSG_FIRSTHDR(&batch.header(i));
    ASSERT_NE(c, nullptr) << "slot " << i;
    EXPECT_EQ(c->cmsg_type, SCM_RIGHTS);
    int received = -1;
    std::memcpy(&received, CMSG_DATA(c), sizeof received);
    UniqueFd owned(received);  // closed with the test
    EXPECT_GE(received, 0);
  }
  EXPECT_EQ(Text(batch, 0), "one");
  EXPECT_EQ(batch.length(1), 3U);
}

}  // namespace
}  // namespace hostmesh::agent::udp
