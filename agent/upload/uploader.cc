#include "agent/upload/uploader.h"

#include <spdlog/logger.h>

#include <algorithm>
#include <random>
#include <utility>

#include "agent/upload/grpc_upload_channel.h"
#include "common/base/logging.h"
#include "common/base/thread_name.h"
#include "common/base/upload_limits.h"

namespace hostmesh::agent::upload {

namespace {

std::uint64_t SeedFromDevice() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

long long Millis(std::chrono::nanoseconds d) {
  return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

}  // namespace

Uploader::Uploader(const Clock& clock, UploaderOptions options, v1::AgentHello hello,
                   ChannelFactory make_channel)
    : clock_(clock), options_(std::move(options)), log_(GetLogger("uploader")) {
  ChannelEventSink sink = [this](ChannelEvent event) { Post(std::move(event)); };
  if (make_channel) {
    channel_ = make_channel(std::move(sink));
  } else {
    channel_ = std::make_unique<GrpcUploadChannel>(
        GrpcChannelOptions{options_.analyzer_address, options_.engine.upload.hello_timeout,
                           options_.security},
        std::move(sink));
  }
  const std::uint64_t seed = options_.jitter_seed != 0 ? options_.jitter_seed : SeedFromDevice();
  engine_ = std::make_unique<UploadEngine>(clock_, options_.engine, std::move(hello), deferred_,
                                           MakeUnitRandom(seed));
}

Uploader::~Uploader() {
  {
    std::lock_guard lock(inbox_mu_);
    stop_ = true;
  }
  inbox_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::vector<DeferredChannel::Command> commands;
  {
    std::lock_guard lock(mu_);
    engine_->Stop();
    commands = deferred_.Take();
  }
  IssueCommands(std::move(commands));
  // Waits for gRPC's callbacks, which post into the inbox: before the inbox goes.
  channel_.reset();
}

void Uploader::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    SetThreadName("hm-upload");
    Run();
  });
}

void Uploader::Append(const v1::ProbeResult& result) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    wake = engine_->Append(result);
  }
  if (wake) Poke();
}

void Uploader::AppendResults(std::span<const ProbeResult> results) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    wake = engine_->AppendResults(results);
  }
  if (wake) Poke();
}

void Uploader::Append(const v1::PathReport& path) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    wake = engine_->Append(path);
  }
  if (wake) Poke();
}

void Uploader::Append(const v1::NicTelemetry& telemetry) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    wake = engine_->Append(telemetry);
  }
  if (wake) Poke();
}

void Uploader::SetLoadShedding(const v1::LoadShedding& state) {
  std::lock_guard lock(mu_);
  engine_->SetLoadShedding(state);
}

bool Uploader::Shutdown(MonoTime deadline) {
  {
    std::lock_guard lock(mu_);
    engine_->FlushPartial();
  }
  {
    std::lock_guard lock(inbox_mu_);
    draining_ = true;
    drain_deadline_ = deadline;
    poked_ = true;
  }
  inbox_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::vector<DeferredChannel::Command> commands;
  bool settled = false;
  UploadCounters counters;
  {
    std::lock_guard lock(mu_);
    engine_->Stop();
    commands = deferred_.Take();
    settled = engine_->Settled();
    counters = engine_->Counters();
  }
  IssueCommands(std::move(commands));
  if (!settled) {
    log_->warn("shutdown: {} batches ({} bytes) were never acknowledged", counters.queue_depth,
               counters.bytes_buffered);
  }
  return settled;
}

UploadCounters Uploader::Counters() const {
  std::lock_guard lock(mu_);
  return engine_->Counters();
}

void Uploader::Poke() {
  {
    std::lock_guard lock(inbox_mu_);
    poked_ = true;
  }
  inbox_cv_.notify_one();
}

void Uploader::Post(ChannelEvent event) {
  {
    std::lock_guard lock(inbox_mu_);
    inbox_.push_back(std::move(event));
  }
  inbox_cv_.notify_one();
}

void Uploader::Run() {
  std::vector<ChannelEvent> events;
  std::vector<Note> notes;
  for (;;) {
    bool stop = false;
    bool draining = false;
    MonoTime drain_deadline;
    {
      std::lock_guard lock(inbox_mu_);
      events.swap(inbox_);
      poked_ = false;
      stop = stop_;
      draining = draining_;
      drain_deadline = drain_deadline_;
    }

    bool finished = stop;
    MonoTime next = MonoTime::max();
    std::vector<DeferredChannel::Command> commands;
    // Extracted before taking mu_: a ring's worth of encoding never holds up Append.
    std::vector<v1::FlightRecord> records = AnswerCaptures(events);
    {
      std::lock_guard lock(mu_);
      for (const ChannelEvent& event : events) HandleLocked(event, notes);
      for (const v1::FlightRecord& record : records) engine_->Append(record);
      if (!finished) {
        const ConnectionState before = engine_->state();
        next = engine_->Poll();
        NoteTransition(before, notes);
        const MonoTime now = clock_.MonotonicNow();
        NoteDropsLocked(now, notes);
        if (draining) {
          finished = engine_->Settled() || now >= drain_deadline;
          next = std::min(next, drain_deadline);
        }
      }
      if (finished) engine_->Stop();
      commands = deferred_.Take();
    }
    IssueCommands(std::move(commands));
    events.clear();
    for (const Note& note : notes) {
      if (note.level == LogLevel::kWarn) {
        log_->warn("{}", note.text);
      } else if (note.level == LogLevel::kDebug) {
        log_->debug("{}", note.text);
      } else {
        log_->info("{}", note.text);
      }
    }
    notes.clear();
    if (finished) return;

    std::unique_lock lock(inbox_mu_);
    const auto ready = [this] { return !inbox_.empty() || poked_ || stop_; };
    if (next == MonoTime::max()) {
      inbox_cv_.wait(lock, ready);
    } else {
      const auto wait = next - clock_.MonotonicNow();
      if (wait > std::chrono::nanoseconds::zero()) inbox_cv_.wait_for(lock, wait, ready);
    }
  }
}

