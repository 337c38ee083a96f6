#include "agent/upload/spool.h"

#include <algorithm>
#include <utility>

#include "proto/wire/packed_results.h"

namespace hostmesh::agent::upload {

Spool::Spool(std::uint64_t budget_bytes) : budget_(budget_bytes) {}

std::uint64_t Spool::MemoryBytes(const v1::UploadBatch& batch) {
  // In its arena a batch takes more than its wire size (message objects,
  // block slack): the arena's blocks, and the packed records' string (on the
  // heap), are what the budget must bound. Reading them walks nothing.
  if (google::protobuf::Arena* arena = batch.GetArena()) {
    const std::uint64_t records =
        batch.has_packed_results() ? batch.packed_results().records().capacity() : 0;
    return arena->SpaceAllocated() + records;
  }
  return batch.ByteSizeLong();
}

void Spool::Push(SharedBatch batch) {
  const std::uint64_t seq = batch->batch_seq();
  Entry entry;
  entry.bytes = MemoryBytes(*batch);
  entry.batch = std::move(batch);
  bytes_ += entry.bytes;
  entries_.insert_or_assign(seq, std::move(entry));
  while (bytes_ > budget_ && !entries_.empty()) DropOldest();
}

void Spool::DropOldest() {
  const auto oldest = entries_.begin();
  const Entry& entry = oldest->second;
  ++counters_.batches_dropped;
  counters_.results_dropped += wire::ResultCount(*entry.batch);
  counters_.paths_dropped += static_cast<std::uint64_t>(entry.batch->paths_size());
  counters_.bytes_dropped += entry.bytes;
  bytes_ -= entry.bytes;
  entries_.erase(oldest);
}

SharedBatch Spool::TakeNextToSend(MonoTime now) {
  const auto next = entries_.lower_bound(send_cursor_);
  if (next == entries_.end()) return nullptr;
  Entry& entry = next->second;
  ++counters_.batches_sent;
  if (entry.writes++ > 0) ++counters_.batches_resent;
  entry.written_at = now;
  send_cursor_ = next->first + 1;
  highest_written_ = std::max(highest_written_, next->first);
  return entry.batch;
}

std::optional<MonoTime> Spool::OldestUnackedWriteAt() const {
  // Batches go out in seq order, so the oldest written one is the first held.
  if (entries_.empty() || entries_.begin()->first >= send_cursor_) return std::nullopt;
  return entries_.begin()->second.written_at;
}

AckOutcome Spool::Apply(const v1::UploadAck& ack) {
  // Batches are written in seq order, so a held batch at or below the highest
  // written one has been written.
  if (ack.batch_seq() > highest_written_) {
    ++counters_.protocol_errors;
    return AckOutcome::kProtocolError;
  }
  const auto it = entries_.find(ack.batch_seq());
  if (it == entries_.end()) {
    ++counters_.acks_ignored;
    return AckOutcome::kIgnored;
  }
  AckOutcome outcome = AckOutcome::kIgnored;
  switch (ack.status()) {
    case v1::UploadAck::STATUS_ACCEPTED:
      ++counters_.batches_acknowledged;
      outcome = AckOutcome::kAcknowledged;
      break;
    case v1::UploadAck::STATUS_DUPLICATE:
      ++counters_.batches_acknowledged;
      ++counters_.batches_duplicate;
      outcome = AckOutcome::kDuplicate;
      break;
    case v1::UploadAck::STATUS_REJECTED:
      ++counters_.batches_rejected;
      outcome = AckOutcome::kRejected;
      break;
    default:
      // Keep the batch: an analyzer that cannot say what happened has not said
      // it is durable.
      ++counters_.acks_ignored;
      return AckOutcome::kIgnored;
  }
  bytes_ -= it->second.bytes;
  entries_.erase(it);
  return outcome;
}

bool Spool::Rewind(std::uint64_t last_durable_seq) {
  send_cursor_ = 0;
  if (last_durable_seq > highest_written_) {
    ++counters_.protocol_errors;
    return false;
  }
  while (!entries_.empty() && entries_.begin()->first <= last_durable_seq) {
    ++counters_.batches_acknowledged;
    ++counters_.batches_already_durable;
    bytes_ -= entries_.begin()->second.bytes;
    entries_.erase(entries_.begin());
  }
  return true;
}

}  // namespace hostmesh::agent::upload
