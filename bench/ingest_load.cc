#include "bench/ingest_load.h"

#include <grpcpp/alarm.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>

#include "bench/fleet_agent.h"
#include "hostmesh/v1/ingest.grpc.pb.h"
#include "proto/wire/packed_results.h"

namespace hostmesh::bench {
namespace {

using Steady = std::chrono::steady_clock;
constexpr const char* kUploadMethod = "/hostmesh.v1.AgentIngest/Upload";

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Batch bodies shared by every stream: results and path reports only; a
// stream prepends its header (agent, boot, sequence). Protobuf merges
// concatenated encodings, so header + body is one UploadBatch on the wire.
struct Bodies {
  std::vector<grpc::Slice> slices;
  std::vector<int> results;
  std::size_t bytes = 0;
};

Bodies MakeBodies(int count, int results_per_batch, bool packed_results) {
  Bodies out;
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  // One agent's batches of `results_per_batch` results (80 a second): the
  // span is chosen so the probes fit, and every batch starts a little back.
  // The agent has traced its first pool already (steady state: about 4 path
  // reports a second, not the 896 of a fresh start).
  const std::int64_t span = static_cast<std::int64_t>(results_per_batch) * 1'000'000'000 / 80;
  const std::int64_t warm_up = 20'000'000'000;
  FleetAgent agent(0, now - span * count - warm_up - 1'000'000'000);
  for (std::int64_t t = now - span * count - warm_up; t < now - span * count; t += 1'000'000'000) {
    agent.Batch(t, t + 1'000'000'000);
  }
  for (int i = 0; i < count; ++i) {
    const std::int64_t from = now - span * (count - i);
    v1::UploadBatch body = agent.Batch(from, from + span);
    body.clear_schema_version();
    body.clear_agent_id();
    body.clear_boot_id();
    body.clear_batch_seq();
    body.clear_created_ns();
    if (packed_results) {
      std::int64_t previous_send = 0;
      wire::AppendRowsToPacked(body.results(), *body.mutable_packed_results(), previous_send);
      body.clear_results();
    }
    const std::string bytes = body.SerializeAsString();
    out.bytes += bytes.size();
    out.results.push_back(static_cast<int>(wire::ResultCount(body)));
    out.slices.emplace_back(bytes);
  }
  return out;
}

std::string AgentId(int stream) {
  return "bench-" + std::to_string(stream);
}
std::string HostileId(int stream) {
  return "hostile-" + std::to_string(stream);
}

std::string ReadFile(const std::string& path, char* error, std::size_t error_size) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) text.clear();
  if (text.empty()) std::snprintf(error, error_size, "cannot read %s", path.c_str());
  return text;
}

enum class Op { kStart, kWrite, kRead, kWritesDone, kFinish, kAlarm };
struct Caller;
struct Tag {
  Caller* caller;
  Op op;
};
// A stream's side of the completion queue: honest and hostile streams alike.
struct Caller {
  virtual ~Caller() = default;
  // True when this event finished an honest stream for good.
  virtual bool OnEvent(Op op, bool ok, grpc::CompletionQueue* cq) = 0;
};

struct ThreadStats {
  std::uint64_t accepted = 0, other = 0, broken = 0, results = 0, wire = 0;
  std::vector<float> latency_ms;
};

struct Stream final : Caller {
  int index = 0;
  const LoadOptions* options = nullptr;
  const Bodies* bodies = nullptr;
  ThreadStats* stats = nullptr;
  Steady::time_point start;  // first batch due (paced)

  grpc::ClientContext context;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call;
  grpc::ByteBuffer read_buffer;
  grpc::Status status;
  grpc::Alarm alarm;
  bool alarm_set = false;
  bool writing = false;
  bool writes_done = false;
  bool finished = false;
  int sent = 0;
  int acked = 0;
  std::vector<Steady::time_point> sent_at;
  Tag tags[6];

  Tag* tag(Op op) { return &tags[static_cast<int>(op)]; }

