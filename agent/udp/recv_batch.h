#pragma once

// Reads a socket's receive queue or error queue with recvmmsg: every datagram
// waiting is read in one system call, and a short count says the queue is
// empty, so draining a socket costs one call per wake instead of one per
// datagram plus the one that fails with EAGAIN. The buffers are allocated
// once and reused: no allocation per datagram.

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace hostmesh::agent::udp {

class RecvBatch {
 public:
  // Room for `capacity` datagrams of up to `data_bytes` each (longer ones are
  // truncated: MSG_TRUNC in flags(i)) with `control_bytes` of cmsgs each.
  RecvBatch(std::size_t capacity, std::size_t data_bytes, std::size_t control_bytes);

  // Reads up to min(max, capacity()) datagrams without blocking; `flags` is 0
  // or MSG_ERRQUEUE. Returns how many were read, or -1 with errno (EAGAIN:
  // nothing there). Fewer than asked for means the queue is now empty.
  int Receive(int fd, int flags, std::size_t max);

  std::size_t capacity() const { return headers_.size(); }
  // Datagram i of the last Receive: its header (cmsgs), flags and bytes as
  // stored (at most data_bytes; `length` is the datagram's real size).
  const msghdr& header(std::size_t i) const { return headers_[i].msg_hdr; }
  int flags(std::size_t i) const { return headers_[i].msg_hdr.msg_flags; }
  std::size_t length(std::size_t i) const { return headers_[i].msg_len; }
  std::span<const std::uint8_t> data(std::size_t i) const;

 private:
  std::size_t data_bytes_;
  std::size_t control_bytes_;
  // Not value-initialised: pages of large slots nobody writes are never touched.
  std::unique_ptr<std::uint8_t[]> data_;
  std::unique_ptr<std::max_align_t[]> control_;  // aligned for cmsghdr
  std::vector<iovec> iovs_;
  std::vector<mmsghdr> headers_;
  std::size_t dirty_ = 0;  // headers the kernel wrote back in the last Receive
};

}  // namespace hostmesh::agent::udp
