// A gRPC server carrying the AgentIngest service on one listening address,
// over mutual TLS unless told to run without it.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "analyzer/ingest/ingest_handler.h"
#include "analyzer/ingest/ingest_service.h"
#include "common/tls/tls_files.h"

namespace hostmesh::analyzer::ingest {

// grpc.tls and grpc.insecure of the analyzer's config.
struct ServerSecurity {
  // Plaintext and no client authentication: anyone who reaches the port may
  // upload as any agent. Only as an explicit opt-in (tests, a lab).
  bool insecure = false;
  // The server's certificate and key, and the CA bundle agents' client
  // certificates must chain to. gRPC re-reads them every kRefreshSeconds.
  tls::TlsFiles files;
  std::string spiffe_trust_domain;  // see peer_identity.h
  // A directory of CRLs (PEM, named by `openssl rehash`): a stolen agent
  // certificate is refused once its CA's CRL lists it. Empty: none.
  std::string crl_dir;
  unsigned refresh_seconds = tls::kRefreshSeconds;

  // Without TLS: test analyzers and benchmarks that are about something else.
  static ServerSecurity Plaintext() {
    ServerSecurity s;
    s.insecure = true;
    return s;
  }
};

class IngestServer {
 public:
  // `address` like "10.0.0.5:50051" or "127.0.0.1:0" (any free port). nullptr
  // with `error` set when the TLS files do not load or it cannot listen.
  // `handler` must outlive the server.
  static std::unique_ptr<IngestServer> Start(IngestHandler& handler, const std::string& address,
                                             const ServerSecurity& security, std::string& error);
  ~IngestServer();
  IngestServer(const IngestServer&) = delete;
  IngestServer& operator=(const IngestServer&) = delete;

  int port() const { return port_; }

  // Stops accepting, gives open streams `grace` to end, then cancels them and
  // waits until every call is finished (their commits included). Idempotent.
  // The group committer must still be running.
  void Shutdown(std::chrono::nanoseconds grace = std::chrono::nanoseconds::zero());

  // Shuts down as above and listens again on the same address and port, as a
  // new server over the same handler (its quotas, Hellos and stream counts
  // carry over): what brings back a listener gRPC dropped
  // (grpc_listener_watch.h). False with `error` set when it cannot listen.
  // Not concurrently with Shutdown.
  bool Relisten(std::chrono::nanoseconds grace, std::string& error);

 private:
  IngestServer(IngestHandler& handler, const ServerSecurity& security)
      : handler_(handler), security_(security) {}
  bool Listen(const std::string& address, std::string& error);

  IngestHandler& handler_;
  const ServerSecurity security_;
  std::string host_;  // of the address, for Relisten
  std::unique_ptr<IngestService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace hostmesh::analyzer::ingest
