// gRPC ingest into RocksDB against the real AgentIngest service (validation,
// group commit with fsync, acks) and, unless --no-analysis, the analysis feed
// with its loop judging windows as the analyzer does. The agents run in a
// child process (bench/ingest_load.h: asynchronous streams sharing
// connections), so the analyzer's CPU is measured on its own; both still
// share this machine's cores.
//
// Usage: ingest_bench [--streams N] [--batches B] [--results R] [--channels C]
//                     [--client-threads T] [--rate R] [--in-flight W]
//                     [--no-analysis] [--packed-results] [--data-dir DIR]
//                     [--tls DIR [--hostile H [--hostile-lead S] [--hostile-oversize-mib M]]]
//   defaults: 4 streams x 300 batches x 1000 results, one connection per
//   stream up to the file limit, closed loop (8 in flight), data in a fresh
//   temp dir; results one message each, as older agents send them
//   (--packed-results: packed, as current agents do). The fleet's shape: --streams 10000 --batches
//   20 --results 80
//   --rate 1 (one batch a second per agent). --tls DIR (bench/make_bench_pki.sh
//   DIR N H): mutual TLS, a connection and certificate per stream; --hostile H
//   adds H hostile streams with certificates of the same CA (ingest_load.h).
//   They start with the honest batches, so the figures include the start of
//   the attack (100 handshakes, each hostile certificate's first refused
//   message); --hostile-lead S starts them S seconds before the honest agents
//   connect, so the figures are of the attack in its steady state.
//   --hostile-oversize-mib M: the oversize batches' size (default 8, just over
//   the batch limit; past gRPC's 17 MiB receive limit gRPC reads them whole).
#include <dirent.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "analyzer/feed/analysis_feed.h"
#include "analyzer/ingest/ingest_handler.h"
#include "analyzer/ingest/ingest_server.h"
#include "analyzer/ingest/process_tuning.h"
#include "analyzer/store/group_committer.h"
#include "analyzer/store/store.h"
#include "bench/ingest_load.h"
#include "common/metrics/registry.h"

namespace {

namespace store = hostmesh::analyzer::store;
namespace ingest = hostmesh::analyzer::ingest;
using hostmesh::bench::LoadOptions;
using hostmesh::bench::LoadReport;

struct Args {
  LoadOptions load;
  bool channels_set = false;
  bool analysis = true;
  double hostile_lead = -1;  // seconds; below 0: the hostile streams start with the batches
  std::string data_dir;
};

bool ParseArgs(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--no-analysis") {
      args.analysis = false;
      continue;
    }
    if (flag == "--packed-results") {
      args.load.packed_results = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    if (flag == "--streams") {
      args.load.streams = std::atoi(value);
    } else if (flag == "--batches") {
      args.load.batches = std::atoi(value);
    } else if (flag == "--results") {
      args.load.results = std::atoi(value);
    } else if (flag == "--channels") {
      args.load.channels = std::atoi(value);
      args.channels_set = true;
    } else if (flag == "--client-threads") {
      args.load.threads = std::atoi(value);
    } else if (flag == "--rate") {
      args.load.rate = std::atof(value);
    } else if (flag == "--in-flight") {
      args.load.in_flight = std::atoi(value);
    } else if (flag == "--data-dir") {
      args.data_dir = value;
    } else if (flag == "--tls") {
      args.load.tls_dir = value;
    } else if (flag == "--hostile") {
      args.load.hostile = std::atoi(value);
    } else if (flag == "--hostile-lead") {
      args.hostile_lead = std::atof(value);
    } else if (flag == "--hostile-oversize-mib") {
      args.load.hostile_oversize_bytes = static_cast<std::size_t>(std::atof(value) * (1 << 20));
    } else {
      return false;
    }
  }
  return args.load.streams > 0 && args.load.batches > 0 && args.load.results > 0 &&
         args.load.channels > 0 && args.load.threads > 0 && args.load.rate >= 0 &&
         args.load.in_flight > 0 && args.load.hostile >= 0 &&
         (args.load.hostile == 0 || !args.load.tls_dir.empty());
}

// Each connection costs a descriptor in each process (the agents' and the
// analyzer's, forked apart): raise the soft limit to the hard one (the hard
// one too where that is allowed) and share connections beyond it.
int ChannelsFor(int wanted) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  const rlim_t needed = static_cast<rlim_t>(wanted) + 1024;
  if (limit.rlim_max < needed) {
    rlimit raised{needed, needed};
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  const auto room = static_cast<long>(limit.rlim_cur) - 1024;  // store files, pipes, epoll
  return static_cast<int>(std::max<long>(1, std::min<long>(wanted, room)));
}

