// An analyzer restart seen from the fleet: every agent's stream breaks at
// once and every agent reconnects (TLS handshake, Hello, stream). Runs N of
// the agent's own uploaders (its backoff, jitter and Hello deadline) against
// the real ingest over mutual TLS in this process, waits until all are
// streaming, restarts the ingest server on the same port, and prints how long
// the fleet took to be back and how many connection attempts failed on the
// way (a Hello that timed out while its handshake waited in the analyzer's
// queue is work done twice).
//
// Usage: reconnect_stampede --tls DIR [--agents N] [--hello-timeout S] [--wait S]
//   DIR from bench/make_bench_pki.sh DIR N (bench-<i>.crt per agent);
//   defaults: 1,000 agents, the agent's Hello deadline (5 s), at most 300 s
//   for each phase.
#include <sys/resource.h>
#include <sys/times.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/upload/uploader.h"
#include "analyzer/ingest/grpc_listener_watch.h"
#include "analyzer/ingest/ingest_handler.h"
#include "analyzer/ingest/ingest_server.h"
#include "analyzer/store/group_committer.h"
#include "analyzer/store/store.h"
#include "bench/fleet_agent.h"
#include "common/metrics/registry.h"

namespace {

namespace ingest = hostmesh::analyzer::ingest;
namespace store = hostmesh::analyzer::store;
namespace upload = hostmesh::agent::upload;
using Seconds = std::chrono::duration<double>;

struct Args {
  std::string tls_dir;
  int agents = 1000;
  double hello_timeout = Seconds(hostmesh::agent::UploadConfig{}.hello_timeout).count();
  double wait = 300;
};

bool ParseArgs(int argc, char** argv, Args& args) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--tls") {
      args.tls_dir = value;
    } else if (flag == "--agents") {
      args.agents = std::atoi(value);
    } else if (flag == "--hello-timeout") {
      args.hello_timeout = std::atof(value);
    } else if (flag == "--wait") {
      args.wait = std::atof(value);
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && !args.tls_dir.empty() && args.agents > 0 && args.hello_timeout > 0 &&
         args.wait > 0;
}

