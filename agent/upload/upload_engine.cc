#include "agent/upload/upload_engine.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "common/base/upload_limits.h"
#include "proto/wire/packed_results.h"

namespace hostmesh::agent::upload {

std::string_view ConnectionStateName(ConnectionState state) {
  switch (state) {
    case ConnectionState::kWaiting:
      return "waiting";
    case ConnectionState::kConnecting:
      return "connecting";
    case ConnectionState::kStreaming:
      return "streaming";
    case ConnectionState::kStopped:
      return "stopped";
  }
  return "unknown";
}

UploadEngine::UploadEngine(const Clock& clock, const UploadEngineOptions& options,
                           v1::AgentHello hello, UploadChannel& channel, UnitRandom random)
    : clock_(clock),
      ack_timeout_(options.ack_timeout),
      healthy_after_(options.healthy_after),
      hello_(std::move(hello)),
      channel_(channel),
      batcher_(clock, BatchIdentity{hello_.agent_id(), hello_.boot_id()},
               options.upload.batch_max_results, options.upload.batch_max_age),
      spool_(options.upload.buffer_budget.bytes),
      random_([shared = std::make_shared<UnitRandom>(std::move(random))] { return (*shared)(); }),
      backoff_(options.upload.backoff_initial, options.upload.backoff_max, options.jitter, random_),
      busy_backoff_(options.upload.hello_timeout, 16 * options.upload.hello_timeout, Jitter::kFull,
                    random_) {}

bool UploadEngine::Append(const v1::ProbeResult& result) {
  const bool was_empty = batcher_.open_items() == 0;
  return Accepted(batcher_.Add(result), was_empty);
}

bool UploadEngine::AppendResults(std::span<const ProbeResult> results) {
  bool wake = false;
  for (const ProbeResult& result : results) {
    const bool was_empty = batcher_.open_items() == 0;
    wake |= Accepted(batcher_.AddResult(result), was_empty);
  }
  return wake;
}

bool UploadEngine::Append(const v1::PathReport& path) {
  const bool was_empty = batcher_.open_items() == 0;
  return Accepted(batcher_.Add(path), was_empty);
}

bool UploadEngine::Accepted(SharedBatch closed, bool was_empty) {
  if (!closed) return was_empty;
  spool_.Push(std::move(closed));
  return true;
}

bool UploadEngine::Append(const v1::NicTelemetry& telemetry) {
  const bool was_empty = batcher_.open_items() == 0;
  return Accepted(batcher_.Add(telemetry), was_empty);
}

bool UploadEngine::Append(const v1::FlightRecord& record) {
  // A batch of its own: were the analyzer to refuse the record, no result
  // would go with it.
  if (SharedBatch open = batcher_.Close()) spool_.Push(std::move(open));
  return Accepted(batcher_.Add(record), true);
}

AckOutcome UploadEngine::Handle(const ChannelEvent& event) {
  using Kind = ChannelEvent::Kind;
  if (event.kind == Kind::kAck) {
    const AckOutcome outcome = spool_.Apply(event.ack);
    if (outcome == AckOutcome::kProtocolError) {
      last_protocol_error_ = "the analyzer acknowledged batch " +
                             std::to_string(event.ack.batch_seq()) +
                             ", which this agent has not sent: ignored";
      return outcome;
    }
    if (event.connection == connection_ && state_ == ConnectionState::kStreaming) {
      last_ack_at_ = clock_.MonotonicNow();
      MarkHealthy();
    }
    return outcome;
  }
  if (event.connection != connection_) return AckOutcome::kIgnored;
  switch (event.kind) {
    case Kind::kOpened:
      if (state_ != ConnectionState::kConnecting) break;
      last_durable_seq_ = event.hello_reply.last_durable_batch_seq();
      peer_reads_packed_ = event.hello_reply.packed_results_format() >= wire::kPackedResultsFormat;
      if (!spool_.Rewind(last_durable_seq_)) {
        last_protocol_error_ = "the analyzer says batch " + std::to_string(last_durable_seq_) +
                               " of this boot is durable, but only batches up to " +
                               std::to_string(spool_.highest_written()) +
                               " were sent: believed for none, every held batch is sent again";
        last_durable_seq_ = 0;
      }
      state_ = ConnectionState::kStreaming;
      opened_at_ = last_ack_at_ = clock_.MonotonicNow();
      healthy_ = false;
      write_in_flight_ = false;
      ++connects_;
      break;
    case Kind::kOpenFailed:
      if (state_ == ConnectionState::kConnecting) Fail(event.error, event.deadline_exceeded);
      break;
    case Kind::kWriteDone:
      if (state_ != ConnectionState::kStreaming) break;
      write_in_flight_ = false;
      if (!event.ok) Fail("writing a batch failed");
      break;
    case Kind::kClosed:
      if (state_ == ConnectionState::kConnecting || state_ == ConnectionState::kStreaming) {
        Fail(event.error.empty() ? "the upload stream closed" : event.error);
      }
      break;
    case Kind::kAck:
      break;
  }
  return AckOutcome::kIgnored;
}

MonoTime UploadEngine::Poll() {
  const MonoTime now = clock_.MonotonicNow();
  if (SharedBatch closed = batcher_.CloseIfDue()) spool_.Push(std::move(closed));

  if (state_ == ConnectionState::kWaiting && now >= retry_at_) {
    ++connection_;
    state_ = ConnectionState::kConnecting;
    channel_.Open(connection_, hello_);
  } else if (state_ == ConnectionState::kStreaming) {
    if (now - opened_at_ >= healthy_after_) MarkHealthy();
    // Progress is any ack; a slow analyzer that acks is not stuck.
    const std::optional<MonoTime> oldest = spool_.OldestUnackedWriteAt();
    if (oldest && now - std::max(*oldest, last_ack_at_) >= ack_timeout_) {
      Fail("no acknowledgement for " +
           std::to_string(
               std::chrono::duration_cast<std::chrono::milliseconds>(ack_timeout_).count()) +
           " ms");
    } else if (!write_in_flight_) {
      if (SharedBatch batch = spool_.TakeNextToSend(now)) {
        write_in_flight_ = true;
        channel_.Write(connection_, WireForm(std::move(batch)));
      }
    }
  }
  return NextWake();
}

SharedBatch UploadEngine::WireForm(SharedBatch batch) {
  if (peer_reads_packed_ || !batch->has_packed_results()) return batch;
  // An older analyzer would skip the packed records and lose the results: a
  // copy with them as messages (rare: an analyzer rolled back under newer
  // agents). The agent's own records always read back.
  auto rows = std::make_shared<v1::UploadBatch>(*batch);
  wire::ExpandPackedResults(*rows, kMaxResultsPerBatch);
  ++batches_sent_as_rows_;
  return rows;
}

MonoTime UploadEngine::NextWake() const {
  MonoTime next = MonoTime::max();
  if (const std::optional<MonoTime> due = batcher_.Due()) next = *due;
  if (state_ == ConnectionState::kWaiting) {
    next = std::min(next, retry_at_);
  } else if (state_ == ConnectionState::kStreaming) {
    if (!healthy_) next = std::min(next, opened_at_ + healthy_after_);
    if (const std::optional<MonoTime> oldest = spool_.OldestUnackedWriteAt()) {
      next = std::min(next, std::max(*oldest, last_ack_at_) + ack_timeout_);
    }
  }
  return next;
}

void UploadEngine::Fail(std::string error, bool busy) {
  if (state_ == ConnectionState::kConnecting) {
    ++connect_failures_;
  } else {
    ++disconnects_;
  }
  channel_.Close(connection_);
  write_in_flight_ = false;
  last_error_ = std::move(error);
  state_ = ConnectionState::kWaiting;
  last_retry_delay_ = busy ? busy_backoff_.Next() : backoff_.Next();
  retry_at_ = clock_.MonotonicNow() + last_retry_delay_;
}

void UploadEngine::MarkHealthy() {
  if (healthy_) return;
  healthy_ = true;
  backoff_.Reset();
  busy_backoff_.Reset();
}

void UploadEngine::FlushPartial() {
  if (SharedBatch closed = batcher_.Close()) spool_.Push(std::move(closed));
}

void UploadEngine::Stop() {
  if (state_ == ConnectionState::kConnecting || state_ == ConnectionState::kStreaming) {
    channel_.Close(connection_);
  }
  state_ = ConnectionState::kStopped;
  write_in_flight_ = false;
}

UploadCounters UploadEngine::Counters() const {
  UploadCounters counters;
  static_cast<SpoolCounters&>(counters) = spool_.counters();
  counters.queue_depth = spool_.queue_depth();
  counters.bytes_buffered = spool_.bytes_buffered();
  counters.open_items = batcher_.open_items();
  counters.batches_closed = batcher_.last_batch_seq();
  counters.connects = connects_;
  counters.connect_failures = connect_failures_;
  counters.disconnects = disconnects_;
  counters.batches_sent_as_rows = batches_sent_as_rows_;
  return counters;
}

}  // namespace hostmesh::agent::upload