// CPU seconds per thread name (comm) of this process: where the analyzer's time goes.
std::map<std::string, double> ThreadCpu() {
  std::map<std::string, double> out;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream stat(std::string("/proc/self/task/") + e->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::string name = line.substr(open + 1, close - open - 1);
    while (!name.empty() && std::isdigit(static_cast<unsigned char>(name.back()))) name.pop_back();
    // Fields after the name: state is 3rd, utime 14th, stime 15th (1-based).
    std::istringstream rest(line.substr(close + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i >= 14) ticks += std::stod(field);
    }
    out[name] += ticks / tick;
  }
  closedir(dir);
  return out;
}

// Peak resident memory of this process (the analyzer side), MB.
double PeakRssMb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1e3;
  }
  return 0;
}

double ProcessCpu() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
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

bool ReadAll(int fd, void* data, std::size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = read(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The agents: waits for the port, says when every stream said Hello, sends
// its report and exits without running destructors of a forked gRPC.
[[noreturn]] void RunClient(Args args, int port_fd, int report_fd) {
  hostmesh::analyzer::ingest::TuneProcess();  // a lighter load generator, too
  int port = 0;
  if (!ReadAll(port_fd, &port, sizeof port)) _exit(1);
  args.load.address = "127.0.0.1:" + std::to_string(port);
  const LoadReport report = hostmesh::bench::RunLoad(
      args.load,
      [](void* fd) {
        const char ready = 'r';
        if (write(*static_cast<int*>(fd), &ready, 1) != 1) _exit(1);
      },
      &report_fd);
  if (write(report_fd, &report, sizeof report) != static_cast<ssize_t>(sizeof report)) _exit(1);
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, args)) {
    std::fprintf(
        stderr,
        "usage: %s [--streams N] [--batches B] [--results R] [--channels C] "
        "[--client-threads T] [--rate R] [--in-flight W] [--no-analysis] [--packed-results] "
        "[--data-dir DIR] [--tls DIR [--hostile H [--hostile-lead S] "
        "[--hostile-oversize-mib M]]]\n",
        argv[0]);
    return 2;
  }
  const int wanted_channels = args.load.tls_dir.empty()
                                  ? (args.channels_set ? args.load.channels : args.load.streams)
                                  : args.load.streams + args.load.hostile;
  args.load.channels = ChannelsFor(wanted_channels);
  if (!args.load.tls_dir.empty() && args.load.channels < wanted_channels) {
    std::fprintf(stderr,
                 "ingest_bench: %d TLS connections need more file descriptors (ulimit -n)\n",
                 wanted_channels);
    return 1;
  }

  // Fork before anything starts a thread (gRPC, RocksDB).
  int to_client[2], from_client[2];
  if (pipe(to_client) != 0 || pipe(from_client) != 0) return 1;
  Args honest_args = args;
  honest_args.load.hostile = 0;
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    close(to_client[1]);
    close(from_client[0]);
    RunClient(honest_args, to_client[0], from_client[1]);
  }
  close(to_client[0]);
  close(from_client[1]);
  // Hostile streams in a process of their own: attackers are other machines,
  // and the honest agents' latency must not include time their process spent
  // serving them. It runs until told to stop (stop_fd).
  int to_hostile[2] = {-1, -1}, from_hostile[2] = {-1, -1}, stop_hostile[2] = {-1, -1};
  pid_t hostile_child = -1;
  if (args.load.hostile > 0) {
    if (pipe(to_hostile) != 0 || pipe(from_hostile) != 0 || pipe(stop_hostile) != 0) return 1;
    Args hostile_args = args;
    hostile_args.load.streams = 0;
    hostile_args.load.stop_fd = stop_hostile[0];
    hostile_child = fork();
    if (hostile_child < 0) return 1;
    if (hostile_child == 0) {
      close(to_hostile[1]);
      close(from_hostile[0]);
      close(stop_hostile[1]);
      RunClient(hostile_args, to_hostile[0], from_hostile[1]);
    }
    close(to_hostile[0]);
    close(from_hostile[1]);
    close(stop_hostile[0]);
  }
  hostmesh::analyzer::ingest::TuneProcess();  // as hostmesh-analyzer's main does

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
  std::unique_ptr<hostmesh::analyzer::app::AnalysisFeed> feed;
  if (args.analysis) {
    feed = std::make_unique<hostmesh::analyzer::app::AnalysisFeed>(
        *db, hostmesh::analysis::AnalysisConfig{}, nullptr);
  }
  ingest::IngestHandler handler(clock, *db, committer, stats, feed.get(), ingest::IngestOptions{});
  ingest::ServerSecurity security = ingest::ServerSecurity::Plaintext();
  if (!args.load.tls_dir.empty()) {
    security.insecure = false;
    security.files = {args.load.tls_dir + "/server.crt", args.load.tls_dir + "/server.key",
                      args.load.tls_dir + "/ca.crt"};
  }
  std::unique_ptr<ingest::IngestServer> server =
      ingest::IngestServer::Start(handler, "127.0.0.1:0", security, error);
  if (!server) {
    std::fprintf(stderr, "ingest_bench: %s\n", error.c_str());
    return 1;
  }
  // The analyzer's loop: applies what ingest queued and judges windows, once a second.
  std::atomic<bool> stop{false};
  std::thread loop;
  std::uint64_t windows = 0;
  if (feed) {
    loop = std::thread([&] {
      pthread_setname_np(pthread_self(), "analysis-loop");
      while (!stop.load()) {
        windows += feed->Advance(clock.RealtimeNow().time_since_epoch().count()).size();
        std::this_thread::sleep_for(std::chrono::seconds{1});
      }
    });
  }

  const int port = server->port();
  char ready = 0;
  const auto start_hostile = [&] {
    if (hostile_child <= 0) return true;
    if (write(to_hostile[1], &port, sizeof port) != static_cast<ssize_t>(sizeof port) ||
        !ReadAll(from_hostile[0], &ready, 1)) {
      std::fprintf(stderr, "ingest_bench: the hostile streams failed to start\n");
      return false;
    }
    return true;
  };
  if (args.hostile_lead >= 0) {
    if (!start_hostile()) return 1;
    std::this_thread::sleep_for(std::chrono::duration<double>(args.hostile_lead));
  }
  if (write(to_client[1], &port, sizeof port) != static_cast<ssize_t>(sizeof port)) return 1;
  if (!ReadAll(from_client[0], &ready, 1)) {
    std::fprintf(stderr, "ingest_bench: the load generator failed before its first batch\n");
    return 1;
  }
  if (args.hostile_lead < 0 && !start_hostile()) return 1;
  const auto threads0 = ThreadCpu();
  const double cpu0 = ProcessCpu();
  const auto t0 = std::chrono::steady_clock::now();
  LoadReport load;
  const bool reported = ReadAll(from_client[0], &load, sizeof load);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = ProcessCpu() - cpu0;
  auto threads = ThreadCpu();
  for (const auto& [name, s] : threads0) threads[name] -= s;
  const double peak_rss_mb = PeakRssMb();
  int status = 0;
  waitpid(child, &status, 0);
  hostmesh::bench::LoadReport hostile_load;
  if (hostile_child > 0) {
    close(stop_hostile[1]);  // EOF: stop
    if (!ReadAll(from_hostile[0], &hostile_load, sizeof hostile_load)) {
      std::snprintf(hostile_load.error, sizeof hostile_load.error, "no report");
    }
    int hostile_status = 0;
    waitpid(hostile_child, &hostile_status, 0);
    if (hostile_load.error[0] != '\0') {
      std::fprintf(stderr, "ingest_bench: hostile streams: %s\n", hostile_load.error);
      return 1;
    }
  }
  stop = true;
  if (loop.joinable()) loop.join();
  if (!reported || load.error[0] != '\0') {
    std::fprintf(stderr, "ingest_bench: load generator: %s\n", reported ? load.error : "no report");
    return 1;
  }

  std::uint64_t stored = 0;
  db->ScanResults(hostmesh::WallTime::min(), hostmesh::WallTime::max(),
                  [&](const store::StoredResult&) {
                    ++stored;
                    return true;
                  });
  server->Shutdown();
  committer.Stop();
  const std::uint64_t groups = committer.groups_written();
  const double durable_ms = 1e3 * HistogramMean(registry, "hostmesh_ingest_store_write_seconds");
  const bool analysed = feed != nullptr;
  feed.reset();
  db.reset();
  if (temporary) std::filesystem::remove_all(args.data_dir);

  const double seconds = load.seconds;
  std::printf(
      "ingest_bench: %d streams over %d connections (%d client threads) x %d batches x ~%d "
      "results (%s), %s, gRPC%s on 127.0.0.1, RocksDB with a synced WAL (group commit)%s\n",
      args.load.streams, args.load.channels, args.load.threads, args.load.batches,
      args.load.results, args.load.packed_results ? "packed" : "a message each",
      args.load.rate > 0
          ? ("paced at " + std::to_string(args.load.rate) + " batches/s per stream").c_str()
          : ("closed loop, " + std::to_string(args.load.in_flight) + " in flight per stream")
                .c_str(),
      args.load.tls_dir.empty() ? "" : " over mutual TLS",
      analysed ? ", analysis feed and loop" : "");
  if (args.load.hostile > 0) {
    std::printf(
        "  beside %d hostile streams (junk, oversize batches of %.1f MiB, forged ids) from a "
        "process of their own, reopened 50 ms after each end, %s\n",
        args.load.hostile, static_cast<double>(args.load.hostile_oversize_bytes) / (1 << 20),
        args.hostile_lead < 0 ? "started with the honest batches"
                              : ("started " + std::to_string(std::lround(args.hostile_lead)) +
                                 " s before the honest agents connect")
                                    .c_str());
  }
  std::printf("  connect and Hello     %.3f s for all streams (TLS handshakes included)\n",
              load.hello_seconds);
  std::printf(
      "  accepted batches      %llu of %llu (%llu other acks, %llu streams broken)\n",
      static_cast<unsigned long long>(load.accepted),
      static_cast<unsigned long long>(args.load.streams) * static_cast<unsigned>(args.load.batches),
      static_cast<unsigned long long>(load.other),
      static_cast<unsigned long long>(load.broken_streams));
  std::printf("  results stored        %llu\n", static_cast<unsigned long long>(stored));
  std::printf("  elapsed               %.3f s\n", seconds);
  std::printf("  throughput            %.0f results/s, %.0f batches/s, %.1f MB/s on the wire\n",
              static_cast<double>(load.results_sent) / seconds,
              static_cast<double>(load.accepted) / seconds,
              static_cast<double>(load.wire_bytes) / seconds / 1e6);
  std::printf("  synced writes         %llu (%.1f batches each)\n",
              static_cast<unsigned long long>(groups),
              groups == 0 ? 0.0 : static_cast<double>(load.accepted) / static_cast<double>(groups));
  std::printf("  submit-to-durable     %.2f ms mean (analyzer side)\n", durable_ms);
  std::printf("  write-to-ack          %.2f ms mean, %.2f p50, %.2f p99, %.2f max (agent side)\n",
              load.latency_mean_ms, load.latency_p50_ms, load.latency_p99_ms, load.latency_max_ms);
  std::printf("  analyzer CPU          %.2f cores (%.1f s over %.1f s)", cpu / wall, cpu, wall);
  for (const auto& [name, s] : threads) {
    if (s >= 0.05 * cpu && s > 0) std::printf("; %s %.1f s", name.c_str(), s);
  }
  std::printf("\n  analyzer CPU/result   %.2f us (all its threads, over the results stored)\n",
              stored == 0 ? 0.0 : 1e6 * cpu / static_cast<double>(stored));
  std::printf("  analyzer peak RSS     %.0f MB\n", peak_rss_mb);
  std::printf("  load generator CPU    %.2f cores\n", load.cpu_seconds / seconds);
  if (analysed)
    std::printf("  windows judged        %llu\n", static_cast<unsigned long long>(windows));
  const hostmesh::bench::HostileReport& h = hostile_load.hostile;
  std::printf("  bytes read            %.1f MB of batches (honest ones: %.1f MB)\n",
              stats.bytes.Value() / 1e6, static_cast<double>(load.wire_bytes) / 1e6);
  if (args.load.hostile > 0) {
    std::printf(
        "  hostile calls         %llu: %llu INVALID_ARGUMENT, %llu PERMISSION_DENIED, %llu "
        "RESOURCE_EXHAUSTED, %llu other; %llu REJECTED acks\n",
        static_cast<unsigned long long>(h.calls),
        static_cast<unsigned long long>(h.invalid_argument),
        static_cast<unsigned long long>(h.permission_denied),
        static_cast<unsigned long long>(h.resource_exhausted),
        static_cast<unsigned long long>(h.other_status), static_cast<unsigned long long>(h.acks));
  }
  const bool ok = load.broken_streams == 0 && load.other == 0 && stored == load.results_sent &&
                  WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return ok ? 0 : 1;
}