  void Begin(grpc::GenericStub& stub, grpc::CompletionQueue* cq) {
    for (int i = 0; i < 6; ++i) tags[i] = {this, static_cast<Op>(i)};
    sent_at.resize(static_cast<std::size_t>(options->batches));
    call = stub.PrepareCall(&context, kUploadMethod, cq);
    call->StartCall(tag(Op::kStart));
  }

  void MaybeWrite(grpc::CompletionQueue* cq) {
    if (writing || finished) return;
    if (sent == options->batches) {
      if (!writes_done) {
        writes_done = true;
        call->WritesDone(tag(Op::kWritesDone));
      }
      return;
    }
    const auto now = Steady::now();
    if (options->rate > 0) {
      const auto due = start + std::chrono::duration_cast<Steady::duration>(
                                   std::chrono::duration<double>(sent / options->rate));
      if (now < due) {
        if (!alarm_set) {
          alarm_set = true;
          alarm.Set(cq, std::chrono::system_clock::now() + (due - now), tag(Op::kAlarm));
        }
        return;
      }
    } else if (sent - acked >= options->in_flight) {
      return;
    }
    v1::UploadBatch header;
    header.set_schema_version(v1::SCHEMA_VERSION_1);
    header.set_agent_id(AgentId(index));
    header.set_boot_id(1);
    header.set_batch_seq(static_cast<std::uint64_t>(sent) + 1);
    const std::size_t body = static_cast<std::size_t>(sent) % bodies->slices.size();
    header.set_created_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count());
    const grpc::Slice slices[] = {grpc::Slice(header.SerializeAsString()), bodies->slices[body]};
    grpc::ByteBuffer buffer(slices, 2);
    stats->wire += buffer.Length();
    sent_at[static_cast<std::size_t>(sent)] = now;
    ++sent;
    writing = true;
    call->Write(buffer, tag(Op::kWrite));
  }

  bool OnEvent(Op op, bool ok, grpc::CompletionQueue* cq) override {
    switch (op) {
      case Op::kStart:
        if (!ok) {
          call->Finish(&status, tag(Op::kFinish));
          return false;
        }
        call->Read(&read_buffer, tag(Op::kRead));
        MaybeWrite(cq);
        return false;
      case Op::kAlarm:
        alarm_set = false;
        MaybeWrite(cq);
        return false;
      case Op::kWrite:
        writing = false;
        if (!ok) {
          Break();  // the read side learns why
          return false;
        }
        MaybeWrite(cq);
        return false;
      case Op::kWritesDone:
        return false;
      case Op::kRead: {
        if (!ok) {  // the server finished the stream
          call->Finish(&status, tag(Op::kFinish));
          return false;
        }
        v1::UploadAck ack;
        std::vector<grpc::Slice> parts;
        read_buffer.Dump(&parts);
        std::string bytes;
        for (const auto& s : parts)
          bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
        if (ack.ParseFromString(bytes) && ack.status() == v1::UploadAck::STATUS_ACCEPTED) {
          ++stats->accepted;
          const std::size_t seq = ack.batch_seq() - 1;
          stats->results +=
              static_cast<std::uint64_t>(bodies->results[seq % bodies->slices.size()]);
          if (seq < sent_at.size()) {
            stats->latency_ms.push_back(static_cast<float>(
                std::chrono::duration<double, std::milli>(Steady::now() - sent_at[seq]).count()));
          }
        } else {
          ++stats->other;
        }
        ++acked;
        call->Read(&read_buffer, tag(Op::kRead));
        MaybeWrite(cq);
        return false;
      }
      case Op::kFinish:
        finished = true;
        if (!status.ok() || acked < options->batches) ++stats->broken;
        return true;
    }
    return false;
  }

