#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "agent/upload/shared_batch.h"
#include "common/base/clock.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::agent::upload {

// Plain numbers; the I/O layer exports them as metrics.
struct SpoolCounters {
  std::uint64_t batches_sent = 0;             // every write, resends included
  std::uint64_t batches_resent = 0;           // writes of a batch written before
  std::uint64_t batches_acknowledged = 0;     // accepted + duplicate + already durable
  std::uint64_t batches_duplicate = 0;        // acknowledged as DUPLICATE
  std::uint64_t batches_already_durable = 0;  // skipped by HelloReply.last_durable_batch_seq
  std::uint64_t batches_rejected = 0;         // REJECTED: dropped, resending would not help
  std::uint64_t batches_dropped = 0;          // over the byte budget, never acknowledged
  std::uint64_t results_dropped = 0;
  std::uint64_t paths_dropped = 0;
  std::uint64_t bytes_dropped = 0;
  std::uint64_t acks_ignored = 0;  // unknown batch_seq (already settled) or unknown status
  // The analyzer acknowledged, or said durable, a batch this agent never sent:
  // believed for nothing (DESIGN 7: an agent believes an ack only for what it sent).
  std::uint64_t protocol_errors = 0;
};

// What an acknowledgement did to the spool.
enum class AckOutcome {
  kAcknowledged,   // ACCEPTED: the batch is durable and gone from the spool
  kDuplicate,      // DUPLICATE: durable already; gone from the spool
  kRejected,       // REJECTED: gone from the spool, its results are lost
  kIgnored,        // not in the spool (settled before, or dropped) or unknown status
  kProtocolError,  // for a batch never sent: ignored, and counted
};

// Every closed batch stays here until the analyzer acknowledges it, so no result
// is lost to an analyzer restart. Bounded by a byte budget (MemoryBytes of each
// batch: the memory it holds, not its wire size): past it the OLDEST unacknowledged batches go
// first, since the newest data is what on-call looks at. Batches are sent in batch_seq order and,
// after a reconnect, all unacknowledged ones again in the same order (ingest is idempotent, so
// resending is always safe).
class Spool {
 public:
  explicit Spool(std::uint64_t budget_bytes);

  // Keeps `batch` (batch_seq must grow), then drops oldest batches while over
  // budget; a batch larger than the whole budget is dropped too.
  void Push(SharedBatch batch);

  // The next batch to write on the current connection, marked as written at
  // `now`; null when every held batch was written on it.
  SharedBatch TakeNextToSend(MonoTime now);
  // When the oldest batch written on this connection and not yet acknowledged
  // was written; nullopt when none waits (detects an analyzer that stopped acking).
  std::optional<MonoTime> OldestUnackedWriteAt() const;

  // Idempotent: a second ack of the same batch_seq is ignored.
  AckOutcome Apply(const v1::UploadAck& ack);

  // A new connection: batches up to `last_durable_seq` are settled (the analyzer
  // said so in its HelloReply); every other one will be written again, in order.
  // A claim beyond highest_written() is a protocol error: nothing is settled,
  // everything is written again (ingest is idempotent), and false is returned.
  bool Rewind(std::uint64_t last_durable_seq);

  // The largest batch_seq ever written, on any connection of this boot.
  std::uint64_t highest_written() const { return highest_written_; }

  // What `batch` holds in memory: its arena's blocks when it was built in one
  // (the batcher's are), else its wire size.
  static std::uint64_t MemoryBytes(const v1::UploadBatch& batch);

  bool empty() const { return entries_.empty(); }
  std::uint64_t queue_depth() const { return entries_.size(); }
  std::uint64_t bytes_buffered() const { return bytes_; }
  std::uint64_t budget_bytes() const { return budget_; }
  const SpoolCounters& counters() const { return counters_; }

 private:
  struct Entry {
    SharedBatch batch;
    std::uint64_t bytes = 0;
    std::uint32_t writes = 0;
    MonoTime written_at{};
  };

  void DropOldest();

  std::uint64_t budget_;
  std::map<std::uint64_t, Entry> entries_;  // by batch_seq: oldest first
  std::uint64_t bytes_ = 0;
  // Every held batch below this seq was written on the current connection.
  std::uint64_t send_cursor_ = 0;
  std::uint64_t highest_written_ = 0;
  SpoolCounters counters_;
};

}  // namespace hostmesh::agent::upload
