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
#include "common/http/tls_credentials.h"

namespace hostmesh::http {
namespace {

using namespace std::chrono_literals;

// A degraded mode is warned of at most this often (with how many since).
constexpr auto kWarnEvery = 10s;

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

// The peer as text, IPv4-mapped IPv6 as IPv4: the key of the per-peer cap.
std::string PeerOf(const sockaddr* addr) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (addr == nullptr) return text;
  if (addr->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, text, sizeof text);
  } else if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], text, sizeof text);
    } else {
      inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    }
  }
  return text;
}

std::string Seconds(std::chrono::nanoseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%gs", std::chrono::duration<double>(d).count());
  return text;
}

Response PlainResponse(int status, std::string body) {
  Response response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

Response MethodNotAllowed() {
  Response response = PlainResponse(405, "method not allowed\n");
  response.headers.emplace_back("Allow", "GET, HEAD");
  return response;
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

// libmicrohttpd's messages about one client's conduct: it hung up (also
// after our own deadline shut its socket), sent a malformed or oversized
// request (answered 4xx), or failed its TLS handshake (a bad client
// certificate is counted and warned of by the server itself). Not degraded
// modes of the server: not logged. Everything else it says (accept failing
// for want of descriptors, memory, epoll) is warned of, throttled.
bool IsAboutOneClient(std::string_view message) {
  static constexpr std::string_view kPrefixes[] = {
      "Connection was closed by remote side",
      "Connection socket is closed when reading",
      "Socket has been disconnected when reading",
      "The connection was forcibly closed by remote peer",
      "The socket is not connected",
      "The socket is no longer available for sending",
      "Failed to send ",
      "Error processing request (HTTP response code",
      "Received HTTP/1.1 request without `Host' header",
      "Failed to parse `Content-Length' header",
      "Too large value of 'Content-Length' header",
      "Not enough memory in pool to",
      "Error: received handshake message out of context",
      "TLS encryption or decryption error",
  };
  for (std::string_view prefix : kPrefixes) {
    if (message.starts_with(prefix)) return true;
  }
  return false;
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

// One connection as the server tracks it, from NOTIFY_CONNECTION STARTED to
// CLOSED (libmicrohttpd's socket context). Touched by the connection's
// worker thread only, except `fd`, read by the housekeeping thread under
// the server's lock while the connection is in the book.
struct Connection {
  Server::Impl* server = nullptr;
  int fd = -1;
  std::string peer;
  // The pair this connection's handshake served, kept for the life of its
  // TLS session (GnuTLS does not copy it).
  std::shared_ptr<const CertifiedKey> served;
  bool client_cert_verified = false;
};

// One request, from its request line (URI log callback) to NOTIFY_COMPLETED.
struct RequestState {
  std::string target;  // raw, as sent: path and query still %-encoded
  bool headers_seen = false;
  bool answered = false;
};

class Server::Impl {
 public:
  Impl(ServerOptions options, Router router);
  ~Impl() { Stop(); }

  bool Start(std::string* error);
  void Stop();
  const std::vector<Endpoint>& endpoints() const { return endpoints_; }

 private:
  enum class Warning {
    kRefusedMax,
    kRefusedPeer,
    kTimeoutRequest,
    kTimeoutResponse,
    kAuth,
    kBadClientCert,
    kLibrary,
    kCount
  };
  struct ThrottledWarning {
    WarnThrottle throttle{kWarnEvery};
    std::string last;  // detail of the latest event
  };

  // libmicrohttpd callbacks; `cls` is the Impl.
  static MHD_Result OnAccept(void* cls, const sockaddr* addr, socklen_t addrlen);
  static void OnConnection(void* cls, MHD_Connection* connection, void** socket_context,
                           MHD_ConnectionNotificationCode code);
  static void* OnRequestLine(void* cls, const char* uri, MHD_Connection* connection);
  static MHD_Result OnRequest(void* cls, MHD_Connection* connection, const char* url,
                              const char* method, const char* version, const char* upload_data,
                              std::size_t* upload_data_size, void** request_context);
  static void OnCompleted(void* cls, MHD_Connection* connection, void** request_context,
                          MHD_RequestTerminationCode code);
  static void OnLibraryMessage(void* cls, const char* format, va_list args);
  static int OnCertificate(gnutls_session_t session, const gnutls_datum_t* req_ca_dn, int nreqs,
                           const gnutls_pk_algorithm_t* pk_algos, int pk_algos_length,
                           gnutls_pcert_st** pcert, unsigned int* pcert_length,
                           gnutls_privkey_t* pkey);
  static int OnClientCertificate(gnutls_session_t session);

  static Connection* ConnectionOf(MHD_Connection* connection);
  static Connection* ConnectionOf(gnutls_session_t session);
  static ConnectionBook::Id IdOf(const Connection* c) {
    return reinterpret_cast<ConnectionBook::Id>(c);
  }

  Response Answer(MHD_Connection* connection, const Connection& conn, std::string_view method,
                  std::string_view target);
  void Queue(MHD_Connection* connection, Connection* conn, Response response);
  bool LoadFiles(std::string* error);
  void PollFiles(MonoTime now);
  void Housekeep();
  // Counts an event of a degraded mode and warns if one is due (under mu_).
  void NoteLocked(Warning which, MonoTime now, std::string detail);
  void FlushWarningsLocked(MonoTime now);
  std::string Describe(Warning which, std::uint64_t n, const std::string& last) const;
  void Log(std::string_view message) const {
    if (options_.log) options_.log(message);
  }

  const ServerOptions options_;
  const Router router_;
  const Clock& clock_;
  std::unique_ptr<metrics::Registry> own_registry_;
  std::unique_ptr<ServerStats> own_stats_;
  ServerStats* stats_ = nullptr;
  AuthPolicy policy_;

  std::unique_ptr<ReloadingFiles<CertifiedKey>> certificate_;
  std::unique_ptr<ReloadingFiles<ClientTrust>> client_ca_;
  std::unique_ptr<ReloadingFiles<TokenDigest>> token_;

  std::vector<Endpoint> endpoints_;
  std::vector<MHD_Daemon*> daemons_;

  std::mutex mu_;  // everything below
  ConnectionBook book_;
  std::array<ThrottledWarning, static_cast<std::size_t>(Warning::kCount)> warnings_;
  bool starting_ = true;
  std::string start_log_;  // libmicrohttpd's messages while starting

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread housekeeper_;
};

namespace {

const SystemClock& DefaultClock() {
  static const SystemClock clock;
  return clock;
}

// The admission a worker thread made for the connection it is accepting, until
// NOTIFY_CONNECTION STARTED confirms it. libmicrohttpd runs the accept policy
// and STARTED for one connection back to back on one thread, and may fail to
// set the connection up between the two (then never reports it): a
// reservation still pending at the thread's next accept is given back.
struct PendingAdmission {
  const void* server = nullptr;
  std::string peer;
};
thread_local PendingAdmission t_pending;

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

Connection* Server::Impl::ConnectionOf(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info != nullptr ? static_cast<Connection*>(info->socket_context) : nullptr;
}

Connection* Server::Impl::ConnectionOf(gnutls_session_t session) {
  // libmicrohttpd keeps its connection as the session's pointer.
  auto* connection = static_cast<MHD_Connection*>(gnutls_session_get_ptr(session));
  return connection != nullptr ? ConnectionOf(connection) : nullptr;
}

MHD_Result Server::Impl::OnAccept(void* cls, const sockaddr* addr, socklen_t) {
  auto* self = static_cast<Impl*>(cls);
  const std::string peer = PeerOf(addr);
  std::lock_guard lock(self->mu_);
  if (t_pending.server == self) self->book_.Cancel(t_pending.peer);  // never opened
  t_pending.server = nullptr;
  const Admission admission = self->book_.Admit(peer);
  if (admission == Admission::kAdmitted) {
    t_pending = {self, peer};
    return MHD_YES;
  }
  self->stats_->Count(RefusedEvent(admission));
  self->NoteLocked(
      admission == Admission::kRefusedPerPeer ? Warning::kRefusedPeer : Warning::kRefusedMax,
      self->clock_.MonotonicNow(), peer);
  return MHD_NO;
}

void Server::Impl::OnConnection(void* cls, MHD_Connection* connection, void** socket_context,
                                MHD_ConnectionNotificationCode code) {
  auto* self = static_cast<Impl*>(cls);
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    auto* conn = new Connection();
    conn->server = self;
    if (const auto* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD)) {
      conn->fd = info->connect_fd;
    }
    if (const auto* info =
            MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS)) {
      conn->peer = PeerOf(info->client_addr);
    }
    *socket_context = conn;
    {
      std::lock_guard lock(self->mu_);
      if (t_pending.server == self) {
        conn->peer = t_pending.peer;  // the key its places were taken under
        t_pending.server = nullptr;
      } else {
        self->book_.Admit(conn->peer);  // not seen by the accept policy: counted anyway
      }
      self->book_.Opened(IdOf(conn), conn->peer, self->clock_.MonotonicNow());
    }
    self->stats_->open_connections().Increment();
    if (self->options_.tls) {
      const auto* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
      auto session = info != nullptr ? static_cast<gnutls_session_t>(info->tls_session) : nullptr;
      if (session != nullptr && self->client_ca_) {
        // Asked for, not required: /healthz, /readyz (and /metrics unless
        // protected) serve clients without one, such as a kubelet's probes.
        // No CA names are sent (the credentials hold no trust list): a
        // client offers its certificate whatever CA the rotation brings.
        gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
        gnutls_session_set_verify_function(session, &Impl::OnClientCertificate);
      }
    }
    return;
  }
  auto* conn = static_cast<Connection*>(*socket_context);
  if (conn == nullptr) return;
  {
    std::lock_guard lock(self->mu_);
    self->book_.Closed(IdOf(conn));
  }
  self->stats_->open_connections().Decrement();
  delete conn;
  *socket_context = nullptr;
}

int Server::Impl::OnCertificate(gnutls_session_t session, const gnutls_datum_t*, int,
                                const gnutls_pk_algorithm_t*, int, gnutls_pcert_st** pcert,
                                unsigned int* pcert_length, gnutls_privkey_t* pkey) {
  Connection* conn = ConnectionOf(session);
  if (conn == nullptr || !conn->server->certificate_) return -1;
  // The pair in service now, held by the connection for its session's life:
  // a rotation swaps what later handshakes get, never this one's.
  conn->served = conn->server->certificate_->current();
  *pcert = conn->served->chain();
  *pcert_length = conn->served->chain_length();
  *pkey = conn->served->key();
  return 0;
}

int Server::Impl::OnClientCertificate(gnutls_session_t session) {
  Connection* conn = ConnectionOf(session);
  if (conn == nullptr || !conn->server->client_ca_) return GNUTLS_E_CERTIFICATE_ERROR;
  unsigned length = 0;
  const gnutls_datum_t* chain = gnutls_certificate_get_peers(session, &length);
  if (chain == nullptr || length == 0) return 0;  // none offered: the routes decide
  Impl* self = conn->server;
  const std::string why = self->client_ca_->current()->Verify(chain, length);
  if (why.empty()) {
    conn->client_cert_verified = true;
    return 0;
  }
  self->stats_->Count(HttpEvent::kBadClientCert);
  std::lock_guard lock(self->mu_);
  self->NoteLocked(Warning::kBadClientCert, self->clock_.MonotonicNow(), conn->peer + ": " + why);
  return GNUTLS_E_CERTIFICATE_ERROR;  // the handshake fails
}

void* Server::Impl::OnRequestLine(void* cls, const char* uri, MHD_Connection* connection) {
  auto* self = static_cast<Impl*>(cls);
  auto* state = new RequestState();
  state->target = uri != nullptr ? uri : "";
  if (Connection* conn = ConnectionOf(connection)) {
    std::lock_guard lock(self->mu_);
    self->book_.RequestLineArrived(IdOf(conn));
  }
  return state;
}

void Server::Impl::OnCompleted(void* cls, MHD_Connection* connection, void** request_context,
                               MHD_RequestTerminationCode code) {
  auto* self = static_cast<Impl*>(cls);
  delete static_cast<RequestState*>(*request_context);
  *request_context = nullptr;
  Connection* conn = ConnectionOf(connection);
  if (conn == nullptr) return;
  std::lock_guard lock(self->mu_);
  if (code == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
    self->book_.RequestDone(IdOf(conn), self->clock_.MonotonicNow());
  } else if (code == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED) {
    // The library's inactivity backstop fired before our deadline.
    self->stats_->Count(HttpEvent::kTimeoutRequest);
  }
}

void Server::Impl::OnLibraryMessage(void* cls, const char* format, va_list args) {
  auto* self = static_cast<Impl*>(cls);
  char text[512];
  std::vsnprintf(text, sizeof text, format, args);
  std::string message(text);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  std::lock_guard lock(self->mu_);
  if (self->starting_) {
    if (!self->start_log_.empty()) self->start_log_ += "; ";
    self->start_log_ += message;
    return;
  }
  if (IsAboutOneClient(message)) return;
  self->NoteLocked(Warning::kLibrary, self->clock_.MonotonicNow(), std::move(message));
}

MHD_Result Server::Impl::OnRequest(void* cls, MHD_Connection* connection, const char*,
                                   const char* method, const char*, const char*,
                                   std::size_t* upload_data_size, void** request_context) {
  auto* self = static_cast<Impl*>(cls);
  auto* state = static_cast<RequestState*>(*request_context);
  Connection* conn = ConnectionOf(connection);
  if (state == nullptr || conn == nullptr) return MHD_NO;  // closes the connection
  if (state->answered) {
    *upload_data_size = 0;  // a body after an early 413: dropped
    return MHD_YES;
  }
  if (!state->headers_seen) {
    // First call: the request line and headers are in.
    state->headers_seen = true;
    {
      std::lock_guard lock(self->mu_);
      self->book_.RequestReceived(IdOf(conn));
    }
    const char* length =
        MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const bool has_body = (length != nullptr && std::strcmp(length, "0") != 0) ||
                          MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                                      MHD_HTTP_HEADER_TRANSFER_ENCODING) != nullptr;
    if (!has_body) return MHD_YES;  // answered at the next call, with the request complete
    // No route takes a body: refused before a byte of it is read (queued
    // this early, the library closes the connection after the answer).
    state->answered = true;
    self->Queue(connection, conn, PlainResponse(413, "request bodies are not accepted\n"));
    return MHD_YES;
  }
  // Second call: the whole request is in. Answering here rather than at the
  // first call keeps the connection alive for the next request.
  state->answered = true;
  *upload_data_size = 0;
  self->Queue(connection, conn, self->Answer(connection, *conn, method, state->target));
  return MHD_YES;
}

