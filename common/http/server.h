// The HTTP server of both daemons (the agent's /metrics and debug routes, the
// analyzer's JSON API, on-call page and /metrics): libmicrohttpd underneath,
// requests handed to a Router.
//
// Built to survive hostile clients (DESIGN 7): a few epoll worker threads
// serve every connection, so a connection that stalls costs a socket and a
// small buffer, never a thread; global and per-peer connection caps; a
// deadline for each request to arrive and each response to be taken; bodies
// refused; optional TLS (rotated certificate files reloaded without a
// restart), client certificates (mutual TLS) and a bearer token. /healthz
// and /readyz are built in and never need credentials. Every degraded mode
// is warned of (throttled) and counted (server_stats.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/clock.h"
#include "common/http/router.h"
#include "common/http/server_stats.h"

namespace hostmesh::http {

struct TlsOptions {
  // PEM files: the served chain (leaf first) and its private key. Reloaded
  // when they change; a pair that does not load leaves the old one serving.
  std::string cert_file;
  std::string key_file;
  // PEM CA bundle, optional. When set, every route that needs credentials
  // needs a client certificate that chains to it (mutual TLS); a client
  // certificate that does not is refused at the handshake. Reloaded too.
  std::string client_ca_file;
};

struct ServerOptions {
  // "ip:port", "[ipv6]:port" or "hostname:port", e.g. "127.0.0.1:0" or
  // "10.0.0.5:9100". Port 0 takes a free port (endpoints() tells which).
  std::vector<std::string> listen_addresses;

  // Epoll threads serving all connections (libmicrohttpd's thread pool). A
  // handler runs on one and holds it: 2 lets /healthz answer while a large
  // API answer renders. Connections, stalled or not, need no thread.
  int workers = 2;
  // Connections open at once, whoever holds them. Beyond it new ones are
  // closed on arrival. 256: a daemon serves a few scrapers, hostmeshctl and
  // browsers; well under the 1024 descriptors a default unit may open.
  std::size_t max_connections = 256;
  // Connections one peer address may hold: one client cannot take all the
  // places. 16: Prometheus keeps one connection per target, a browser six.
  std::size_t max_connections_per_peer = 16;
  // A request must arrive whole within this of the connection opening (or
  // of the previous response, on a kept-alive connection), and a response be
  // taken within this of being ready. 10 s: Prometheus's default scrape
  // timeout; a request is one packet, a response a few.
  std::chrono::nanoseconds timeout = std::chrono::seconds{10};
  // Request line and headers (bodies are refused: 413). 32 KiB holds the
  // largest browser cookies; beyond, libmicrohttpd answers 431 or 414.
  std::size_t max_request_bytes = 32 * 1024;

  std::optional<TlsOptions> tls;  // plain HTTP when unset
  // A file holding the bearer token; when set, requests need
  // `Authorization: Bearer <token>` (401 otherwise). Reloaded on change.
  std::string bearer_token_file;
  // Whether metrics_path needs the token and client certificate too. Off by
  // default: Prometheus scrapes on a trusted network.
  bool protect_metrics = false;
  std::string metrics_path = "/metrics";
  // How often the TLS and token files are looked at for changes.
  std::chrono::nanoseconds reload_check_interval = std::chrono::seconds{5};

  // /readyz: "" when the owner is ready, else a one-line reason (503). Runs
  // on a server thread. Unset: ready whenever the server runs.
  std::function<std::string()> ready;
  // Counters in the process registry. Null: counted in a private registry
  // (tests, tools).
  ServerStats* stats = nullptr;
  // Warnings (degraded modes, throttled) and libmicrohttpd's own messages;
  // dropped when unset. Called from server threads.
  std::function<void(std::string_view)> log;
  // News that is no warning (a rotated file put in service); dropped when unset.
  std::function<void(std::string_view)> log_info;
  const Clock* clock = nullptr;  // null: the system clock
};

// The options' own consistency: "" when they can start a server, else the
// first problem (naming the option).
std::string ValidateServerOptions(const ServerOptions& options);

// One listening socket as bound: the configured host and the actual port.
struct Endpoint {
  std::string host;
  std::uint16_t port = 0;
  std::string ToString() const;  // "127.0.0.1:8080", "[::1]:8080"
};

class Server {
 public:
  // Listens on every address and serves until Stop or destruction. Returns
  // nullptr and the reason in *error when an option is invalid, an address
  // is malformed or cannot be bound ("cannot bind to 127.0.0.1:9100: Address
  // already in use"), or a TLS or token file does not load (naming it).
  static std::unique_ptr<Server> Start(ServerOptions options, Router router, std::string* error);

  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Closes the sockets and waits for requests in flight. Idempotent; call it
  // from the owning thread, never from a handler.
  void Stop();

  // Same order as options.listen_addresses.
  const std::vector<Endpoint>& endpoints() const;

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hostmesh::http
