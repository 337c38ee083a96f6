#include "agent/recorder/flight_ring.h"

#include <stdexcept>

namespace hostmesh::agent::recorder {
namespace {

// Floor division, also for negative times.
std::int64_t BucketOf(std::int64_t t, std::int64_t bucket) {
  const std::int64_t q = t / bucket;
  return (t % bucket != 0 && t < 0 ? q - 1 : q) * bucket;
}

}  // namespace

FlightRing::FlightRing(std::size_t capacity_bytes, std::int64_t eviction_bucket_ns,
                       std::size_t eviction_buckets)
    : buf_(capacity_bytes), bucket_ns_(eviction_bucket_ns), max_buckets_(eviction_buckets) {
  if (eviction_bucket_ns <= 0) throw std::invalid_argument("eviction bucket must be positive");
}

void FlightRing::NoteEvictionInNewBucket(std::int64_t time_ns) {
  const std::int64_t bucket = BucketOf(time_ns, bucket_ns_);
  evicted_buckets_.push_back({bucket, 1});
  if (evicted_buckets_.size() > max_buckets_) {
    older_evicted_ += evicted_buckets_.front().count;
    older_until_ns_ = evicted_buckets_.front().start_ns + bucket_ns_;
    evicted_buckets_.pop_front();
  }
}

inline void FlightRing::NoteEviction(std::int64_t time_ns) {
  // Sources push nearly in time order; a late one joins the newest bucket.
  // Most evictions fall in it: no division for them.
  if (!evicted_buckets_.empty()) {
    const std::int64_t newest = evicted_buckets_.back().start_ns;
    if (time_ns < newest || time_ns - newest < bucket_ns_) {
      ++evicted_buckets_.back().count;
      return;
    }
  }
  NoteEvictionInNewBucket(time_ns);
}

// Inline, like NoteEviction's usual case: once the ring is full every push
// evicts, and the calls cost as much as the work.
inline void FlightRing::EvictOldest() {
  const std::span<const std::uint8_t> at(buf_.data() + head_, buf_.size() - head_);
  const std::size_t size = PackedSizeAt(at);
  NoteEviction(PackedTimeAt(at));
  head_ += size;
  used_ -= size;
  --count_;
  ++evicted_;
  if (wrapped_ && head_ == end_) {
    head_ = 0;
    wrapped_ = false;
  }
}

bool FlightRing::Push(const FlightEntry& entry) {
  const std::size_t size = PackedSize(entry);
  if (size > buf_.size()) return false;
  for (;;) {
    if (count_ == 0) {
      head_ = tail_ = end_ = 0;
      wrapped_ = false;
    }
    if (!wrapped_) {
      if (tail_ + size <= buf_.size()) break;
      // No room before the end: the upper part ends here, writing goes on at 0.
      end_ = tail_;
      tail_ = 0;
      wrapped_ = true;
      continue;
    }
    if (tail_ + size <= head_) break;
    EvictOldest();
  }
  Pack(entry, std::span<std::uint8_t>(buf_.data() + tail_, size));
  tail_ += size;
  used_ += size;
  ++count_;
  ++recorded_;
  return true;
}

RingSlice FlightRing::Slice(std::int64_t from_ns, std::int64_t to_ns) const {
  RingSlice slice;
  ForEach([&](std::span<const std::uint8_t> packed) {
    const std::int64_t t = Unpack(packed).time_ns;
    if (t < from_ns || t >= to_ns) return;
    slice.bytes.insert(slice.bytes.end(), packed.begin(), packed.end());
    ++slice.events;
  });
  for (const EvictedBucket& b : evicted_buckets_) {
    if (b.start_ns + bucket_ns_ > from_ns && b.start_ns < to_ns) slice.dropped_before += b.count;
  }
  if (older_until_ns_ > from_ns) slice.dropped_before += older_evicted_;
  return slice;
}

RingCounters FlightRing::counters() const {
  return {count_, used_, buf_.size(), recorded_, evicted_};
}

}  // namespace hostmesh::agent::recorder