  void Break() {
    writing = false;
    writes_done = true;  // nothing more to send; the pending read ends the call
  }
};

// What the hostile streams send, built once and shared.
struct HostilePayloads {
  grpc::Slice junk;      // no UploadBatch: field number 0 is not protobuf
  grpc::Slice big_body;  // results past hostile_oversize_bytes once a header is on
  grpc::Slice body;      // an honest batch's results, under a forged header
};

HostilePayloads MakeHostilePayloads(const Bodies& bodies, std::size_t oversize_bytes) {
  HostilePayloads p;
  p.junk = grpc::Slice(std::string(1024, '\x07'));
  const std::string body(reinterpret_cast<const char*>(bodies.slices[0].begin()),
                         bodies.slices[0].size());
  std::string big;
  while (big.size() <= oversize_bytes) big += body;
  p.big_body = grpc::Slice(big);
  p.body = bodies.slices[0];
  return p;
}

// A hostile peer with a certificate of the fleet's CA: it writes its kind of
// payload until the analyzer ends the call, then opens another 50 ms later.
struct Hostile final : Caller {
  int index = 0;   // among the hostile streams: index % 3 picks the kind
  int honest = 1;  // honest streams, whose ids forged batches carry
  const HostilePayloads* payloads = nullptr;
  HostileReport* report = nullptr;  // its thread's
  grpc::GenericStub* stub = nullptr;
  std::unique_ptr<grpc::ClientContext> context;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call;
  grpc::ByteBuffer read_buffer;
  grpc::Status status;
  grpc::Alarm alarm;
  bool writing = false;
  bool finished = false;
  std::uint64_t written = 0;
  Tag tags[6];

  Tag* tag(Op op) { return &tags[static_cast<int>(op)]; }

  void Open(grpc::CompletionQueue* cq) {
    for (int i = 0; i < 6; ++i) tags[i] = {this, static_cast<Op>(i)};
    context = std::make_unique<grpc::ClientContext>();
    call = stub->PrepareCall(context.get(), kUploadMethod, cq);
    writing = finished = false;
    ++report->calls;
    call->StartCall(tag(Op::kStart));
  }

  grpc::ByteBuffer Payload() {
    ++written;
    if (index % 3 == 0) return grpc::ByteBuffer(&payloads->junk, 1);
    v1::UploadBatch header;
    header.set_schema_version(v1::SCHEMA_VERSION_1);
    header.set_boot_id(1);
    header.set_created_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count());
    if (index % 3 == 1) {
      header.set_agent_id(HostileId(index));
      header.set_batch_seq(written);
      const grpc::Slice slices[] = {grpc::Slice(header.SerializeAsString()), payloads->big_body};
      return grpc::ByteBuffer(slices, 2);
    }
    // An honest agent's id and a sequence far past its own: believed, it
    // would make that agent drop its spool as acknowledged.
    header.set_agent_id(AgentId(index % honest));
    header.set_batch_seq((std::uint64_t{1} << 62) + written);
    const grpc::Slice slices[] = {grpc::Slice(header.SerializeAsString()), payloads->body};
    return grpc::ByteBuffer(slices, 2);
  }

  void Write() {
    if (writing || finished) return;
    writing = true;
    const grpc::ByteBuffer buffer = Payload();
    call->Write(buffer, tag(Op::kWrite));
  }

  // The call is over once its status is in and no write is pending.
  void MaybeReopen(grpc::CompletionQueue* cq) {
    if (!finished || writing) return;
    call.reset();
    context.reset();
    alarm.Set(cq, std::chrono::system_clock::now() + std::chrono::milliseconds{50},
              tag(Op::kAlarm));
  }

  void Count() {
    switch (status.error_code()) {
      case grpc::StatusCode::INVALID_ARGUMENT:
        ++report->invalid_argument;
        break;
      case grpc::StatusCode::PERMISSION_DENIED:
        ++report->permission_denied;
        break;
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        ++report->resource_exhausted;
        break;
      default:
        ++report->other_status;
    }
  }

  bool OnEvent(Op op, bool ok, grpc::CompletionQueue* cq) override {
    switch (op) {
      case Op::kStart:
        if (ok) {
          call->Read(&read_buffer, tag(Op::kRead));
          Write();
        } else {
          call->Finish(&status, tag(Op::kFinish));
        }
        break;
      case Op::kWrite:
        writing = false;
        if (ok) {
          Write();
        } else {
          MaybeReopen(cq);
        }
        break;
      case Op::kRead:
        if (ok) {
          ++report->acks;
          call->Read(&read_buffer, tag(Op::kRead));
        } else {
          call->Finish(&status, tag(Op::kFinish));
        }
        break;
      case Op::kFinish:
        finished = true;
        Count();
        MaybeReopen(cq);
        break;
      case Op::kAlarm:
        Open(cq);
        break;
      case Op::kWritesDone:
        break;
    }
    return false;
  }

