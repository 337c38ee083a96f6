// A small HTTP server (civetweb underneath) that hands GET requests to a
// Router: the agent's /metrics, later the analyzer's JSON API.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/http/router.h"

struct mg_context;
struct mg_connection;
struct sockaddr_in;

namespace hostmesh::http {

struct ServerOptions {
  // "ip:port" or "hostname:port", e.g. "127.0.0.1:0" or "0.0.0.0:9100". IPv4
  // only: Debian's civetweb is built without IPv6. Port 0 takes a free port.
  std::vector<std::string> listen_addresses;
  int num_threads = 2;  // requests served at once; scrapes are rare and short
  int request_timeout_ms = 10'000;
  // civetweb's error messages once running (socket errors, timeouts); they are
  // dropped when unset. Called from server threads.
  std::function<void(std::string_view)> log;
};

// One listening socket as bound: the configured host and the actual port.
struct Endpoint {
  std::string host;
  std::uint16_t port = 0;
  std::string ToString() const { return host + ":" + std::to_string(port); }
};

class Server {
 public:
  // Listens on every address and serves until Stop or destruction. Returns
  // nullptr and the reason in *error when an address is malformed or cannot
  // be bound (e.g. "cannot bind to 127.0.0.1:9100: 98 (Address already in use)").
  // Side effect of civetweb: SIGPIPE is ignored process-wide from here on.
  static std::unique_ptr<Server> Start(ServerOptions options, Router router, std::string* error);

  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Closes the sockets and waits for requests in flight. Idempotent; call it
  // from the owning thread, never from a handler.
  void Stop();

  // Same order as options.listen_addresses.
  const std::vector<Endpoint>& endpoints() const { return endpoints_; }

 private:
  Server(ServerOptions options, Router router);

  static int OnBeginRequest(mg_connection* conn);
  static int OnLogMessage(const mg_connection* conn, const char* message);

  const ServerOptions options_;
  const Router router_;
  std::vector<Endpoint> endpoints_;
  std::vector<sockaddr_in> wake_addresses_;  // see Stop()
  mg_context* ctx_ = nullptr;

  // civetweb reports why start-up failed only through its log callback, so
  // messages are kept while starting and forwarded to options_.log after.
  std::mutex log_mu_;
  bool starting_ = true;
  std::string start_log_;
};

}  // namespace hostmesh::http
