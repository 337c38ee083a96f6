#include "common/http/server.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "common/base/warn_throttle.h"
#include "common/http/auth.h"
#include "common/http/connection_book.h"
#include "common/http/query.h"
#include "common/http/reloading_files.h"
#include "common/http/server_impl.h"
#include "common/http/tls_credentials.h"

namespace hostmesh::http {
namespace {

using namespace std::chrono_literals;

// "host:port" with a non-empty host and a decimal port, or "[v6]:port".
// Commas and bare IPv6 are refused: endpoints() must read back unambiguously.
bool ParseListenAddress(const std::string& address, Endpoint& out) {
  if (address.find(',') != std::string::npos) return false;
  std::string host;
  std::size_t port_at = 0;
  if (address.starts_with('[')) {
    const std::size_t close = address.find("]:");
    if (close == std::string::npos || close == 1) return false;
    host = address.substr(1, close - 1);
    if (host.find(':') == std::string::npos) return false;
    port_at = close + 2;
  } else {
    const std::size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0) return false;
    host = address.substr(0, colon);
    if (host.find(':') != std::string::npos) return false;
    port_at = colon + 1;
  }
  const char* first = address.data() + port_at;
  const char* last = address.data() + address.size();
  std::uint16_t port = 0;
  const auto [ptr, ec] = std::from_chars(first, last, port);
  if (first == last || ec != std::errc() || ptr != last) return false;
  out.host = std::move(host);
  out.port = port;
  return true;
}

std::string Errno(int err) {
  return std::strerror(err);
}

std::string Seconds(std::chrono::nanoseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%gs", std::chrono::duration<double>(d).count());
  return text;
}

// A bound, listening, non-blocking socket for `endpoint`; its port is set
// to the one bound. -1 with the reason naming the address otherwise.
int Listen(Endpoint& endpoint, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(endpoint.port);
  if (const int rc = getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    *error = "cannot resolve " + endpoint.ToString() + ": " + gai_strerror(rc);
    return -1;
  }
  const int fd = socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = "cannot open a socket for " + endpoint.ToString() + ": " + Errno(errno);
    freeaddrinfo(found);
    return -1;
  }
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  // An explicit IPv6 address serves IPv6 only; "[::]" does not take 0.0.0.0's port.
  if (found->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
  const bool bound = bind(fd, found->ai_addr, found->ai_addrlen) == 0;
  freeaddrinfo(found);
  if (!bound || listen(fd, SOMAXCONN) != 0) {
    *error = std::string("cannot ") + (bound ? "listen on " : "bind to ") + endpoint.ToString() +
             ": " + Errno(errno);
    close(fd);
    return -1;
  }
  sockaddr_storage addr{};
  socklen_t length = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) == 0) {
    endpoint.port =
        ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port
                                         : reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
  }
  return fd;
}

// Whether `fd` is still the listening socket bound to `port`: after a failed
// MHD_start_daemon, which closes a listen socket it was given on some
// failure paths and not on others.
bool StillListening(int fd, std::uint16_t port) {
  int accepting = 0;
  socklen_t size = sizeof accepting;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &size) != 0 || accepting == 0) {
    return false;
  }
  sockaddr_storage addr{};
  socklen_t length = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) return false;
  const std::uint16_t bound =
      ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port
                                       : reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
  return bound == port;
}

}  // namespace