  // After the workers stopped: ends whatever is in flight, so the queue drains.
  void Cancel() {
    if (context) context->TryCancel();
    alarm.Cancel();
  }
};

// One connection per stream, with that stream's certificate.
bool MakeTlsChannels(const LoadOptions& options, grpc::ChannelArguments args,
                     std::vector<std::shared_ptr<grpc::Channel>>& channels, char* error,
                     std::size_t error_size) {
  const std::string dir = options.tls_dir + "/";
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ReadFile(dir + "ca.crt", error, error_size);
  ssl.pem_private_key = ReadFile(dir + "client.key", error, error_size);
  if (ssl.pem_root_certs.empty() || ssl.pem_private_key.empty()) return false;
  args.SetSslTargetNameOverride("hostmesh-analyzer");
  for (int i = 0; i < options.streams + options.hostile; ++i) {
    const std::string name = i < options.streams ? AgentId(i) : HostileId(i - options.streams);
    ssl.pem_cert_chain = ReadFile(dir + name + ".crt", error, error_size);
    if (ssl.pem_cert_chain.empty()) return false;
    args.SetInt("hostmesh.bench.channel", i);
    channels.push_back(grpc::CreateCustomChannel(options.address, grpc::SslCredentials(ssl), args));
  }
  return true;
}

}  // namespace