double ProcessCpuSeconds() {
  tms t{};
  times(&t);
  return static_cast<double>(t.tms_utime + t.tms_stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct FleetState {
  int streaming = 0;  // agents with at least `connects` connections made
  std::uint64_t failures = 0;
};

FleetState Tally(const std::vector<std::unique_ptr<upload::Uploader>>& fleet,
                 std::uint64_t connects) {
  FleetState s;
  for (const auto& u : fleet) {
    const upload::UploadCounters c = u->Counters();
    if (c.connects >= connects) ++s.streaming;
    s.failures += c.connect_failures;
  }
  return s;
}

// Waits until every agent has made `connects` connections; prints the fleet
// every 5 s. Returns the seconds it took, or a negative number past `wait`.
double WaitForFleet(const std::vector<std::unique_ptr<upload::Uploader>>& fleet,
                    std::uint64_t connects, double wait, const char* phase) {
  const auto t0 = std::chrono::steady_clock::now();
  double next_print = 5;
  for (;;) {
    const double elapsed = Seconds(std::chrono::steady_clock::now() - t0).count();
    const FleetState s = Tally(fleet, connects);
    if (s.streaming == static_cast<int>(fleet.size())) return elapsed;
    if (elapsed > wait) return -elapsed;
    if (elapsed >= next_print) {
      std::printf("  %-8s %5.0f s: %d of %zu agents streaming, %llu failed attempts\n", phase,
                  elapsed, s.streaming, fleet.size(), static_cast<unsigned long long>(s.failures));
      std::fflush(stdout);
      next_print += 5;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
}

void RaiseFileLimit() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: reconnect_stampede --tls DIR [--agents N] [--hello-timeout S] "
                 "[--wait S]\n");
    return 2;
  }
  RaiseFileLimit();
  ingest::WatchGrpcLog();  // counts listeners gRPC drops (at the open-files limit)
  hostmesh::SystemClock clock;
  const std::filesystem::path data_dir =
      std::filesystem::temp_directory_path() / ("hm_stampede_" + std::to_string(getpid()));
  store::StoreOptions store_options;
  store_options.data_dir = data_dir;
  std::string error;
  std::unique_ptr<store::Store> db = store::Store::Open(clock, store_options, error);
  if (!db) {
    std::fprintf(stderr, "reconnect_stampede: %s\n", error.c_str());
    return 1;
  }
  hostmesh::metrics::Registry registry;
  ingest::IngestStats stats(registry);
  store::GroupCommitter committer(clock, *db);
  ingest::IngestHandler handler(clock, *db, committer, stats, nullptr, ingest::IngestOptions{});
  ingest::ServerSecurity security;
  security.insecure = false;
  security.files = {args.tls_dir + "/server.crt", args.tls_dir + "/server.key",
                    args.tls_dir + "/ca.crt"};
  std::unique_ptr<ingest::IngestServer> server =
      ingest::IngestServer::Start(handler, "127.0.0.1:0", security, error);
  if (!server) {
    std::fprintf(stderr, "reconnect_stampede: %s\n", error.c_str());
    return 1;
  }
  const std::string address = "127.0.0.1:" + std::to_string(server->port());

  std::vector<std::unique_ptr<upload::Uploader>> fleet;
  const std::int64_t now_ns = clock.RealtimeNow().time_since_epoch().count();
  for (int i = 0; i < args.agents; ++i) {
    upload::UploaderOptions options;
    options.analyzer_address = address;
    options.security.files = {args.tls_dir + "/bench-" + std::to_string(i) + ".crt",
                              args.tls_dir + "/client.key", args.tls_dir + "/ca.crt"};
    options.security.server_name = "hostmesh-analyzer";
    options.engine.upload.hello_timeout =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Seconds(args.hello_timeout));
    options.jitter_seed = static_cast<std::uint64_t>(i) + 1;
    hostmesh::v1::AgentHello hello =
        hostmesh::bench::FleetAgent(static_cast<std::uint32_t>(i), now_ns).Hello();
    hello.set_agent_id("bench-" + std::to_string(i));
    hello.set_host("bench-" + std::to_string(i));
    fleet.push_back(std::make_unique<upload::Uploader>(clock, options, hello));
  }
  std::printf(
      "reconnect_stampede: %d agents (the agent's uploader: backoff, jitter, a %.1f s Hello "
      "deadline), each with its own certificate, against the ingest over mutual TLS on "
      "127.0.0.1\n",
      args.agents, args.hello_timeout);
  double cpu0 = ProcessCpuSeconds();
  for (auto& u : fleet) u->Start();
  const double start = WaitForFleet(fleet, 1, args.wait, "start");
  const FleetState started = Tally(fleet, 1);
  std::printf(
      "  start    all streaming after %.1f s, %llu failed attempts, %.1f s of CPU, %llu listeners "
      "dropped by gRPC\n",
      start, static_cast<unsigned long long>(started.failures), ProcessCpuSeconds() - cpu0,
      static_cast<unsigned long long>(ingest::GrpcListenerFailures()));
  // Up long enough that each agent's backoff counts the connection healthy
  // (UploadEngineOptions::healthy_after) and starts again from its initial delay.
  std::this_thread::sleep_for(std::chrono::seconds{12});

  server->Shutdown();
  server.reset();
  server = ingest::IngestServer::Start(handler, address, security, error);
  if (!server) {
    std::fprintf(stderr, "reconnect_stampede: restart: %s\n", error.c_str());
    return 1;
  }
  cpu0 = ProcessCpuSeconds();
  const double restart = WaitForFleet(fleet, 2, args.wait, "restart");
  const FleetState back = Tally(fleet, 2);
  std::printf(
      "  restart  all streaming again after %.1f s, %llu failed attempts, %.1f s of CPU (both "
      "ends), %llu listeners dropped by gRPC in all\n",
      restart, static_cast<unsigned long long>(back.failures - started.failures),
      ProcessCpuSeconds() - cpu0, static_cast<unsigned long long>(ingest::GrpcListenerFailures()));
  fleet.clear();
  server->Shutdown();
  committer.Stop();
  db.reset();
  std::filesystem::remove_all(data_dir);
  return start >= 0 && restart >= 0 ? 0 : 1;
}
