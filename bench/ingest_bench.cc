// gRPC ingest into RocksDB: several concurrent Upload streams of batches of
// 1000 results against the real AgentIngest service (validation, group commit
// with fsync, acks). Clients run in this process, so they share the machine's
// cores with the analyzer: the figure is a floor for a dedicated analyzer.
//
// Usage: ingest_bench [--streams N] [--batches B] [--results R] [--data-dir DIR]
//   defaults: 4 streams x 300 batches x 1000 results, data in a fresh temp dir.
#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/ingest/ingest_handler.h"
#include "analyzer/ingest/ingest_server.h"
#include "analyzer/store/group_committer.h"
#include "analyzer/store/store.h"
#include "common/metrics/registry.h"
#include "hostmesh/v1/ingest.grpc.pb.h"

namespace {

namespace v1 = hostmesh::v1;
namespace store = hostmesh::analyzer::store;
namespace ingest = hostmesh::analyzer::ingest;

struct Args {
  int streams = 4;
  int batches = 300;
  int results = 1000;
  std::string data_dir;
};

v1::AgentHello Hello(const std::string& agent) {
  v1::AgentHello hello;
  hello.set_schema_version(v1::SCHEMA_VERSION_1);
  hello.set_agent_id(agent);
  hello.set_boot_id(1);
  for (std::uint32_t i = 0; i < 8; ++i) hello.add_nics()->set_id(i);
  return hello;
}

v1::UploadBatch Batch(const std::string& agent, std::uint64_t seq, int results,
                      std::int64_t now_ns) {
  v1::UploadBatch batch;
  batch.set_schema_version(v1::SCHEMA_VERSION_1);
  batch.set_agent_id(agent);
  batch.set_boot_id(1);
  batch.set_batch_seq(seq);
  batch.set_created_ns(now_ns);
  for (int i = 0; i < results; ++i) {
    v1::ProbeResult* r = batch.add_results();
    r->set_src_nic(static_cast<std::uint32_t>(i % 8));
    r->set_dst_nic(static_cast<std::uint32_t>((i + 3) % 8));
    r->set_src_port(49152 + static_cast<std::uint32_t>(i % 4096));
    r->set_dst_port(4791);
    r->set_sequence(seq * 1000 + static_cast<std::uint64_t>(i));
    const std::int64_t t = now_ns + i * 100'000;
    r->set_send_time_ns(t);
    r->set_app_send_ns(t);
    r->set_nic_send_ns(t + 2'000);
    r->set_nic_recv_ns(t + 9'000);
    r->set_app_recv_ns(t + 15'000);
    r->set_send_timestamp_source(v1::TIMESTAMP_SOURCE_KERNEL);
    r->set_recv_timestamp_source(v1::TIMESTAMP_SOURCE_KERNEL);
    r->set_payload_bytes(50);
  }
  return batch;
}

bool ParseArgs(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    if (flag == "--streams") {
      args.streams = std::atoi(value);
    } else if (flag == "--batches") {
      args.batches = std::atoi(value);
    } else if (flag == "--results") {
      args.results = std::atoi(value);
    } else if (flag == "--data-dir") {
      args.data_dir = value;
    } else {
      return false;
    }
  }
  return args.streams > 0 && args.batches > 0 && args.results > 0;
}

struct StreamResult {
  std::uint64_t accepted = 0;
  std::uint64_t other = 0;
  bool ok = true;
};

// One agent: Hello, then write every batch while a second thread reads acks.
void RunStream(const std::string& address, int index, const std::vector<v1::UploadBatch>& batches,
               StreamResult& out) {
  grpc::ChannelArguments channel_args;
  channel_args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // one TCP connection per agent
  auto stub = v1::AgentIngest::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), channel_args));
  const std::string agent = "bench" + std::to_string(index);
  {
    grpc::ClientContext context;
    v1::HelloReply reply;
    if (!stub->Hello(&context, Hello(agent), &reply).ok()) {
      out.ok = false;
      return;
    }
  }
  grpc::ClientContext context;
  auto stream = stub->Upload(&context);
  std::thread reader([&] {
    v1::UploadAck ack;
    while (stream->Read(&ack)) {
      (ack.status() == v1::UploadAck::STATUS_ACCEPTED ? out.accepted : out.other) += 1;
      if (out.accepted + out.other == batches.size()) break;
    }
  });
  for (const v1::UploadBatch& batch : batches) {
    if (!stream->Write(batch)) break;
  }
  stream->WritesDone();
  reader.join();
  out.ok = stream->Finish().ok() && out.other == 0;
}

