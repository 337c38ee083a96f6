// http_stall: the HTTP server (common/http) under stalled clients. Starts a
// real server on loopback with an agent-sized /metrics (about 1,000 series),
// measures /healthz and /metrics latency on fresh connections, then opens
// --stalled connections that never finish a request (half idle, half
// trickling one header byte a second, from many 127.0.0.0/8 addresses so the
// per-peer cap does not refuse them) and measures again while they are open.
// With --connect HOST:PORT it stalls and measures a server already running
// (an analyzer or agent) instead.
//
//   build/bench/http_stall [--stalled 1000] [--requests 50] [--workers 2]
//                          [--connect 127.0.0.1:8080]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/http/metrics_endpoint.h"
#include "common/http/server.h"
#include "common/metrics/registry.h"

namespace {

using namespace hostmesh;
using Steady = std::chrono::steady_clock;

struct Flags {
  int stalled = 1000;
  int requests = 50;
  int workers = 2;
  std::string connect;  // empty: an in-process server
};

bool ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--stalled" && has_value) {
      flags.stalled = std::atoi(argv[++i]);
    } else if (arg == "--requests" && has_value) {
      flags.requests = std::atoi(argv[++i]);
    } else if (arg == "--workers" && has_value) {
      flags.workers = std::atoi(argv[++i]);
    } else if (arg == "--connect" && has_value) {
      flags.connect = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--stalled N] [--requests N] [--workers N] [--connect HOST:PORT]\n",
                   argv[0]);
      return false;
    }
  }
  return flags.stalled >= 0 && flags.requests > 0;
}

// Each stalled connection holds a descriptor; the defaults allow 1,024.
void RaiseFileLimit(int needed) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  const rlim_t want = std::min<rlim_t>(limit.rlim_max, static_cast<rlim_t>(needed));
  if (limit.rlim_cur < want) {
    limit.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

sockaddr_in Target(const std::string& host, std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  return addr;
}

// A connected socket from `source` (0: the kernel's choice), -1 on failure.
int Connect(const sockaddr_in& target, std::uint32_t source) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (source != 0) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    from.sin_addr.s_addr = htonl(source);
    if (bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from) != 0) {
      close(fd);
      return -1;
    }
  }
  if (connect(fd, reinterpret_cast<const sockaddr*>(&target), sizeof target) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// One GET on a fresh connection, read to EOF: seconds, or a negative value
// when it failed or did not answer 200.
double TimedGet(const sockaddr_in& target, const char* path) {
  const auto start = Steady::now();
  const int fd = Connect(target, 0);
  if (fd < 0) return -1;
  timeval timeout{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const std::string request =
      std::string("GET ") + path + " HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) != ssize_t(request.size())) {
    close(fd);
    return -1;
  }
  std::string reply;
  char buf[16384];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof buf, 0)) > 0) reply.append(buf, static_cast<std::size_t>(n));
  close(fd);
  const double seconds = std::chrono::duration<double>(Steady::now() - start).count();
  return reply.starts_with("HTTP/1.1 200") ? seconds : -1;
}

struct Figures {
  double p50 = 0, p99 = 0, max = 0;
  int failed = 0;
};

Figures Measure(const sockaddr_in& target, const char* path, int requests) {
  std::vector<double> seconds;
  Figures f;
  for (int i = 0; i < requests; ++i) {
    const double s = TimedGet(target, path);
    if (s < 0) {
      ++f.failed;
    } else {
      seconds.push_back(s);
    }
  }
  if (seconds.empty()) return f;
  std::sort(seconds.begin(), seconds.end());
  const auto at = [&](double q) {
    return seconds[std::min(seconds.size() - 1,
                            static_cast<std::size_t>(q * static_cast<double>(seconds.size())))];
  };
  f.p50 = at(0.50);
  f.p99 = at(0.99);
  f.max = seconds.back();
  return f;
}

void Print(const char* when, const char* path, const Figures& f, int requests) {
  std::printf("%-28s %-9s p50 %8.3f ms  p99 %8.3f ms  max %8.3f ms  failed %d/%d\n", when, path,
              f.p50 * 1e3, f.p99 * 1e3, f.max * 1e3, f.failed, requests);
}

