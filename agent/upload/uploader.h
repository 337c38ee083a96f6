#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "agent/upload/deferred_channel.h"
#include "agent/upload/grpc_upload_channel.h"
#include "agent/upload/upload_channel.h"
#include "agent/upload/upload_engine.h"
#include "common/base/clock.h"
#include "common/base/logging.h"
#include "hostmesh/v1/ingest.pb.h"

namespace spdlog {
class logger;
}

namespace hostmesh::agent::upload {

struct UploaderOptions {
  std::string analyzer_address;  // "host:port"
  ChannelSecurity security;      // mutual TLS unless security.insecure
  UploadEngineOptions engine;
  std::uint64_t jitter_seed = 0;  // 0: from std::random_device
  // Budget drops are logged at warn at most this often (they come in runs).
  std::chrono::nanoseconds drop_log_interval = std::chrono::seconds{10};
  // Answers the analyzer's capture requests (UploadAck.captures) with a
  // flight record to upload, or nullopt when refused; called on the
  // uploader's thread outside its lock. Empty: requests are ignored.
  std::function<std::optional<v1::FlightRecord>(const v1::CaptureRequest&, MonoTime)>
      answer_capture;
};

// Streams probe results and path reports to the analyzer from one background
// thread. Append never waits for the network: it only touches the batcher and
// the spool under a short lock, so probing goes on while the analyzer is down.
class Uploader {
 public:
  // Makes the transport; the default is GrpcUploadChannel to analyzer_address.
  using ChannelFactory = std::function<std::unique_ptr<UploadChannel>(ChannelEventSink)>;

  // `hello` is sent on every connection; its agent_id and boot_id label every
  // batch. `clock` must be a real clock (the thread waits in real time).
  Uploader(const Clock& clock, UploaderOptions options, v1::AgentHello hello,
           ChannelFactory make_channel = {});
  // Stops at once without flushing (call Shutdown first to flush).
  ~Uploader();

  Uploader(const Uploader&) = delete;
  Uploader& operator=(const Uploader&) = delete;

  // Starts the thread; it connects right away and keeps retrying with backoff.
  void Start();

  // Copied into the open batch's arena as a message of its own (the form of
  // agents that predate result columns; tests of the analyzer's row path).
  void Append(const v1::ProbeResult& result);
  void Append(const v1::PathReport& path);
  void Append(const v1::NicTelemetry& telemetry);
  // A probe loop turn's results under one lock, into the batches' packed
  // records: no message built per result.
  void AppendResults(std::span<const ProbeResult> results);
  // Self-protection's state, stamped on every batch closed from now on.
  void SetLoadShedding(const v1::LoadShedding& state);

  // Closes the batch still filling, keeps sending and reconnecting until every
  // batch is acknowledged or `deadline` passes, then closes the connection and
  // stops the thread. Returns true when nothing was left unacknowledged.
  bool Shutdown(MonoTime deadline);

  UploadCounters Counters() const;

 private:
  void Run();
  // Passes the commands the engine recorded on to the real channel, outside mu_.
  void IssueCommands(std::vector<DeferredChannel::Command> commands);
  void Poke();
  void Post(ChannelEvent event);
  // Log lines are gathered under the lock and written after it, so a slow
  // stderr never holds up Append.
  struct Note {
    LogLevel level = LogLevel::kInfo;
    std::string text;
  };
  void HandleLocked(const ChannelEvent& event, std::vector<Note>& notes);
  // The flight records the acks among `events` ask for (outside mu_).
  std::vector<v1::FlightRecord> AnswerCaptures(const std::vector<ChannelEvent>& events);
  void NoteTransition(ConnectionState before, std::vector<Note>& notes);
  void NoteDropsLocked(MonoTime now, std::vector<Note>& notes);

  const Clock& clock_;
  const UploaderOptions options_;
  std::shared_ptr<spdlog::logger> log_;

  // The real transport: called only by the thread (or, once it has stopped, by
  // Shutdown and the destructor), never under mu_.
  std::unique_ptr<UploadChannel> channel_;

  // Guards the engine; the engine's channel commands are only recorded under it.
  mutable std::mutex mu_;
  DeferredChannel deferred_;
  std::unique_ptr<UploadEngine> engine_;
  std::uint64_t failures_in_a_row_ = 0;  // so an analyzer that stays down warns once
  std::uint64_t drops_logged_ = 0;
  MonoTime drops_logged_at_ = MonoTime::min();
  std::uint64_t protocol_errors_logged_ = 0;
  MonoTime protocol_errors_logged_at_ = MonoTime::min();

  // A leaf lock: the channel's threads take only this one, so they never wait
  // for the engine lock that is held while calling into the channel.
  std::mutex inbox_mu_;
  std::condition_variable inbox_cv_;
  std::vector<ChannelEvent> inbox_;
  bool poked_ = false;
  bool stop_ = false;
  bool draining_ = false;
  MonoTime drain_deadline_ = MonoTime::max();

  std::thread thread_;
};

}  // namespace hostmesh::agent::upload
