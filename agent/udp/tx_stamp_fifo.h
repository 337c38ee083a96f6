#pragma once

// Matches SO_TIMESTAMPING TX stamps to probes, for one socket. With
// SOF_TIMESTAMPING_OPT_ID the kernel numbers every send of a socket 0, 1, 2...
// (a send that fails is not counted) and echoes that number in the stamp's
// ee_data; the FIFO keeps, in send order, which probe got which number.
//
// Stamps usually come back in order, but a stamp may be lost (error queue
// full, a device that skips stamps under load) or overtake another (multi-queue
// devices), so an entry is only marked taken and entries leave from the front:
// a late stamp still finds its probe, and a lost one ages out through Expire.
// The counter is 32 bits in the kernel and wraps; so do the ids here.
//
// The entries are a ring that doubles when full and never shrinks: a socket
// rarely has more than a few stamps outstanding, and a std::deque here cost a
// 512-byte chunk per socket (128 sockets: 80 KB at 1000 probes/s per NIC) and
// a malloc and a free every 16 sends.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "common/base/clock.h"

namespace hostmesh::agent::udp {

struct PendingSend {
  std::uint64_t sequence = 0;    // the probe's sequence (per source NIC)
  std::int64_t app_send_ns = 0;  // (1), to sanity-check the stamp's time
  MonoTime sent_at{};            // for Expire
};

class TxStampFifo {
 public:
  // A fresh socket's counter starts at 0; `first_id` is for one whose counter
  // has already moved on (and lets tests cross the wrap).
  explicit TxStampFifo(std::uint32_t first_id = 0) : next_id_(first_id) {}

  // Records a send the kernel accepted; returns the id its stamp will carry.
  std::uint32_t Push(const PendingSend& send);

  // The send that `opt_id` names, once; nullopt if no pending send has it
  // (already taken, expired, or never sent from this socket).
  std::optional<PendingSend> Take(std::uint32_t opt_id);

  // Drops sends from before `cutoff` whose stamp never came; returns how many.
  std::size_t Expire(MonoTime cutoff);

  // Sends still waiting for their stamp.
  std::size_t pending() const { return pending_; }
  std::uint32_t next_id() const { return next_id_; }

 private:
  struct Entry {
    PendingSend send;
    bool taken = false;
  };
  void PopTaken();
  Entry& At(std::size_t index) { return ring_[(head_ + index) & (ring_.size() - 1)]; }
  void PopFront();

  // The id of the front entry: ids are consecutive up to next_id_ (wrapping).
  std::uint32_t front_id() const { return next_id_ - static_cast<std::uint32_t>(size_); }

  std::vector<Entry> ring_;  // a power of two in size; ids front_id() .. next_id_ - 1
  std::size_t head_ = 0;     // ring_ index of front_id()
  std::size_t size_ = 0;
  std::uint32_t next_id_ = 0;
  std::size_t pending_ = 0;
};

}  // namespace hostmesh::agent::udp
