#include "agent/core/tracker.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "agent/core/probe_codec.h"

namespace hostmesh::agent {

PairCounters& PairCounters::operator+=(const PairCounters& other) {
  sent += other.sent;
  received += other.received;
  timed_out += other.timed_out;
  late += other.late;
  duplicate += other.duplicate;
  unknown += other.unknown;
  evicted += other.evicted;
  misdelivered += other.misdelivered;
  send_failed += other.send_failed;
  return *this;
}

std::uint32_t Tracker::CapacityFor(std::chrono::nanoseconds interval,
                                   std::chrono::nanoseconds timeout) {
  if (interval <= std::chrono::nanoseconds::zero()) return 1024;
  const auto per_timeout =
      static_cast<std::uint64_t>((timeout + interval - std::chrono::nanoseconds{1}) / interval);
  const std::uint64_t wanted = per_timeout + std::max<std::uint64_t>(per_timeout / 8, 16);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(wanted, std::uint64_t{1} << 24));
}

Tracker::Tracker(const TrackerOptions& options, ResultSink sink)
    : num_nics_(options.num_nics),
      timeout_(options.timeout),
      capacity_(std::max<std::uint32_t>(options.ring_capacity, 1)),
      sink_(std::move(sink)) {
  if (options.timeout <= std::chrono::nanoseconds::zero()) {
    throw std::invalid_argument("tracker: timeout must be positive");
  }
  if (options.ring_capacity > (std::uint32_t{1} << 24)) {
    throw std::invalid_argument("tracker: ring_capacity above 2^24");
  }
  if (!sink_) throw std::invalid_argument("tracker: no result sink");
  rings_.resize(num_nics_);
  for (Ring& ring : rings_) ring.slots.resize(capacity_);
  pairs_.resize(std::size_t{num_nics_} * num_nics_);
}

Tracker::Slot* Tracker::Find(NicId src, std::uint64_t sequence) {
  if (src >= num_nics_) return nullptr;
  Ring& ring = rings_[src];
  if (sequence == 0 || sequence > ring.last_sequence) return nullptr;
  Slot& slot = ring.slots[sequence % capacity_];
  return slot.sequence == sequence ? &slot : nullptr;
}

void Tracker::Emit(NicId src, const Slot& slot, Fate fate) {
  ProbeResult result;
  result.src_nic = src;
  result.dst_nic = slot.dst;
  result.src_port = slot.src_port;
  result.dst_port = slot.dst_port;
  result.sequence = slot.sequence;
  result.send_time_ns = slot.send_time_ns;
  result.app_send_ns = slot.app_send_ns;
  result.nic_send_ns = slot.nic_send_ns;
  result.send_timestamp_source =
      slot.nic_send_ns != 0 ? slot.nic_send_source : TimestampSource::kUnspecified;
  if (fate == Fate::kReceived) {
    result.nic_recv_ns = slot.nic_recv_ns;
    result.app_recv_ns = slot.app_recv_ns;
    result.recv_timestamp_source =
        slot.nic_recv_ns != 0 ? slot.nic_recv_source : TimestampSource::kUnspecified;
  }
  result.timeout = fate == Fate::kTimeout;
  result.send_failed = fate == Fate::kSendFailed;
  result.payload_bytes = slot.payload_bytes;
  sink_(result);
}

void Tracker::Close(NicId src, Slot& slot, State final_state, Fate fate) {
  Emit(src, slot, fate);
  slot.state = final_state;
  --pending_;
}

void Tracker::Evict(NicId src, Slot& slot) {
  if (slot.state == State::kPending) {
    PairCounters& pair = Pair(src, slot.dst);
    ++pair.evicted;
    ++pair.timed_out;
    Close(src, slot, State::kTimedOut, Fate::kTimeout);
  } else if (slot.state == State::kAwaitingSendTime) {
    Close(src, slot, State::kCompleted, Fate::kReceived);  // received; only (2) is missing
  }
}

