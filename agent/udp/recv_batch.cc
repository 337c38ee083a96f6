#include "agent/udp/recv_batch.h"

#include <algorithm>

#include "common/base/plain_syscalls.h"

namespace hostmesh::agent::udp {

RecvBatch::RecvBatch(std::size_t capacity, std::size_t data_bytes, std::size_t control_bytes)
    : data_bytes_(data_bytes),
      control_bytes_((control_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t) *
                     sizeof(std::max_align_t)),
      data_(new std::uint8_t[capacity * data_bytes]),
      control_(new std::max_align_t[capacity * control_bytes_ / sizeof(std::max_align_t)]),
      iovs_(capacity),
      headers_(capacity) {
  for (std::size_t i = 0; i < capacity; ++i) {
    iovs_[i] = {data_.get() + i * data_bytes_, data_bytes_};
    msghdr& msg = headers_[i].msg_hdr;
    msg.msg_iov = &iovs_[i];
    msg.msg_iovlen = 1;
    msg.msg_control = reinterpret_cast<char*>(control_.get()) + i * control_bytes_;
    msg.msg_controllen = control_bytes_;
  }
}

int RecvBatch::Receive(int fd, int flags, std::size_t max) {
  const std::size_t count = std::min(max, headers_.size());
  // The kernel wrote back how much control data each message of the last call
  // used (and its length and flags): only those headers need their room back.
  for (std::size_t i = 0; i < dirty_; ++i) {
    headers_[i].msg_hdr.msg_controllen = control_bytes_;
    headers_[i].msg_hdr.msg_flags = 0;
    headers_[i].msg_len = 0;
  }
  const int got =
      PlainRecvmmsg(fd, headers_.data(), static_cast<unsigned>(count), flags | MSG_DONTWAIT);
  dirty_ = got > 0 ? static_cast<std::size_t>(got) : 0;
  return got;
}

std::span<const std::uint8_t> RecvBatch::data(std::size_t i) const {
  return {data_.get() + i * data_bytes_, std::min<std::size_t>(headers_[i].msg_len, data_bytes_)};
}

}  // namespace hostmesh::agent::udp
