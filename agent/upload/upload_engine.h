#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "agent/config/agent_config.h"
#include "agent/core/probe_types.h"
#include "agent/upload/backoff.h"
#include "agent/upload/batcher.h"
#include "agent/upload/spool.h"
#include "agent/upload/upload_channel.h"
#include "common/base/clock.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::agent::upload {

struct UploadEngineOptions {
  UploadConfig upload;
  // Batches written but no acknowledgement for this long: the analyzer is stuck
  // (a half-open TCP connection looks just like this), so reconnect and resend.
  std::chrono::nanoseconds ack_timeout = std::chrono::seconds{30};
  // A connection that stayed up this long (or got an ack) was healthy: the next
  // failure starts the backoff from backoff_initial again.
  std::chrono::nanoseconds healthy_after = std::chrono::seconds{10};
  Jitter jitter = Jitter::kDecorrelated;
};

// Plain numbers for /metrics. Spool counters plus the connection's.
struct UploadCounters : SpoolCounters {
  std::uint64_t queue_depth = 0;     // batches held, not yet acknowledged
  std::uint64_t bytes_buffered = 0;  // their ByteSizeLong
  std::uint64_t open_items = 0;      // in the batch still filling
  std::uint64_t batches_closed = 0;  // = last batch_seq of this boot
  std::uint64_t connects = 0;        // Hello answered and stream open
  std::uint64_t connect_failures = 0;
  std::uint64_t disconnects = 0;  // open streams lost (or given up for lack of acks)
  // Written with results as messages to an analyzer that predates packed results.
  std::uint64_t batches_sent_as_rows = 0;
};

enum class ConnectionState {
  kWaiting,     // backing off until retry_at()
  kConnecting,  // Hello sent
  kStreaming,   // writing batches, reading acks
  kStopped,     // shut down
};
std::string_view ConnectionStateName(ConnectionState state);

// The uploader's pure state machine: batcher, spool, backoff and the connection's
// lifecycle over an UploadChannel. No I/O, no threads, no waiting: a driver feeds
// it channel events and calls Poll() by the time Poll() last asked for. Tests run
// it in virtual time against a fake channel.
class UploadEngine {
 public:
  // `hello` names the agent and boot on every batch; the engine starts Waiting
  // with no delay, so the first Poll connects.
  UploadEngine(const Clock& clock, const UploadEngineOptions& options, v1::AgentHello hello,
               UploadChannel& channel, UnitRandom random);

  // Producer side: touches only the batcher and the spool, never the channel, so
  // probing goes on whatever the analyzer does. Returns true when the driver
  // should Poll early (a batch closed, or a new batch started its age timer).
  bool Append(const v1::ProbeResult& result);
  bool Append(const v1::PathReport& path);
  bool Append(const v1::NicTelemetry& telemetry);
  bool Append(const v1::FlightRecord& record);
  // Results into the batches' packed records (Batcher::AddResult).
  bool AppendResults(std::span<const ProbeResult> results);

  // Applies one event from the channel; events of a connection already given up
  // are ignored, except acks (an ack is true whichever stream brought it).
  // Returns what an ack did (kIgnored for other events).
  AckOutcome Handle(const ChannelEvent& event);

  // Does what is due now: closes an aged batch, connects after the backoff, writes
  // the next batch, gives up on a stalled stream. Returns when it must run again
  // at the latest (MonoTime::max() when only an event or Append can move it).
  MonoTime Poll();

  // Shutdown: closes the batch still filling so it can be sent.
  void FlushPartial();
  // Gives up the connection and stops reconnecting. Batches stay in the spool.
  void Stop();

  // Nothing filling, nothing unacknowledged.
  void SetLoadShedding(std::optional<v1::LoadShedding> state) {
    batcher_.SetLoadShedding(std::move(state));
  }
  bool Settled() const { return batcher_.open_items() == 0 && spool_.empty(); }

  ConnectionState state() const { return state_; }
  MonoTime retry_at() const { return retry_at_; }
  std::chrono::nanoseconds last_retry_delay() const { return last_retry_delay_; }
  std::uint64_t last_durable_seq() const { return last_durable_seq_; }
  bool peer_reads_packed() const { return peer_reads_packed_; }
  const std::string& last_error() const { return last_error_; }
  // The latest protocol error of the analyzer (an ack or durable claim for a
  // batch never sent); empty when none.
  const std::string& last_protocol_error() const { return last_protocol_error_; }
  std::uint64_t protocol_errors() const { return spool_.counters().protocol_errors; }
  UploadCounters Counters() const;

 private:
  bool Accepted(SharedBatch closed, bool was_empty);
  // `busy`: the attempt ran out of its deadline (the analyzer is up and busy).
  void Fail(std::string error, bool busy = false);
  void MarkHealthy();
  MonoTime NextWake() const;
  // `batch` as this connection's analyzer reads it.
  SharedBatch WireForm(SharedBatch batch);

  const Clock& clock_;
  std::chrono::nanoseconds ack_timeout_;
  std::chrono::nanoseconds healthy_after_;
  v1::AgentHello hello_;
  UploadChannel& channel_;
  Batcher batcher_;
  Spool spool_;
  UnitRandom random_;  // one sequence of draws, shared by both backoffs
  Backoff backoff_;
  // After attempts that ran out of their deadline: the fleet's handshakes are
  // queued at the analyzer, and retrying within a second adds to the queue.
  // Full jitter over the deadline, doubling (up to 16 deadlines) while they
  // keep timing out, spreads the fleet's next attempts over time: at most
  // fleet / deadline arrive per second, then half that, until the analyzer
  // keeps up, where every agent retrying at once would have everyone's
  // handshake miss the deadline together (bench/reconnect_stampede).
  Backoff busy_backoff_;

  ConnectionState state_ = ConnectionState::kWaiting;
  std::uint64_t connection_ = 0;  // number of the current (or last) connection
  MonoTime retry_at_ = MonoTime::min();
  std::chrono::nanoseconds last_retry_delay_{0};
  MonoTime opened_at_{};
  MonoTime last_ack_at_{};
  bool healthy_ = false;
  bool write_in_flight_ = false;
  std::uint64_t last_durable_seq_ = 0;
  // The analyzer of this connection reads packed results (HelloReply);
  // batches that hold them go to others as messages (WireForm).
  bool peer_reads_packed_ = false;
  std::uint64_t batches_sent_as_rows_ = 0;
  std::string last_error_;
  std::string last_protocol_error_;

  std::uint64_t connects_ = 0;
  std::uint64_t connect_failures_ = 0;
  std::uint64_t disconnects_ = 0;
};

}  // namespace hostmesh::agent::upload
