// The server under slow and idle clients (issue 24): real sockets on
// loopback, stalled connections from many 127.0.0.0/8 source addresses (each
// a distinct peer), a peer over its cap, and scrapes that must still answer
// at once; then the caps and deadlines as counted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/http/metrics_endpoint.h"
#include "common/http/server.h"
#include "common/metrics/exposition.h"
#include "common/metrics/registry.h"
#include "tests/common/http/http_test_client.h"

namespace hostmesh::http {
namespace {

using namespace std::chrono_literals;
using testing::ConnectFrom;
using testing::Fetch;
using ::testing::HasSubstr;
using testing::HttpReply;

class Sockets {
 public:
  ~Sockets() {
    for (int fd : fds_) close(fd);
  }
  int Add(int fd) {
    fds_.push_back(fd);
    return fd;
  }
  const std::vector<int>& fds() const { return fds_; }
  void CloseAll() {
    for (int fd : fds_) close(fd);
    fds_.clear();
  }

 private:
  std::vector<int> fds_;
};

// Whether the server closed `fd` (EOF or reset) within `wait`.
bool ClosedByServer(int fd, std::chrono::milliseconds wait) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
  char byte;
  const ssize_t n = recv(fd, &byte, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN);
}

// How many of `fds` the server closed within `wait` (one wait for all).
int CountClosedByServer(const std::vector<int>& fds, std::chrono::milliseconds wait) {
  std::this_thread::sleep_for(wait);
  int closed = 0;
  for (int fd : fds) closed += ClosedByServer(fd, 0ms) ? 1 : 0;
  return closed;
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

class StalledClients : public ::testing::Test {
 protected:
  std::unique_ptr<Server> StartServer(std::size_t max, std::size_t per_peer,
                                      std::chrono::nanoseconds timeout) {
    registry_.AddGauge("hostmesh_test_gauge", "A series to scrape.").Set(1);
    stats_ = std::make_unique<ServerStats>(registry_);
    Router router;
    MountMetrics(router, registry_);
    ServerOptions options;
    options.listen_addresses = {"127.0.0.1:0"};
    options.max_connections = max;
    options.max_connections_per_peer = per_peer;
    options.timeout = timeout;
    options.stats = stats_.get();
    options.log = [this](std::string_view line) {
      std::lock_guard lock(log_mu_);
      log_.emplace_back(line);
    };
    std::string error;
    std::unique_ptr<Server> server = Server::Start(options, std::move(router), &error);
    EXPECT_NE(server, nullptr) << error;
    if (server) port_ = server->endpoints()[0].port;
    return server;
  }

  // Polls until `done` holds or `wait` passes.
  template <typename F>
  bool Eventually(F done, std::chrono::milliseconds wait) {
    const auto until = std::chrono::steady_clock::now() + wait;
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(20ms);
    }
    return true;
  }

  std::string Log() {
    std::lock_guard lock(log_mu_);
    std::string all;
    for (const std::string& line : log_) all += line + "\n";
    return all;
  }

  metrics::Registry registry_;
  std::unique_ptr<ServerStats> stats_;
  std::uint16_t port_ = 0;
  std::mutex log_mu_;
  std::vector<std::string> log_;
};

TEST_F(StalledClients, ScrapesAnswerWhileTwoHundredConnectionsStallAndCapsAreCounted) {
  constexpr int kPeers = 10;
  constexpr int kPerPeer = 20;
  const std::unique_ptr<Server> server = StartServer(400, kPerPeer, 3s);
  ASSERT_NE(server, nullptr);

  // 200 stalled connections from 10 peers: half idle, half trickling a
  // request header one byte at a time (never finishing it).
  Sockets stalled;
  std::vector<int> tricklers;
  for (int peer = 0; peer < kPeers; ++peer) {
    const std::string source = "127.0.0." + std::to_string(10 + peer);
    for (int i = 0; i < kPerPeer; ++i) {
      const int fd = stalled.Add(ConnectFrom(source.c_str(), port_));
      ASSERT_GE(fd, 0) << source;
      if (i % 2 == 0) tricklers.push_back(fd);
    }
  }
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    const std::string header = "GET /metrics HTTP/1.1\r\nX-Slow: ";
    for (std::size_t k = 0; !stop; ++k) {
      for (int fd : tricklers) {
        const char byte = k < header.size() ? header[k] : 'a';
        send(fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      std::this_thread::sleep_for(100ms);
    }
  });

  // One more peer opens 25: 20 are admitted (and stall), 5 are refused.
  Sockets greedy;
  for (int i = 0; i < 25; ++i) ASSERT_GE(greedy.Add(ConnectFrom("127.0.0.50", port_)), 0);
  EXPECT_EQ(CountClosedByServer(greedy.fds(), 300ms), 5);

  // Scrapes from yet another peer answer at once, every one of them.
  double slowest = 0;
  for (int i = 0; i < 10; ++i) {
    for (const char* path : {"/healthz", "/metrics"}) {
      const auto start = std::chrono::steady_clock::now();
      std::string error;
      const std::optional<HttpReply> reply = Fetch(port_, "GET", path, &error);
      slowest = std::max(slowest, Seconds(std::chrono::steady_clock::now() - start));
      ASSERT_TRUE(reply.has_value()) << path << ": " << error;
      EXPECT_EQ(reply->status, 200) << path;
      if (std::string(path) == "/metrics") {
        EXPECT_THAT(reply->body, HasSubstr("hostmesh_test_gauge"));
      }
    }
  }
  EXPECT_LT(slowest, 1.0);

  EXPECT_EQ(stats_->Total(HttpEvent::kRefusedPerPeer), 5);
  EXPECT_EQ(stats_->Total(HttpEvent::kRefusedMaxConnections), 0);

  // At the deadline every stalled connection is closed and counted, the
  // trickling ones too (their bytes do not move the deadline).
  const std::size_t held = stalled.fds().size() + 20;
  EXPECT_TRUE(
      Eventually([&] { return stats_->Total(HttpEvent::kTimeoutRequest) >= double(held); }, 8s))
      << stats_->Total(HttpEvent::kTimeoutRequest);
  stop = true;
  trickle.join();
  EXPECT_EQ(stats_->Total(HttpEvent::kTimeoutRequest), double(held));
  for (int fd : stalled.fds()) EXPECT_TRUE(ClosedByServer(fd, 1000ms));
  EXPECT_TRUE(Eventually([&] { return stats_->open_connections().Value() == 0; }, 2s));

  // Both degraded modes were warned of, once each (throttled), with a count.
  const std::string log = Log();
  EXPECT_THAT(log, HasSubstr("max_connections_per_peer (20), the last from 127.0.0.50"));
  EXPECT_THAT(log, HasSubstr("sent no whole request within 3s"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("libmicrohttpd"))) << "no noise per client";

  // And the exposition says so.
  const std::string text = metrics::RenderText(registry_);
  EXPECT_THAT(
      text,
      HasSubstr("hostmesh_http_connections_refused_total{reason=\"max_connections_per_peer\"} 5"));
  EXPECT_THAT(text,
              HasSubstr("hostmesh_http_timeouts_total{phase=\"request\"} " + std::to_string(held)));
}

TEST_F(StalledClients, TheGlobalCapRefusesAtOnceAndFreesWithTheConnections) {
  const std::unique_ptr<Server> server = StartServer(20, 20, 10s);
  ASSERT_NE(server, nullptr);
  Sockets idle;
  for (int i = 0; i < 20; ++i) ASSERT_GE(idle.Add(ConnectFrom("127.0.0.20", port_)), 0);
  // Admitted before the next one arrives.
  ASSERT_TRUE(Eventually([&] { return stats_->open_connections().Value() == 20; }, 2s));

  const auto start = std::chrono::steady_clock::now();
  std::string error;
  EXPECT_FALSE(Fetch(port_, "GET", "/healthz", &error).has_value());
  EXPECT_LT(Seconds(std::chrono::steady_clock::now() - start), 1.0) << "refused, not queued";
  EXPECT_EQ(stats_->Total(HttpEvent::kRefusedMaxConnections), 1);
  EXPECT_THAT(Log(), HasSubstr("at max_connections (20), the last from 127.0.0.1"));

  idle.CloseAll();
  EXPECT_TRUE(Eventually(
      [&] {
        const std::optional<HttpReply> reply = Fetch(port_, "GET", "/healthz");
        return reply && reply->status == 200;
      },
      2s));
}

// Reads one response with a Content-Length body from a kept-alive socket.
std::string ReadResponse(int fd) {
  std::string raw;
  char buf[4096];
  for (;;) {
    const std::size_t head_end = raw.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const std::size_t at = raw.find("Content-Length: ");
      const std::size_t length =
          at == std::string::npos ? 0 : std::stoul(raw.substr(at + 16, raw.find("\r\n", at)));
      if (raw.size() >= head_end + 4 + length) return raw;
    }
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return raw;
    raw.append(buf, static_cast<std::size_t>(n));
  }
}