Response Server::Impl::Answer(MHD_Connection* connection, const Connection& conn,
                              std::string_view method, std::string_view target) {
  const std::optional<std::string> path = RequestPath(target);
  if (!path) return PlainResponse(400, "malformed %-escape in the path\n");
  Request request;
  request.method = method;
  request.path = *path;
  request.query = RawQuery(target);

  if (request.path == kHealthzPath || request.path == kReadyzPath) {
    if (method != "GET" && method != "HEAD") return MethodNotAllowed();
    if (request.path == kHealthzPath) return PlainResponse(200, "ok\n");
    std::string why = options_.ready ? options_.ready() : std::string();
    if (why.empty()) return PlainResponse(200, "ready\n");
    std::replace(why.begin(), why.end(), '\n', ' ');
    return PlainResponse(503, "not ready: " + why + "\n");
  }

  const char* authorization =
      MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  const std::shared_ptr<const TokenDigest> token = token_ ? token_->current() : nullptr;
  const AuthResult auth = Decide(
      policy_, request.path,
      authorization != nullptr ? std::optional<std::string_view>(authorization) : std::nullopt,
      token ? *token : TokenDigest{}, conn.client_cert_verified);
  if (auth != AuthResult::kAllowed) {
    stats_->Count(AuthEvent(auth));
    std::lock_guard lock(mu_);
    NoteLocked(Warning::kAuth, clock_.MonotonicNow(),
               "from " + conn.peer + " for " + std::string(request.path) + ": " +
                   std::string(AuthResultName(auth)));
    return RefusalFor(auth);
  }

  // Exceptions must not unwind through libmicrohttpd's C frames.
  try {
    return router_.Dispatch(request);
  } catch (const std::exception& e) {
    return PlainResponse(500, "internal error: " + std::string(e.what()) + "\n");
  } catch (...) {
    return PlainResponse(500, "internal error: unknown exception\n");
  }
}

void Server::Impl::Queue(MHD_Connection* connection, Connection* conn, Response response) {
  auto* body = new std::string(std::move(response.body));
  MHD_Response* r = MHD_create_response_from_buffer_with_free_callback_cls(
      body->size(), body->data(), [](void* cls) { delete static_cast<std::string*>(cls); }, body);
  if (r == nullptr) {
    delete body;
    return;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, response.content_type.c_str());
  for (const auto& [name, value] : response.headers) {
    MHD_add_response_header(r, name.c_str(), value.c_str());
  }
  MHD_queue_response(connection, static_cast<unsigned>(response.status), r);
  MHD_destroy_response(r);
  std::lock_guard lock(mu_);
  book_.ResponseQueued(IdOf(conn), clock_.MonotonicNow());
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