void Tracker::RaiseCursor(NicId src, std::uint64_t new_cursor) {
  Ring& ring = rings_[src];
  if (new_cursor <= ring.cursor) return;
  if (new_cursor - ring.cursor <= capacity_) {
    for (std::uint64_t s = ring.cursor; s < new_cursor; ++s) {
      Slot& slot = ring.slots[s % capacity_];
      if (slot.sequence == s) Evict(src, slot);
    }
  } else {
    // A jump wider than the ring (sends that were never recorded): every open
    // probe is somewhere in the ring, so scan it once instead of the gap.
    for (Slot& slot : ring.slots) {
      if (slot.sequence < new_cursor) Evict(src, slot);
    }
  }
  ring.cursor = new_cursor;
}

void Tracker::AdvanceCursor(Ring& ring) {
  while (ring.cursor <= ring.last_sequence) {
    const Slot& slot = ring.slots[ring.cursor % capacity_];
    if (slot.sequence == ring.cursor && Open(slot.state)) return;
    ++ring.cursor;
  }
}

bool Tracker::OnSend(const SentProbe& probe, MonoTime now) {
  const ProbeOrder& order = probe.order;
  if (order.src >= num_nics_ || order.dst >= num_nics_ ||
      order.sequence <= rings_[order.src].last_sequence ||
      probe.payload_bytes > kMaxProbePayloadBytes) {
    ++tracker_counters_.rejected_sends;
    return false;
  }
  Ring& ring = rings_[order.src];
  // Keep the ring's window [sequence - capacity + 1, sequence]; whatever is
  // still open below it is evicted, including the slot about to be reused.
  if (order.sequence >= capacity_) RaiseCursor(order.src, order.sequence - capacity_ + 1);

  Slot& slot = ring.slots[order.sequence % capacity_];
  slot = Slot{};
  slot.sequence = order.sequence;
  slot.deadline = now + timeout_;
  slot.send_time_ns = probe.send_time_ns;
  slot.app_send_ns = probe.app_send.ns;
  slot.nic_send_ns = probe.nic_send.ns;
  slot.nic_send_source = probe.nic_send.source;
  slot.dst = order.dst;
  slot.payload_bytes = static_cast<std::uint16_t>(probe.payload_bytes);
  slot.src_port = order.src_port;
  slot.dst_port = order.dst_port;
  slot.state = State::kPending;
  slot.nic_send_pending = probe.nic_send_pending;
  ++pending_;
  ++Pair(order.src, order.dst).sent;
  ring.last_sequence = order.sequence;
  AdvanceCursor(ring);
  return true;
}

void Tracker::OnSendFailed(NicId src, std::uint64_t sequence) {
  Slot* slot = Find(src, sequence);
  if (slot == nullptr || slot->state != State::kPending) {
    ++tracker_counters_.stray_send_reports;
    return;
  }
  ++Pair(src, slot->dst).send_failed;
  Close(src, *slot, State::kFailed, Fate::kSendFailed);
  AdvanceCursor(rings_[src]);
}

void Tracker::OnSendTimestamp(NicId src, std::uint64_t sequence, Timestamp nic_send) {
  Slot* slot = Find(src, sequence);
  if (slot == nullptr || !Open(slot->state)) {
    ++tracker_counters_.stray_send_reports;
    return;
  }
  slot->nic_send_ns = nic_send.ns;
  slot->nic_send_source = nic_send.source;
  slot->nic_send_pending = false;
  if (slot->state == State::kAwaitingSendTime) {
    Close(src, *slot, State::kCompleted, Fate::kReceived);
    AdvanceCursor(rings_[src]);
  }
}

