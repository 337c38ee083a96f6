#include "bench/ingest_load.h"

#include <grpcpp/alarm.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "bench/fleet_agent.h"
#include "hostmesh/v1/ingest.grpc.pb.h"

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

Bodies MakeBodies(int count, int results_per_batch) {
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
    const std::string bytes = body.SerializeAsString();
    out.bytes += bytes.size();
    out.results.push_back(body.results_size());
    out.slices.emplace_back(bytes);
  }
  return out;
}

std::string AgentId(int stream) {
  return "bench-" + std::to_string(stream);
}

struct Stream;
enum class Op { kStart, kWrite, kRead, kWritesDone, kFinish, kAlarm };
struct Tag {
  Stream* stream;
  Op op;
};

struct ThreadStats {
  std::uint64_t accepted = 0, other = 0, broken = 0, results = 0, wire = 0;
  std::vector<float> latency_ms;
};

struct Stream {
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

  void OnEvent(Op op, bool ok, grpc::CompletionQueue* cq) {
    switch (op) {
      case Op::kStart:
        if (!ok) {
          call->Finish(&status, tag(Op::kFinish));
          return;
        }
        call->Read(&read_buffer, tag(Op::kRead));
        MaybeWrite(cq);
        return;
      case Op::kAlarm:
        alarm_set = false;
        MaybeWrite(cq);
        return;
      case Op::kWrite:
        writing = false;
        if (!ok) return Break();  // the read side learns why
        MaybeWrite(cq);
        return;
      case Op::kWritesDone:
        return;
      case Op::kRead: {
        if (!ok) {  // the server finished the stream
          call->Finish(&status, tag(Op::kFinish));
          return;
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
        return;
      }
      case Op::kFinish:
        finished = true;
        if (!status.ok() || acked < options->batches) ++stats->broken;
        return;
    }
  }

  void Break() {
    writing = false;
    writes_done = true;  // nothing more to send; the pending read ends the call
  }
};

}  // namespace

LoadReport RunLoad(const LoadOptions& options, void (*started)(void*), void* arg) {
  LoadReport report;
  const Bodies bodies = MakeBodies(std::min(options.batches, 20), options.results);

  std::vector<std::shared_ptr<grpc::Channel>> channels;
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection per channel
  for (int c = 0; c < options.channels; ++c) {
    args.SetInt("hostmesh.bench.channel", c);  // distinct arguments: distinct connections
    channels.push_back(
        grpc::CreateCustomChannel(options.address, grpc::InsecureChannelCredentials(), args));
  }
  // Hellos first (not timed): the analyzer checks batches against them.
  for (int s = 0; s < options.streams; ++s) {
    auto stub = v1::AgentIngest::NewStub(channels[static_cast<std::size_t>(s) % channels.size()]);
    v1::AgentHello hello = FleetAgent(0, 0).Hello();
    hello.set_agent_id(AgentId(s));
    grpc::ClientContext context;
    v1::HelloReply reply;
    const grpc::Status status = stub->Hello(&context, hello, &reply);
    if (!status.ok()) {
      std::snprintf(report.error, sizeof report.error, "hello of stream %d: %s", s,
                    status.error_message().c_str());
      return report;
    }
  }

  const int threads = std::max(1, std::min(options.threads, options.streams));
  std::vector<std::unique_ptr<grpc::CompletionQueue>> queues;
  std::vector<ThreadStats> stats(static_cast<std::size_t>(threads));
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<grpc::GenericStub> stubs;
  for (auto& channel : channels) stubs.emplace_back(channel);
  for (int t = 0; t < threads; ++t) queues.push_back(std::make_unique<grpc::CompletionQueue>());

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
        tag->stream->OnEvent(tag->op, ok, cq);
        if (tag->op == Op::kFinish) --remaining[static_cast<std::size_t>(t)];
      }
    });
  }
  for (auto& w : workers) w.join();
  report.seconds = std::chrono::duration<double>(Steady::now() - t0).count();
  report.cpu_seconds = CpuSeconds() - cpu0;
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
