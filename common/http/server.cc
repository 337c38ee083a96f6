#include "common/http/server.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <exception>
#include <future>
#include <optional>
#include <utility>

namespace hostmesh::http {
namespace {

// "host:port" with a non-empty host and a decimal port; civetweb would also
// take "9100" or "9100s" (TLS), which would make endpoints() ambiguous.
bool ParseListenAddress(const std::string& address, Endpoint& out) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || address.find(',') != std::string::npos) {
    return false;
  }
  const char* first = address.data() + colon + 1;
  const char* last = address.data() + address.size();
  std::uint16_t port = 0;
  const auto [ptr, ec] = std::from_chars(first, last, port);
  if (first == last || ec != std::errc() || ptr != last) return false;
  out.host = address.substr(0, colon);
  out.port = port;
  return true;
}

// Where to connect to reach a listening socket from this host: loopback for
// the wildcard address. nullopt for a host name that does not resolve.
std::optional<sockaddr_in> LocalAddressOf(const Endpoint& endpoint) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(endpoint.port);
  if (inet_pton(AF_INET, endpoint.host.c_str(), &addr.sin_addr) != 1) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (getaddrinfo(endpoint.host.c_str(), nullptr, &hints, &found) != 0) return std::nullopt;
    addr.sin_addr = reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr;
    freeaddrinfo(found);
  }
  if (addr.sin_addr.s_addr == htonl(INADDR_ANY)) addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

// Starts a connection to each address and drops it at once (non-blocking: a
// firewalled address cannot stall Stop). False once every address refuses,
// i.e. civetweb has closed its listening sockets.
bool PokeListeningSockets(const std::vector<sockaddr_in>& addresses) {
  bool any_listening = false;
  for (const sockaddr_in& addr : addresses) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    const int rc = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    if (rc == 0 || errno != ECONNREFUSED) any_listening = true;
    close(fd);
  }
  return any_listening;
}

void InitCivetwebOnce() {
  static std::once_flag once;
  // Never undone with mg_exit_library: servers may start and stop until exit.
  std::call_once(once, [] { mg_init_library(0); });
}

void Send(mg_connection* conn, const Response& response, bool head_only) {
  const std::string length = std::to_string(response.body.size());
  mg_response_header_start(conn, response.status);
  mg_response_header_add(conn, "Content-Type", response.content_type.c_str(), -1);
  mg_response_header_add(conn, "Content-Length", length.c_str(), -1);
  for (const auto& [name, value] : response.headers) {
    mg_response_header_add(conn, name.c_str(), value.c_str(), -1);
  }
  mg_response_header_send(conn);
  if (!head_only) mg_write(conn, response.body.data(), response.body.size());
}

Response InternalError(std::string_view why) {
  Response response;
  response.status = 500;
  response.body = "internal error: " + std::string(why) + "\n";
  return response;
}

}  // namespace

Server::Server(ServerOptions options, Router router)
    : options_(std::move(options)), router_(std::move(router)) {}

Server::~Server() {
  Stop();
}