std::vector<v1::FlightRecord> Uploader::AnswerCaptures(const std::vector<ChannelEvent>& events) {
  std::vector<v1::FlightRecord> records;
  if (!options_.answer_capture) return records;
  for (const ChannelEvent& event : events) {
    if (event.kind != ChannelEvent::Kind::kAck) continue;
    // Past the bound an ack may carry, the analyzer is not one to follow.
    const int n = std::min(event.ack.captures_size(), static_cast<int>(kMaxCapturesPerAck));
    for (int i = 0; i < n; ++i) {
      if (auto record = options_.answer_capture(event.ack.captures(i), clock_.MonotonicNow())) {
        records.push_back(std::move(*record));
      }
    }
  }
  return records;
}

void Uploader::IssueCommands(std::vector<DeferredChannel::Command> commands) {
  DeferredChannel::Replay(commands, *channel_);
}

void Uploader::HandleLocked(const ChannelEvent& event, std::vector<Note>& notes) {
  const ConnectionState before = engine_->state();
  const AckOutcome outcome = engine_->Handle(event);
  const MonoTime now = clock_.MonotonicNow();
  if (engine_->protocol_errors() != protocol_errors_logged_ &&
      (protocol_errors_logged_at_ == MonoTime::min() ||
       now - protocol_errors_logged_at_ >= options_.drop_log_interval)) {
    // A lying analyzer is worth hearing of (it cannot make the agent drop
    // data), at most once per drop_log_interval.
    protocol_errors_logged_ = engine_->protocol_errors();
    protocol_errors_logged_at_ = now;
    notes.push_back({LogLevel::kWarn, "protocol error from analyzer " + options_.analyzer_address +
                                          ": " + engine_->last_protocol_error() + " (" +
                                          std::to_string(protocol_errors_logged_) + " so far)"});
  }
  if (outcome == AckOutcome::kRejected) {
    notes.push_back({LogLevel::kWarn, "analyzer rejected batch " +
                                          std::to_string(event.ack.batch_seq()) +
                                          " (its results are dropped): " + event.ack.error()});
  }
  NoteTransition(before, notes);
}

void Uploader::NoteTransition(ConnectionState before, std::vector<Note>& notes) {
  const ConnectionState after = engine_->state();
  if (after == before) return;
  const std::string& address = options_.analyzer_address;
  if (after == ConnectionState::kStreaming) {
    const UploadCounters counters = engine_->Counters();
    notes.push_back(
        {LogLevel::kInfo, "connected to analyzer " + address + " (durable up to batch " +
                              std::to_string(engine_->last_durable_seq()) + "); " +
                              std::to_string(counters.queue_depth) + " batches to send"});
    if (!engine_->peer_reads_packed()) {
      notes.push_back(
          {LogLevel::kWarn, "analyzer " + address +
                                " predates packed probe results: results go as one message each, "
                                "at more CPU and bytes per probe, until it is upgraded "
                                "(hostmesh_agent_upload_batches_sent_as_rows_total)"});
    }
    failures_in_a_row_ = 0;
  } else if (after == ConnectionState::kWaiting && before == ConnectionState::kConnecting) {
    // The first failure in a row is news; the rest only say it is still down.
    const bool first = failures_in_a_row_++ == 0;
    notes.push_back({first ? LogLevel::kWarn : LogLevel::kDebug,
                     "cannot reach analyzer " + address + ": " + engine_->last_error() +
                         "; buffering results, retry in " +
                         std::to_string(Millis(engine_->last_retry_delay())) + " ms"});
  } else if (after == ConnectionState::kWaiting && before == ConnectionState::kStreaming) {
    notes.push_back({LogLevel::kWarn, "lost the upload stream to " + address + ": " +
                                          engine_->last_error() + "; reconnecting in " +
                                          std::to_string(Millis(engine_->last_retry_delay())) +
                                          " ms"});
  }
}

void Uploader::NoteDropsLocked(MonoTime now, std::vector<Note>& notes) {
  const UploadCounters counters = engine_->Counters();
  if (counters.batches_dropped == drops_logged_) return;
  if (drops_logged_at_ != MonoTime::min() && now - drops_logged_at_ < options_.drop_log_interval) {
    return;
  }
  notes.push_back({LogLevel::kWarn, "upload buffer over its budget of " +
                                        std::to_string(options_.engine.upload.buffer_budget.bytes) +
                                        " bytes: dropped the oldest batches (" +
                                        std::to_string(counters.batches_dropped) + " batches, " +
                                        std::to_string(counters.results_dropped) + " results, " +
                                        std::to_string(counters.bytes_dropped) + " bytes so far)"});
  drops_logged_ = counters.batches_dropped;
  drops_logged_at_ = now;
}

}  // namespace hostmesh::agent::upload