ReceiveOutcome Tracker::OnReceive(NicId rx_nic, const ProbeHeader& header, Timestamp nic_recv,
                                  Timestamp app_recv, MonoTime now) {
  const NicId src = header.src_nic;
  if (src >= num_nics_ || rx_nic >= num_nics_) {
    ++tracker_counters_.unknown_source;
    return ReceiveOutcome::kUnknown;
  }
  Ring& ring = rings_[src];
  const std::uint64_t sequence = header.sequence;
  if (sequence == 0 || sequence > ring.last_sequence) {
    ++Pair(src, rx_nic).unknown;
    return ReceiveOutcome::kUnknown;
  }
  Slot& slot = ring.slots[sequence % capacity_];
  if (slot.sequence != sequence) {
    // A newer probe holds the slot: this one is older than the ring, its fate
    // long decided. An older one: this sequence was never recorded.
    if (slot.sequence > sequence) {
      ++Pair(src, rx_nic).late;
      return ReceiveOutcome::kLate;
    }
    ++Pair(src, rx_nic).unknown;
    return ReceiveOutcome::kUnknown;
  }
  PairCounters& pair = Pair(src, slot.dst);
  if (slot.dst != rx_nic) {
    ++pair.misdelivered;
    return ReceiveOutcome::kMisdelivered;
  }
  switch (slot.state) {
    case State::kPending:
      if (now >= slot.deadline) {
        // Poll has not run since the deadline passed; decide as it would have.
        ++pair.timed_out;
        Close(src, slot, State::kTimedOut, Fate::kTimeout);
        ++pair.late;
        slot.state = State::kLateSeen;
        AdvanceCursor(ring);
        return ReceiveOutcome::kLate;
      }
      ++pair.received;
      slot.nic_recv_ns = nic_recv.ns;
      slot.nic_recv_source = nic_recv.source;
      slot.app_recv_ns = app_recv.ns;
      if (slot.nic_send_pending) {
        slot.state = State::kAwaitingSendTime;
      } else {
        Close(src, slot, State::kCompleted, Fate::kReceived);
        AdvanceCursor(ring);
      }
      return ReceiveOutcome::kReceived;
    case State::kTimedOut:
    case State::kFailed:
      ++pair.late;
      slot.state = State::kLateSeen;
      return ReceiveOutcome::kLate;
    case State::kAwaitingSendTime:
    case State::kCompleted:
    case State::kLateSeen:
    case State::kEmpty:
      break;
  }
  ++pair.duplicate;
  return ReceiveOutcome::kDuplicate;
}

void Tracker::Poll(MonoTime now) {
  for (NicId src = 0; src < num_nics_; ++src) {
    Ring& ring = rings_[src];
    for (; ring.cursor <= ring.last_sequence; ++ring.cursor) {
      Slot& slot = ring.slots[ring.cursor % capacity_];
      if (slot.sequence != ring.cursor || !Open(slot.state)) continue;
      // Deadlines grow with the sequence (sends come in order), so the first
      // open probe not yet due ends the walk.
      if (slot.deadline > now) break;
      if (slot.state == State::kPending) {
        ++Pair(src, slot.dst).timed_out;
        Close(src, slot, State::kTimedOut, Fate::kTimeout);
      } else {
        Close(src, slot, State::kCompleted, Fate::kReceived);  // (2) never came; emit without it
      }
    }
  }
}

std::optional<MonoTime> Tracker::NextDeadline() const {
  std::optional<MonoTime> next;
  for (const Ring& ring : rings_) {
    if (ring.cursor > ring.last_sequence) continue;
    const Slot& slot = ring.slots[ring.cursor % capacity_];
    if (slot.sequence != ring.cursor || !Open(slot.state)) continue;
    if (!next || slot.deadline < *next) next = slot.deadline;
  }
  return next;
}

const PairCounters& Tracker::counters(NicId src, NicId dst) const {
  if (src >= num_nics_ || dst >= num_nics_) {
    throw std::out_of_range("tracker: no such NIC pair");
  }
  return pairs_[std::size_t{src} * num_nics_ + dst];
}

PairCounters Tracker::Totals() const {
  PairCounters total;
  for (const PairCounters& pair : pairs_) total += pair;
  return total;
}

std::size_t Tracker::MemoryBytes() const {
  std::size_t bytes = rings_.capacity() * sizeof(Ring) + pairs_.capacity() * sizeof(PairCounters);
  for (const Ring& ring : rings_) bytes += ring.slots.capacity() * sizeof(Slot);
  return bytes;
}

}  // namespace hostmesh::agent
