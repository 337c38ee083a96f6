#pragma once

// Matches receives to sends and decides each probe's fate exactly once.
//
// Per source NIC a fixed ring of `ring_capacity` slots indexed by
// sequence % capacity; each slot keeps the sequence it holds, so a receive is
// matched only if its slot still holds that sequence. Memory is therefore
// num_nics x ring_capacity slots whatever the probe rate, the loss rate or
// what arrives off the wire. The ring must cover the sends of one timeout
// (CapacityFor); if it does not, a send that lands on a still-pending slot
// evicts it: counted as evicted and reported as a timeout. The ring is the
// agent's largest allocation at high rates (1000 probes/s per NIC, 8 NICs:
// 4,512 slots), so a slot is kept to 72 bytes and the ring to one timeout
// and an eighth, not a power of two.
//
// Fates and counters (per (source NIC, destination NIC)):
//   sent        recorded sends, including ones whose send then failed
//   received    matched before its deadline (send time + timeout)
//   timed_out   no receive by the deadline, including evictions; a timeout
//               result is emitted
//   late        received after its timeout result was emitted; the timeout
//               stands and nothing more is emitted. A receive whose slot was
//               already reused is also counted late (it is older than the ring)
//   duplicate   a second receive of one probe
//   unknown     a sequence this agent never sent from that NIC
//   misdelivered  arrived on another NIC than it was sent to (a routing fault);
//               the probe stays pending for its real destination
//   send_failed the transport could not send it (or its send completed in
//               error); reported as a send failure, not a timeout: the probe
//               never reached the network, so it says nothing about loss
//
// A received probe is emitted as soon as its NIC send timestamp is known; when
// that timestamp is still on its way (it may arrive after the receive), the
// result waits for it until the deadline and is then emitted without it.
//
// Results go to the sink synchronously from OnSend/OnReceive/Poll/...; the
// sink must not call back into the tracker. `now` must never go backwards.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "agent/core/probe_codec.h"
#include "agent/core/probe_types.h"
#include "common/base/clock.h"

namespace hostmesh::agent {

struct TrackerOptions {
  std::uint32_t num_nics = 0;
  std::chrono::nanoseconds timeout = std::chrono::milliseconds{500};
  std::uint32_t ring_capacity = 1024;  // per source NIC; rounded up to a power of two
};

// What the I/O loop knows once a probe has been handed to the transport.
struct SentProbe {
  ProbeOrder order;
  std::int64_t send_time_ns = 0;  // realtime, when the scheduler issued it
  Timestamp app_send;             // (1)
  Timestamp nic_send;             // (2), when the transport knew it at once
  bool nic_send_pending = false;  // (2) will come later through OnSendTimestamp
  std::uint32_t payload_bytes = 0;
};

struct PairCounters {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t timed_out = 0;
  std::uint64_t late = 0;
  std::uint64_t duplicate = 0;
  std::uint64_t unknown = 0;
  std::uint64_t evicted = 0;  // subset of timed_out
  std::uint64_t misdelivered = 0;
  std::uint64_t send_failed = 0;

  PairCounters& operator+=(const PairCounters& other);
  friend bool operator==(const PairCounters&, const PairCounters&) = default;
};

// Events that cannot be pinned on a NIC pair.
struct TrackerCounters {
  std::uint64_t unknown_source = 0;      // receive from or on a NIC id we do not have
  std::uint64_t rejected_sends = 0;      // OnSend with a bad NIC, sequence or payload size
  std::uint64_t stray_send_reports = 0;  // send timestamp or failure for no open probe
};

enum class ReceiveOutcome : std::uint8_t {
  kReceived,
  kLate,
  kDuplicate,
  kUnknown,
  kMisdelivered,
};

class Tracker {
 public:
  using ResultSink = std::function<void(const ProbeResult&)>;

  // A ring capacity that holds every probe of one NIC for the timeout and an
  // eighth more (at least 16 slots more): an unanswered probe is timed out by
  // Poll long before a send reuses its slot, and a receive up to an eighth of
  // a timeout late still finds its slot (later ones count as late too).
  static std::uint32_t CapacityFor(std::chrono::nanoseconds interval,
                                   std::chrono::nanoseconds timeout);

