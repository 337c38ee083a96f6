// What libmicrohttpd calls on the HTTP server's threads: the accept policy
// (per-peer admission), connection start and end, the TLS certificate
// callbacks, the request line, requests and their answers.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/http/query.h"
#include "common/http/server_impl.h"

namespace hostmesh::http {
namespace {

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

}  // namespace hostmesh::http