std::unique_ptr<Server> Server::Start(ServerOptions options, Router router, std::string* error) {
  std::vector<Endpoint> endpoints(options.listen_addresses.size());
  std::string ports;
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    const std::string& address = options.listen_addresses[i];
    if (!ParseListenAddress(address, endpoints[i])) {
      *error = "listen address '" + address + "' is not host:port";
      return nullptr;
    }
    if (i > 0) ports += ',';
    ports += address;
  }
  if (endpoints.empty()) {
    *error = "no listen address";
    return nullptr;
  }
  if (options.num_threads < 1 || options.request_timeout_ms < 1) {
    *error = "num_threads and request_timeout_ms must be positive";
    return nullptr;
  }

  InitCivetwebOnce();
  std::unique_ptr<Server> server(new Server(std::move(options), std::move(router)));
  const std::string threads = std::to_string(server->options_.num_threads);
  const std::string timeout = std::to_string(server->options_.request_timeout_ms);
  // clang-format off
  const char* civetweb_options[] = {
      "listening_ports",    ports.c_str(),
      "num_threads",        threads.c_str(),
      "request_timeout_ms", timeout.c_str(),
      "enable_keep_alive",  "no",
      nullptr};
  // clang-format on
  mg_callbacks callbacks{};
  callbacks.begin_request = &Server::OnBeginRequest;
  callbacks.log_message = &Server::OnLogMessage;
  mg_init_data init{&callbacks, server.get(), civetweb_options};
  char error_text[256] = {};
  unsigned error_code = 0;
  mg_error_data error_data{&error_code, error_text, sizeof error_text};

  server->ctx_ = mg_start2(&init, &error_data);
  {
    std::lock_guard lock(server->log_mu_);
    server->starting_ = false;
    if (server->ctx_ == nullptr) {
      *error = server->start_log_.empty() ? std::string(error_text) : server->start_log_;
      return nullptr;
    }
  }

  // Ports come back in the order of listening_ports; port 0 now reads as the
  // port the kernel picked.
  std::vector<mg_server_port> bound(endpoints.size() + 1);
  const int n = mg_get_server_ports(server->ctx_, static_cast<int>(bound.size()), bound.data());
  if (n != static_cast<int>(endpoints.size())) {
    *error = "civetweb reports " + std::to_string(n) + " listening ports for " +
             std::to_string(endpoints.size()) + " addresses";
    return nullptr;  // the destructor stops the server
  }
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    endpoints[i].port = static_cast<std::uint16_t>(bound[i].port);
    if (auto local = LocalAddressOf(endpoints[i])) server->wake_addresses_.push_back(*local);
  }
  server->endpoints_ = std::move(endpoints);
  return server;
}

void Server::Stop() {
  if (ctx_ == nullptr) return;
  // civetweb 1.15's accept loop sees the stop flag only when poll() returns,
  // which without traffic is every 2 s. So mg_stop runs aside while the
  // listening sockets get a throw-away connection every few ms: the first one
  // after the flag is set ends the loop, and Stop takes milliseconds.
  std::future<void> stopped = std::async(std::launch::async, mg_stop, ctx_);
  bool poke = !wake_addresses_.empty();
  while (stopped.wait_for(std::chrono::milliseconds(poke ? 5 : 100)) != std::future_status::ready) {
    if (poke) poke = PokeListeningSockets(wake_addresses_);
  }
  ctx_ = nullptr;
}

int Server::OnBeginRequest(mg_connection* conn) {
  const mg_request_info* info = mg_get_request_info(conn);
  const auto* self = static_cast<const Server*>(info->user_data);
  Request request;
  request.method = info->request_method;
  // local_uri is null for an absolute URI naming another host (a proxy
  // request); an empty path matches no route.
  request.path = info->local_uri != nullptr ? info->local_uri : "";
  request.query = info->query_string != nullptr ? info->query_string : "";

  Response response;
  // Exceptions must not unwind through civetweb's C frames.
  try {
    response = self->router_.Dispatch(request);
  } catch (const std::exception& e) {
    response = InternalError(e.what());
  } catch (...) {
    response = InternalError("unknown exception");
  }
  Send(conn, response, request.method == "HEAD");
  return response.status;  // recorded by civetweb as the access-log status
}

int Server::OnLogMessage(const mg_connection* conn, const char* message) {
  auto* self = static_cast<Server*>(mg_get_user_data(mg_get_context(conn)));
  if (self == nullptr) return 0;
  std::lock_guard lock(self->log_mu_);
  if (self->starting_) {
    if (!self->start_log_.empty()) self->start_log_ += "; ";
    self->start_log_ += message;
  } else if (self->options_.log) {
    self->options_.log(message);
  }
  return 1;  // handled: civetweb writes nothing itself
}

}  // namespace hostmesh::http