  // Throws std::invalid_argument on unusable options (startup only).
  Tracker(const TrackerOptions& options, ResultSink sink);

  // Records a send. Returns false (counted in rejected_sends) if a NIC id is
  // out of range, the sequence does not exceed the source NIC's last one or
  // the payload is larger than a UDP datagram's.
  bool OnSend(const SentProbe& probe, MonoTime now);
  // The transport failed to send a recorded probe: emits it as a send failure.
  void OnSendFailed(NicId src, std::uint64_t sequence);
  // The sender NIC's send timestamp (2), possibly after the receive.
  void OnSendTimestamp(NicId src, std::uint64_t sequence, Timestamp nic_send);
  // A decoded probe (boot id already checked) received on `rx_nic`.
  ReceiveOutcome OnReceive(NicId rx_nic, const ProbeHeader& header, Timestamp nic_recv,
                           Timestamp app_recv, MonoTime now);
  // Emits the probes whose deadline has come (deadline <= now).
  void Poll(MonoTime now);

  // The earliest deadline still open, for the loop's sleep; nullopt if none.
  std::optional<MonoTime> NextDeadline() const;

  const PairCounters& counters(NicId src, NicId dst) const;
  PairCounters Totals() const;
  const TrackerCounters& tracker_counters() const { return tracker_counters_; }
  // Probes whose fate is not decided yet.
  std::size_t pending() const { return pending_; }
  std::uint32_t ring_capacity() const { return capacity_; }
  // Heap held by the rings and counters: fixed at construction.
  std::size_t MemoryBytes() const;

 private:
  enum class State : std::uint8_t {
    kEmpty,
    kPending,           // sent, waiting for the receive
    kAwaitingSendTime,  // received, waiting for (2)
    kCompleted,         // received, result emitted
    kTimedOut,          // timeout result emitted
    kLateSeen,          // timed out, then received
    kFailed,            // send failed, send-failure result emitted
  };
  static bool Open(State state) {
    return state == State::kPending || state == State::kAwaitingSendTime;
  }

  // The timestamps' sources apart from their values (a Timestamp pads to 16
  // bytes); only (2) and (3) carry a source into the result.
  struct Slot {
    std::uint64_t sequence = 0;
    MonoTime deadline{};
    std::int64_t send_time_ns = 0;
    std::int64_t app_send_ns = 0;
    std::int64_t nic_send_ns = 0;
    std::int64_t nic_recv_ns = 0;
    std::int64_t app_recv_ns = 0;
    NicId dst = 0;
    std::uint16_t payload_bytes = 0;  // at most kMaxProbePayloadBytes
    std::uint16_t src_port = 0;
    std::uint16_t dst_port = 0;
    TimestampSource nic_send_source = TimestampSource::kUnspecified;
    TimestampSource nic_recv_source = TimestampSource::kUnspecified;
    State state = State::kEmpty;
    bool nic_send_pending = false;
  };
  static_assert(sizeof(Slot) <= 72);

  struct Ring {
    std::vector<Slot> slots;
    std::uint64_t last_sequence = 0;  // highest sequence sent
    std::uint64_t cursor = 1;         // no open probe has a lower sequence
  };

  Slot* Find(NicId src, std::uint64_t sequence);
  // Closes every open probe of `src` below `new_cursor` as evicted.
  void RaiseCursor(NicId src, std::uint64_t new_cursor);
  void Evict(NicId src, Slot& slot);
  PairCounters& Pair(NicId src, NicId dst) { return pairs_[std::size_t{src} * num_nics_ + dst]; }
  enum class Fate : std::uint8_t { kReceived, kTimeout, kSendFailed };
  void Emit(NicId src, const Slot& slot, Fate fate);
  void Close(NicId src, Slot& slot, State final_state, Fate fate);
  // Moves the cursor past closed slots, so NextDeadline reads one slot per NIC.
  void AdvanceCursor(Ring& ring);

  std::uint32_t num_nics_;
  std::chrono::nanoseconds timeout_;
  std::uint32_t capacity_;
  ResultSink sink_;
  std::vector<Ring> rings_;
  std::vector<PairCounters> pairs_;
  TrackerCounters tracker_counters_;
  std::size_t pending_ = 0;
};

}  // namespace hostmesh::agent
