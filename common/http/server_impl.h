#pragma once

// The HTTP server's insides (Server::Impl over libmicrohttpd), shared by
// server.cc (options, start, stop, housekeeping, warnings) and
// server_callbacks.cc (what libmicrohttpd calls: accept, connection, TLS
// certificates, requests). Included by nothing else.

#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include <atomic>
#include <condition_variable>
#include <cstdarg>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/base/warn_throttle.h"
#include "common/http/auth.h"
#include "common/http/connection_book.h"
#include "common/http/reloading_files.h"
#include "common/http/server.h"
#include "common/http/tls_credentials.h"

namespace hostmesh::http {

// A degraded mode is warned of at most this often (with how many since).
inline constexpr std::chrono::seconds kWarnEvery{10};

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

}  // namespace hostmesh::http