// Agent-sized /metrics: 8 NICs, per-pair counters and per-NIC gauges.
void FillRegistry(metrics::Registry& registry) {
  auto& pairs = registry.AddCounterFamily("hostmesh_bench_probes_total", "Probes per NIC pair.");
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      for (const char* kind : {"sent", "received", "timeout", "late", "a", "b", "c", "d", "e", "f",
                               "g", "h", "i", "j", "k"}) {
        pairs
            .Add({{"src_nic", "nic" + std::to_string(a)},
                  {"dst_nic", "nic" + std::to_string(b)},
                  {"kind", kind}})
            .Increment(a * 100 + b);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) return 2;
  RaiseFileLimit(flags.stalled * 2 + 256);

  metrics::Registry registry;
  std::unique_ptr<http::ServerStats> stats;
  std::unique_ptr<http::Server> server;
  sockaddr_in target{};
  if (flags.connect.empty()) {
    FillRegistry(registry);
    stats = std::make_unique<http::ServerStats>(registry);
    http::Router router;
    http::MountMetrics(router, registry);
    http::ServerOptions options;
    options.listen_addresses = {"127.0.0.1:0"};
    options.workers = flags.workers;
    // Room for every stalled connection and the scrapes, the per-peer cap at
    // its default; a timeout beyond the run, so they stay stalled throughout.
    options.max_connections = static_cast<std::size_t>(flags.stalled) + 64;
    options.timeout = std::chrono::seconds{120};
    options.stats = stats.get();
    options.log = [](std::string_view line) {
      std::fprintf(stderr, "server warns: %.*s\n", static_cast<int>(line.size()), line.data());
    };
    std::string error;
    server = http::Server::Start(options, std::move(router), &error);
    if (!server) {
      std::fprintf(stderr, "http_stall: %s\n", error.c_str());
      return 1;
    }
    target = Target("127.0.0.1", server->endpoints()[0].port);
    std::printf("server: in-process, %d workers, max_connections %zu, per peer %zu\n",
                flags.workers, options.max_connections, options.max_connections_per_peer);
  } else {
    const std::size_t colon = flags.connect.rfind(':');
    target = Target(flags.connect.substr(0, colon),
                    static_cast<std::uint16_t>(std::atoi(flags.connect.c_str() + colon + 1)));
    std::printf("server: %s\n", flags.connect.c_str());
  }

  Print("idle server", "/healthz", Measure(target, "/healthz", flags.requests), flags.requests);
  Print("idle server", "/metrics", Measure(target, "/metrics", flags.requests), flags.requests);

  // Stalled connections, 8 per source address (127.1.0.0/16), under the
  // default per-peer caps of both daemons.
  std::vector<int> stalled;
  int failed = 0;
  const auto opening = Steady::now();
  for (int i = 0; i < flags.stalled; ++i) {
    const std::uint32_t source = (127u << 24) | (1u << 16) | static_cast<std::uint32_t>(i / 8 + 1);
    const int fd = Connect(target, source);
    if (fd < 0) {
      ++failed;
    } else {
      stalled.push_back(fd);
    }
  }
  std::printf("stalled: %zu connections open in %.2f s (%d failed to connect)\n", stalled.size(),
              std::chrono::duration<double>(Steady::now() - opening).count(), failed);
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    const std::string header = "GET /metrics HTTP/1.1\r\nX-Slow: ";
    for (std::size_t k = 0; !stop; ++k) {
      for (std::size_t i = 0; i < stalled.size(); i += 2) {  // every other one; the rest idle
        const char byte = k < header.size() ? header[k] : 'a';
        send(stalled[i], &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      for (int t = 0; t < 10 && !stop; ++t)
        std::this_thread::sleep_for(std::chrono::milliseconds{100});
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds{1});  // accepted and trickling

  const std::string label = std::to_string(stalled.size()) + " stalled open";
  Print(label.c_str(), "/healthz", Measure(target, "/healthz", flags.requests), flags.requests);
  Print(label.c_str(), "/metrics", Measure(target, "/metrics", flags.requests), flags.requests);
  if (stats) {
    std::printf("server: %.0f connections open, %.0f refused (cap), %.0f refused (per peer)\n",
                stats->open_connections().Value(),
                stats->Total(http::HttpEvent::kRefusedMaxConnections),
                stats->Total(http::HttpEvent::kRefusedPerPeer));
  }
  stop = true;
  trickle.join();
  for (int fd : stalled) close(fd);
  return 0;
}