std::string Endpoint::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string ValidateServerOptions(const ServerOptions& o) {
  if (o.listen_addresses.empty()) return "no listen address";
  for (const std::string& address : o.listen_addresses) {
    Endpoint ignored;
    if (!ParseListenAddress(address, ignored)) {
      return "listen address '" + address + "' is not host:port";
    }
  }
  if (o.workers < 1 || o.workers > 64) {
    return "workers must be between 1 and 64, got " + std::to_string(o.workers);
  }
  if (o.max_connections < 1 || o.max_connections > 1'000'000) {
    return "max_connections must be between 1 and 1000000, got " +
           std::to_string(o.max_connections);
  }
  if (o.max_connections_per_peer < 1 || o.max_connections_per_peer > o.max_connections) {
    return "max_connections_per_peer must be between 1 and max_connections (" +
           std::to_string(o.max_connections) + "), got " +
           std::to_string(o.max_connections_per_peer);
  }
  if (o.timeout < 1ms || o.timeout > 1h) {
    return "timeout must be between 1ms and 1h, got " + Seconds(o.timeout);
  }
  if (o.max_request_bytes < 1024 || o.max_request_bytes > (16u << 20)) {
    return "max_request_bytes must be between 1 KiB and 16 MiB, got " +
           std::to_string(o.max_request_bytes);
  }
  if (o.tls) {
    if (o.tls->cert_file.empty() || o.tls->key_file.empty()) {
      return "tls needs both a certificate file and a key file";
    }
  }
  if (o.reload_check_interval <= 0ns) return "reload_check_interval must be positive";
  if (!o.metrics_path.starts_with('/')) return "metrics_path must start with /";
  return "";
}

namespace {

const SystemClock& DefaultClock() {
  static const SystemClock clock;
  return clock;
}

}  // namespace

Server::Impl::Impl(ServerOptions options, Router router)
    : options_(std::move(options)),
      router_(std::move(router)),
      clock_(options_.clock != nullptr ? *options_.clock : DefaultClock()),
      book_(ConnectionLimits{options_.max_connections, options_.max_connections_per_peer,
                             options_.timeout}) {
  if (options_.stats != nullptr) {
    stats_ = options_.stats;
  } else {
    own_registry_ = std::make_unique<metrics::Registry>();
    own_stats_ = std::make_unique<ServerStats>(*own_registry_);
    stats_ = own_stats_.get();
  }
  policy_.token_required = !options_.bearer_token_file.empty();
  policy_.client_cert_required = options_.tls && !options_.tls->client_ca_file.empty();
  policy_.protect_metrics = options_.protect_metrics;
  policy_.metrics_path = options_.metrics_path;
}

bool Server::Impl::LoadFiles(std::string* error) {
  const MonoTime now = clock_.MonotonicNow();
  const auto every = options_.reload_check_interval;
  if (options_.tls) {
    certificate_ = std::make_unique<ReloadingFiles<CertifiedKey>>(
        std::vector<std::filesystem::path>{options_.tls->cert_file, options_.tls->key_file},
        [](const std::vector<std::string>& files, std::string* why) {
          return CertifiedKey::FromPem(files[0], files[1], why);
        },
        every);
    if (!certificate_->Load(now, error)) return false;
    if (!options_.tls->client_ca_file.empty()) {
      client_ca_ = std::make_unique<ReloadingFiles<ClientTrust>>(
          std::vector<std::filesystem::path>{options_.tls->client_ca_file},
          [](const std::vector<std::string>& files, std::string* why) {
            return ClientTrust::FromPem(files[0], why);
          },
          every);
      if (!client_ca_->Load(now, error)) return false;
    }
  }
  if (!options_.bearer_token_file.empty()) {
    token_ = std::make_unique<ReloadingFiles<TokenDigest>>(
        std::vector<std::filesystem::path>{options_.bearer_token_file},
        [](const std::vector<std::string>& files,
           std::string* why) -> std::shared_ptr<const TokenDigest> {
          const std::optional<std::string> token = ParseTokenFile(files[0], why);
          if (!token) return nullptr;
          return std::make_shared<const TokenDigest>(DigestOf(*token));
        },
        every);
    if (!token_->Load(now, error)) return false;
  }
  return true;
}