LoadReport RunLoad(const LoadOptions& options, void (*started)(void*), void* arg) {
  LoadReport report;
  const Bodies bodies =
      MakeBodies(std::min(options.batches, 20), options.results, options.packed_results);

  std::vector<std::shared_ptr<grpc::Channel>> channels;
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection per channel
  if (options.hostile > 0 && options.tls_dir.empty()) {
    std::snprintf(report.error, sizeof report.error, "hostile streams need --tls");
    return report;
  }
  if (!options.tls_dir.empty()) {
    if (!MakeTlsChannels(options, args, channels, report.error, sizeof report.error)) {
      return report;
    }
  } else {
    for (int c = 0; c < options.channels; ++c) {
      args.SetInt("hostmesh.bench.channel", c);  // distinct arguments: distinct connections
      channels.push_back(
          grpc::CreateCustomChannel(options.address, grpc::InsecureChannelCredentials(), args));
    }
  }
  // Hellos first (timed apart): the analyzer checks batches against them. With
  // TLS each is also its connection's handshake.
  const auto hello0 = Steady::now();
  for (int s = 0; s < options.streams; ++s) {
    auto stub = v1::AgentIngest::NewStub(channels[static_cast<std::size_t>(s) % channels.size()]);
    v1::AgentHello hello = FleetAgent(0, 0).Hello();
    hello.set_agent_id(AgentId(s));
    hello.set_host(AgentId(s));
    grpc::ClientContext context;
    v1::HelloReply reply;
    const grpc::Status status = stub->Hello(&context, hello, &reply);
    if (!status.ok()) {
      std::snprintf(report.error, sizeof report.error, "hello of stream %d: %s", s,
                    status.error_message().c_str());
      return report;
    }
  }
  report.hello_seconds = std::chrono::duration<double>(Steady::now() - hello0).count();

  const int threads = std::max(1, std::min(options.threads, options.streams));
  std::vector<std::unique_ptr<grpc::CompletionQueue>> queues;
  std::vector<ThreadStats> stats(static_cast<std::size_t>(threads));
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<grpc::GenericStub> stubs;
  for (auto& channel : channels) stubs.emplace_back(channel);
  for (int t = 0; t < threads; ++t) queues.push_back(std::make_unique<grpc::CompletionQueue>());
  const HostilePayloads payloads = MakeHostilePayloads(bodies, options.hostile_oversize_bytes);
  // Hostile streams on a queue and thread of their own: the honest streams'
  // latency is the analyzer's, not time spent in a client thread serving them.
  HostileReport hostile_report;
  std::vector<std::unique_ptr<Hostile>> hostiles;
  grpc::CompletionQueue hostile_queue;

  started(arg);
  const double cpu0 = CpuSeconds();
  const auto t0 = Steady::now();
  for (int s = 0; s < options.streams; ++s) {
    auto stream = std::make_unique<Stream>();
    stream->index = s;
    stream->options = &options;
    stream->bodies = &bodies;
    const auto t = static_cast<std::size_t>(s % threads);
    stream->stats = &stats[t];
    // Paced streams start spread over the first interval, as agents do.
    if (options.rate > 0) {
      stream->start =
          t0 + std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(
                   static_cast<double>(s) / options.streams / options.rate));
    }
    stream->Begin(stubs[static_cast<std::size_t>(s) % stubs.size()], queues[t].get());
    streams.push_back(std::move(stream));
  }
  for (int h = 0; h < options.hostile; ++h) {
    auto hostile = std::make_unique<Hostile>();
    hostile->index = h;
    hostile->honest = std::max(1, options.streams);
    hostile->payloads = &payloads;
    hostile->report = &hostile_report;
    hostile->stub = &stubs[static_cast<std::size_t>(options.streams + h)];
    hostile->Open(&hostile_queue);
    hostiles.push_back(std::move(hostile));
  }
  std::vector<std::thread> workers;
  std::vector<int> remaining(static_cast<std::size_t>(threads), 0);
  for (int s = 0; s < options.streams; ++s) ++remaining[static_cast<std::size_t>(s % threads)];
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      grpc::CompletionQueue* cq = queues[static_cast<std::size_t>(t)].get();
      void* raw = nullptr;
      bool ok = false;
      while (remaining[static_cast<std::size_t>(t)] > 0 && cq->Next(&raw, &ok)) {
        auto* tag = static_cast<Tag*>(raw);
        if (tag->caller->OnEvent(tag->op, ok, cq)) --remaining[static_cast<std::size_t>(t)];
      }
    });
  }
  std::atomic<bool> honest_done{false};
  std::thread hostile_worker([&] {
    void* raw = nullptr;
    bool ok = false;
    while (!honest_done.load()) {
      const auto deadline = std::chrono::system_clock::now() + std::chrono::milliseconds{100};
      if (hostile_queue.AsyncNext(&raw, &ok, deadline) != grpc::CompletionQueue::GOT_EVENT) {
        continue;
      }
      static_cast<Tag*>(raw)->caller->OnEvent(static_cast<Tag*>(raw)->op, ok, &hostile_queue);
    }
  });
  for (auto& w : workers) w.join();
  if (options.streams == 0 && options.stop_fd >= 0) {
    char stop = 0;
    (void)!read(options.stop_fd, &stop, 1);
  }
  honest_done = true;
  hostile_worker.join();
  report.seconds = std::chrono::duration<double>(Steady::now() - t0).count();
  report.cpu_seconds = CpuSeconds() - cpu0;
  for (auto& h : hostiles) h->Cancel();
  hostile_queue.Shutdown();
  {
    void* raw = nullptr;
    bool ok = false;
    while (hostile_queue.Next(&raw, &ok)) {
    }
  }
  for (auto& q : queues) {
    q->Shutdown();
    void* raw = nullptr;
    bool ok = false;
    while (q->Next(&raw, &ok)) {
    }
  }

  std::vector<float> latency;
  for (const ThreadStats& s : stats) {
    report.accepted += s.accepted;
    report.other += s.other;
    report.broken_streams += s.broken;
    report.results_sent += s.results;
    report.wire_bytes += s.wire;
    latency.insert(latency.end(), s.latency_ms.begin(), s.latency_ms.end());
  }
  report.hostile = hostile_report;
  if (!latency.empty()) {
    double sum = 0;
    for (float v : latency) sum += v;
    report.latency_mean_ms = sum / static_cast<double>(latency.size());
    std::sort(latency.begin(), latency.end());
    report.latency_p50_ms = latency[latency.size() / 2];
    report.latency_p99_ms = latency[latency.size() * 99 / 100];
    report.latency_max_ms = latency.back();
  }
  return report;
}

}  // namespace hostmesh::bench