double HistogramMean(const hostmesh::metrics::Registry& registry, const std::string& name) {
  for (const auto& family : registry.Collect()) {
    if (family.name != name || family.metric.empty()) continue;
    const auto& histogram = family.metric.front().histogram;
    const std::uint64_t count = histogram.sample_count;
    return count == 0 ? 0 : histogram.sample_sum / static_cast<double>(count);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, args)) {
    std::fprintf(stderr, "usage: %s [--streams N] [--batches B] [--results R] [--data-dir DIR]\n",
                 argv[0]);
    return 2;
  }
  bool temporary = false;
  if (args.data_dir.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "hm_ingest_bench_XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) return 1;
    args.data_dir = pattern;
    temporary = true;
  }

  hostmesh::SystemClock clock;
  std::string error;
  store::StoreOptions store_options;
  store_options.data_dir = args.data_dir;
  std::unique_ptr<store::Store> db = store::Store::Open(clock, store_options, error);
  if (!db) {
    std::fprintf(stderr, "ingest_bench: %s\n", error.c_str());
    return 1;
  }
  hostmesh::metrics::Registry registry;
  ingest::IngestStats stats(registry);
  store::GroupCommitter committer(clock, *db);
  ingest::IngestHandler handler(clock, *db, committer, stats, nullptr, ingest::IngestOptions{});
  std::unique_ptr<ingest::IngestServer> server =
      ingest::IngestServer::Start(handler, "127.0.0.1:0", error);
  if (!server) {
    std::fprintf(stderr, "ingest_bench: %s\n", error.c_str());
    return 1;
  }
  const std::string address = "127.0.0.1:" + std::to_string(server->port());

  // Built before the clock starts: an agent's batching is not the analyzer's cost.
  const std::int64_t now_ns = clock.RealtimeNow().time_since_epoch().count();
  std::vector<std::vector<v1::UploadBatch>> batches(static_cast<std::size_t>(args.streams));
  std::size_t wire_bytes = 0;
  for (int s = 0; s < args.streams; ++s) {
    for (int b = 1; b <= args.batches; ++b) {
      batches[static_cast<std::size_t>(s)].push_back(
          Batch("bench" + std::to_string(s), static_cast<std::uint64_t>(b), args.results, now_ns));
      wire_bytes += batches[static_cast<std::size_t>(s)].back().ByteSizeLong();
    }
  }

  std::vector<StreamResult> results(static_cast<std::size_t>(args.streams));
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int s = 0; s < args.streams; ++s) {
    threads.emplace_back(RunStream, std::cref(address), s,
                         std::cref(batches[static_cast<std::size_t>(s)]),
                         std::ref(results[static_cast<std::size_t>(s)]));
  }
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::uint64_t accepted = 0;
  bool ok = true;
  for (const StreamResult& r : results) {
    accepted += r.accepted;
    ok = ok && r.ok;
  }
  const std::uint64_t total_results = accepted * static_cast<std::uint64_t>(args.results);
  const std::uint64_t stored = [&] {
    std::uint64_t n = 0;
    for (const auto& [agent, count] : db->CountResultsByAgent()) n += count;
    return n;
  }();
  server->Shutdown();
  committer.Stop();
  const std::uint64_t groups = committer.groups_written();
  db.reset();
  if (temporary) std::filesystem::remove_all(args.data_dir);

  std::printf(
      "ingest_bench: %d streams x %d batches x %d results over gRPC on 127.0.0.1, "
      "RocksDB with a synced WAL (group commit)\n",
      args.streams, args.batches, args.results);
  std::printf("  accepted batches      %llu of %llu\n", static_cast<unsigned long long>(accepted),
              static_cast<unsigned long long>(args.streams) * static_cast<unsigned>(args.batches));
  std::printf("  results stored        %llu\n", static_cast<unsigned long long>(stored));
  std::printf("  elapsed               %.3f s\n", seconds);
  std::printf("  throughput            %.0f results/s, %.0f batches/s, %.1f MB/s on the wire\n",
              static_cast<double>(total_results) / seconds, static_cast<double>(accepted) / seconds,
              static_cast<double>(wire_bytes) / seconds / 1e6);
  std::printf("  synced writes         %llu (%.1f batches each)\n",
              static_cast<unsigned long long>(groups),
              groups == 0 ? 0.0 : static_cast<double>(accepted) / static_cast<double>(groups));
  std::printf("  submit-to-durable     %.2f ms mean\n",
              1e3 * HistogramMean(registry, "hostmesh_ingest_store_write_seconds"));
  std::printf("  target                >= 300000 results/s: %s\n",
              static_cast<double>(total_results) / seconds >= 300000 ? "met" : "NOT met");
  return ok && stored == total_results ? 0 : 1;
}
