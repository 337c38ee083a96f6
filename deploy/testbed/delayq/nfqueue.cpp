#include "deploy/testbed/delayq/nfqueue.h"

#include <arpa/inet.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace hostmesh::delayq {
namespace {

[[noreturn]] void Fail(const std::string& step) {
  throw std::runtime_error(step + ": " + std::strerror(errno));
}

}  // namespace

NfQueue::NfQueue(uint16_t num, uint32_t max_len, int rcvbuf_bytes, OnPacket on_packet)
    : on_packet_(std::move(on_packet)) {
  handle_ = nfq_open();
  if (handle_ == nullptr) Fail("nfq_open");
  queue_ = nfq_create_queue(handle_, num, &NfQueue::Callback, this);
  if (queue_ == nullptr) {
    nfq_close(handle_);
    Fail("binding queue " + std::to_string(num) + " (is another program bound to it?)");
  }
  // Only the verdict matters, so copy no payload into user space.
  if (nfq_set_mode(queue_, NFQNL_COPY_META, 0) < 0) Fail("nfq_set_mode");
  // The kernel default (1024) would drop packets once a few ms of a busy link are held.
  if (nfq_set_queue_maxlen(queue_, max_len) < 0) Fail("nfq_set_queue_maxlen");
  int fd = nfq_fd(handle_);
  // SO_RCVBUFFORCE (root) lifts the rmem_max cap; the netlink socket holds every queued packet
  // message until we read it.
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf_bytes, sizeof(rcvbuf_bytes)) < 0) {
    Fail("SO_RCVBUFFORCE");
  }
  // An overrun loses only messages, not packets (they stay queued); keep reading instead of
  // getting ENOBUFS errors.
  int one = 1;
  setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
}

NfQueue::~NfQueue() {
  if (queue_ != nullptr) nfq_destroy_queue(queue_);
  if (handle_ != nullptr) nfq_close(handle_);
}

int NfQueue::fd() const {
  return nfq_fd(handle_);
}

void NfQueue::Drain() {
  // Room for a batch of metadata-only messages.
  std::vector<char> buf(1 << 16);
  for (;;) {
    ssize_t n = recv(fd(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == ENOBUFS) {
        ++overruns_;
        continue;
      }
      Fail("recv");
    }
    nfq_handle_packet(handle_, buf.data(), static_cast<int>(n));
  }
}

void NfQueue::AcceptUpTo(uint32_t last_id) {
  if (nfq_set_verdict_batch(queue_, last_id, NF_ACCEPT) < 0) Fail("nfq_set_verdict_batch");
}

int NfQueue::Callback(nfq_q_handle*, nfgenmsg*, nfq_data* nfa, void* self) {
  const nfqnl_msg_packet_hdr* hdr = nfq_get_msg_packet_hdr(nfa);
  if (hdr != nullptr) static_cast<NfQueue*>(self)->on_packet_(ntohl(hdr->packet_id));
  return 0;
}

}  // namespace hostmesh::delayq