bool Server::Impl::Start(std::string* error) {
  if (std::string why = ValidateServerOptions(options_); !why.empty()) {
    *error = std::move(why);
    return false;
  }
  if (!LoadFiles(error)) return false;

  endpoints_.resize(options_.listen_addresses.size());
  for (std::size_t i = 0; i < endpoints_.size(); ++i) {
    ParseListenAddress(options_.listen_addresses[i], endpoints_[i]);
  }
  // Bound first, all of them: a busy address fails the start before any
  // thread runs, with the address in the message.
  std::vector<int> fds;
  for (Endpoint& endpoint : endpoints_) {
    const int fd = Listen(endpoint, error);
    if (fd < 0) {
      for (int open : fds) close(open);
      return false;
    }
    fds.push_back(fd);
  }

  // libmicrohttpd's own limits are backstops: its connection limit (split
  // between the workers) is set where our caps always refuse first, and its
  // inactivity timeout beyond our deadlines (the housekeeper closes on time).
  const auto workers = static_cast<unsigned>(options_.workers);
  const auto backstop_limit = static_cast<unsigned>((options_.max_connections + 1) * workers);
  const auto backstop_timeout =
      static_cast<unsigned>(std::chrono::ceil<std::chrono::seconds>(options_.timeout).count() + 2);
  unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
  if (options_.tls) flags |= MHD_USE_TLS;

  for (std::size_t i = 0; i < fds.size(); ++i) {
    std::vector<MHD_OptionItem> items = {
        {MHD_OPTION_LISTEN_SOCKET, fds[i], nullptr},
        {MHD_OPTION_CONNECTION_LIMIT, backstop_limit, nullptr},
        {MHD_OPTION_CONNECTION_TIMEOUT, backstop_timeout, nullptr},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<intptr_t>(options_.max_request_bytes),
         nullptr},
        {MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&Impl::OnConnection), this},
        {MHD_OPTION_URI_LOG_CALLBACK, reinterpret_cast<intptr_t>(&Impl::OnRequestLine), this},
        {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&Impl::OnCompleted), this},
        {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&Impl::OnLibraryMessage), this},
    };
    if (workers > 1) items.push_back({MHD_OPTION_THREAD_POOL_SIZE, workers, nullptr});
    if (options_.tls) {
      items.push_back(
          {MHD_OPTION_HTTPS_CERT_CALLBACK, 0, reinterpret_cast<void*>(&Impl::OnCertificate)});
    }
    items.push_back({MHD_OPTION_END, 0, nullptr});
    MHD_Daemon* daemon = MHD_start_daemon(flags, 0, &Impl::OnAccept, this, &Impl::OnRequest, this,
                                          MHD_OPTION_ARRAY, items.data(), MHD_OPTION_END);
    if (daemon == nullptr) {
      {
        std::lock_guard lock(mu_);
        *error = "cannot serve " + endpoints_[i].ToString() + ": " +
                 (start_log_.empty() ? std::string("libmicrohttpd refused to start") : start_log_);
      }
      for (std::size_t j = i; j < fds.size(); ++j) {
        if (j > i || StillListening(fds[j], endpoints_[j].port)) close(fds[j]);
      }
      Stop();
      return false;
    }
    daemons_.push_back(daemon);
  }
  {
    std::lock_guard lock(mu_);
    starting_ = false;
  }
  housekeeper_ = std::thread([this] { Housekeep(); });
  return true;
}

void Server::Impl::Stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (housekeeper_.joinable()) housekeeper_.join();
  // Closes the listening sockets, then every connection (their callbacks
  // run), after requests in flight are answered.
  for (MHD_Daemon* daemon : daemons_) MHD_stop_daemon(daemon);
  daemons_.clear();
}

void Server::Impl::Housekeep() {
  // Deadlines are checked this often: a tenth of the timeout, so a
  // connection lives at most 10% past it (and files at their own period).
  const auto tick = std::clamp<std::chrono::nanoseconds>(
      std::min(options_.timeout / 10, options_.reload_check_interval), 10ms, 1s);
  std::unique_lock stop_lock(stop_mu_);
  while (!stop_cv_.wait_for(stop_lock, tick, [this] { return stopping_; })) {
    const MonoTime now = clock_.MonotonicNow();
    {
      std::lock_guard lock(mu_);
      for (const auto& [id, phase] : book_.TakeOverdue(now)) {
        const auto* conn = reinterpret_cast<const Connection*>(id);
        // Counted before the client can see the close.
        if (const std::optional<HttpEvent> event = TimeoutEvent(phase)) stats_->Count(*event);
        // The worker sees the socket end and closes the connection; the
        // descriptor stays valid until NOTIFY_CONNECTION CLOSED takes it out
        // of the book, which needs this lock.
        shutdown(conn->fd, SHUT_RDWR);
        if (phase == ConnectionPhase::kRequest) {
          NoteLocked(Warning::kTimeoutRequest, now, conn->peer);
        } else if (phase == ConnectionPhase::kResponse) {
          NoteLocked(Warning::kTimeoutResponse, now, conn->peer);
        }
      }
      FlushWarningsLocked(now);
    }
    PollFiles(now);
  }
}

