#pragma once

// The flight recorder's storage: a fixed byte budget of packed entries
// (flight_entry.h), oldest dropped first. Pure and single-threaded: the
// FlightRecorder (flight_recorder.h) locks around it. The buffer is taken in
// full at construction, so the agent's memory is known from the start.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "agent/recorder/flight_entry.h"

namespace hostmesh::agent::recorder {

struct RingCounters {
  std::uint64_t events = 0;  // held now
  std::uint64_t bytes = 0;   // used now, of capacity
  std::uint64_t capacity = 0;
  std::uint64_t recorded = 0;  // ever pushed
  std::uint64_t evicted = 0;   // dropped to make room
};

// The packed entries of a range, copied out of the ring (oldest first), and
// what the ring no longer had of it.
struct RingSlice {
  std::vector<std::uint8_t> bytes;
  std::uint64_t events = 0;
  std::uint64_t dropped_before = 0;
};

class FlightRing {
 public:
  // Evictions are remembered per `eviction_bucket` (for RingSlice::dropped_before)
  // for `eviction_buckets` buckets; older ones are summed into one.
  explicit FlightRing(std::size_t capacity_bytes, std::int64_t eviction_bucket_ns = 10'000'000'000,
                      std::size_t eviction_buckets = 360);

  // Stores `entry`, evicting the oldest entries as needed. An entry larger
  // than the whole ring (a ring under 540 bytes) is refused: false.
  bool Push(const FlightEntry& entry);

  // Entries with from_ns <= time_ns < to_ns, oldest first. dropped_before
  // counts evicted entries at or after from_ns (to the eviction bucket: an
  // upper bound within the bucket holding from_ns).
  RingSlice Slice(std::int64_t from_ns, std::int64_t to_ns) const;

  // Calls visit(entry) for every held entry, oldest first.
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    std::size_t at = head_;
    for (std::uint64_t i = 0; i < count_; ++i) {
      if (wrapped_ && at == end_) at = 0;
      const std::span<const std::uint8_t> rest(buf_.data() + at, buf_.size() - at);
      visit(rest.first(PackedSizeAt(rest)));
      at += PackedSizeAt(rest);
    }
  }

  RingCounters counters() const;

 private:
  void EvictOldest();
  void NoteEviction(std::int64_t time_ns);
  void NoteEvictionInNewBucket(std::int64_t time_ns);

  std::vector<std::uint8_t> buf_;
  // Entries fill [head_, end_) then [0, tail_) when wrapped_, else [head_, tail_).
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
  std::size_t end_ = 0;
  bool wrapped_ = false;
  std::uint64_t count_ = 0;
  std::uint64_t used_ = 0;
  std::uint64_t recorded_ = 0;
  std::uint64_t evicted_ = 0;

  // Evictions per time bucket, oldest first; those past the horizon summed
  // into older_evicted_ (their latest bucket: older_until_ns_).
  struct EvictedBucket {
    std::int64_t start_ns = 0;
    std::uint64_t count = 0;
  };
  const std::int64_t bucket_ns_;
  const std::size_t max_buckets_;
  std::deque<EvictedBucket> evicted_buckets_;
  std::uint64_t older_evicted_ = 0;
  std::int64_t older_until_ns_ = INT64_MIN;
};

}  // namespace hostmesh::agent::recorder