TEST_F(StalledClients, AKeptAliveConnectionServesSeveralRequestsThenIdlesOut) {
  const std::unique_ptr<Server> server = StartServer(10, 10, 500ms);
  ASSERT_NE(server, nullptr);
  Sockets s;
  const int fd = s.Add(ConnectFrom("127.0.0.1", port_));
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 3; ++i) {
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), ssize_t(request.size()));
    const std::string response = ReadResponse(fd);
    EXPECT_THAT(response, HasSubstr("HTTP/1.1 200")) << i;
    EXPECT_THAT(response, HasSubstr("\r\n\r\nok\n")) << i;
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(ClosedByServer(fd, 2000ms));
  EXPECT_GE(Seconds(std::chrono::steady_clock::now() - start), 0.3) << "closed at the deadline";
  // An idle scraper is no degraded mode: neither counted nor warned of.
  EXPECT_EQ(stats_->Total(HttpEvent::kTimeoutRequest), 0);
  EXPECT_EQ(stats_->Total(HttpEvent::kTimeoutResponse), 0);
  EXPECT_THAT(Log(), ::testing::Not(HasSubstr("closed")));
}

TEST_F(StalledClients, RequestBodiesAreRefused) {
  const std::unique_ptr<Server> server = StartServer(10, 10, 2s);
  ASSERT_NE(server, nullptr);
  Sockets s;
  const int fd = s.Add(ConnectFrom("127.0.0.1", port_));
  const std::string request =
      "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nabc";
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), ssize_t(request.size()));
  EXPECT_THAT(ReadResponse(fd), HasSubstr("HTTP/1.1 413"));
  EXPECT_TRUE(ClosedByServer(fd, 1000ms)) << "the body is never read";
}

TEST_F(StalledClients, OversizedHeadersAreRefusedByTheLibrary) {
  const std::unique_ptr<Server> server = StartServer(10, 10, 2s);
  ASSERT_NE(server, nullptr);
  std::string error;
  const std::optional<HttpReply> reply = testing::FetchWith(
      port_, "GET", "/healthz", "X-Big: " + std::string(64 * 1024, 'a') + "\r\n", &error);
  ASSERT_TRUE(reply.has_value()) << error;
  EXPECT_GE(reply->status, 400);
  EXPECT_LT(reply->status, 500);
}

}  // namespace
}  // namespace hostmesh::http