void Server::Impl::PollFiles(MonoTime now) {
  const auto poll = [&](auto& files, WatchedFile which, const std::string& what) {
    if (!files) return;
    std::string error;
    switch (files->Poll(now, &error)) {
      case ReloadOutcome::kUnchanged:
        break;
      case ReloadOutcome::kReloaded:
        if (options_.log_info) options_.log_info("http: the changed " + what + " is in service");
        break;
      case ReloadOutcome::kFailed:
        stats_->Count(ReloadFailedEvent(which));
        Log("http: the changed " + what +
            " did not load, the previous one stays in service: " + error);
        break;
    }
  };
  poll(certificate_, WatchedFile::kTlsCert, "TLS certificate and key");
  poll(client_ca_, WatchedFile::kClientCa, "client CA");
  poll(token_, WatchedFile::kBearerToken, "bearer token");
}

std::string Server::Impl::Describe(Warning which, std::uint64_t n, const std::string& last) const {
  const std::string count = std::to_string(n);
  switch (which) {
    case Warning::kRefusedMax:
      return "http: refused " + count + " connection(s) at max_connections (" +
             std::to_string(options_.max_connections) + "), the last from " + last;
    case Warning::kRefusedPeer:
      return "http: refused " + count + " connection(s) at max_connections_per_peer (" +
             std::to_string(options_.max_connections_per_peer) + "), the last from " + last;
    case Warning::kTimeoutRequest:
      return "http: closed " + count + " connection(s) that sent no whole request within " +
             Seconds(options_.timeout) + " (slow or silent clients), the last from " + last;
    case Warning::kTimeoutResponse:
      return "http: closed " + count + " connection(s) that did not take their response within " +
             Seconds(options_.timeout) + ", the last from " + last;
    case Warning::kAuth:
      return "http: refused " + count + " request(s) for their credentials, the last " + last;
    case Warning::kBadClientCert:
      return "http: refused " + count +
             " TLS handshake(s) with a client certificate the client CA does not accept, the "
             "last from " +
             last;
    case Warning::kLibrary:
      return "http: libmicrohttpd: " + last +
             (n > 1 ? " (and " + std::to_string(n - 1) + " more messages since the last)" : "");
    case Warning::kCount:
      break;
  }
  return "";
}

void Server::Impl::NoteLocked(Warning which, MonoTime now, std::string detail) {
  ThrottledWarning& w = warnings_[static_cast<std::size_t>(which)];
  w.last = std::move(detail);
  if (const std::optional<std::uint64_t> n = w.throttle.Note(now)) Log(Describe(which, *n, w.last));
}

void Server::Impl::FlushWarningsLocked(MonoTime now) {
  for (std::size_t i = 0; i < warnings_.size(); ++i) {
    ThrottledWarning& w = warnings_[i];
    if (const std::optional<std::uint64_t> n = w.throttle.Flush(now)) {
      Log(Describe(static_cast<Warning>(i), *n, w.last));
    }
  }
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() = default;

std::unique_ptr<Server> Server::Start(ServerOptions options, Router router, std::string* error) {
  auto impl = std::make_unique<Impl>(std::move(options), std::move(router));
  if (!impl->Start(error)) return nullptr;
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

void Server::Stop() {
  impl_->Stop();
}

const std::vector<Endpoint>& Server::endpoints() const {
  return impl_->endpoints();
}

}  // namespace hostmesh::http
