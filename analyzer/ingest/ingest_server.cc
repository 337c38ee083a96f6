#include "analyzer/ingest/ingest_server.h"

#include <grpcpp/resource_quota.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <algorithm>
#include <limits>

namespace hostmesh::analyzer::ingest {

namespace {

std::shared_ptr<grpc::ServerCredentials> Credentials(const ServerSecurity& security) {
  if (security.insecure) return grpc::InsecureServerCredentials();
  // gRPC's file watcher: a rotated certificate, key or CA bundle is used for
  // new connections within kRefreshSeconds, no restart (cert-manager, SPIRE).
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      security.files.key.string(), security.files.cert.string(), security.files.ca.string(),
      security.refresh_seconds);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  if (!security.crl_dir.empty()) options.set_crl_directory(security.crl_dir);
  return grpc::experimental::TlsServerCredentials(options);
}

}  // namespace

std::unique_ptr<IngestServer> IngestServer::Start(IngestHandler& handler,
                                                  const std::string& address,
                                                  const ServerSecurity& security,
                                                  std::string& error) {
  if (!security.insecure) {
    if (auto why = tls::CheckTlsFiles(security.files)) {
      error = "TLS: " + *why;
      return nullptr;
    }
  }
  std::unique_ptr<IngestServer> server(new IngestServer(handler, security));
  const std::size_t colon = address.rfind(':');
  server->host_ = address.substr(0, colon == std::string::npos ? 0 : colon);
  if (!server->Listen(address, error)) return nullptr;
  return server;
}

bool IngestServer::Listen(const std::string& address, std::string& error) {
  service_ = std::make_unique<IngestService>(
      handler_, IdentityPolicy{security_.insecure, security_.spiffe_trust_domain});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, Credentials(security_), &port);
  builder.RegisterService(service_.get());
  // No bandwidth-delay probing: each probe is an HTTP/2 ping that wakes the
  // agent at the other end (its uploader's I/O thread), on every connection
  // of the fleet; batches are small enough for the default window.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  // A connection whose agent vanished (power cut, a partition) would keep its
  // Upload stream, and the stream's place in its certificate's stream limit,
  // for as long as TCP does (hours): a ping a minute on every connection, and
  // one not answered within 20 s ends it.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 60'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Bounds a peer reopening refused streams on one connection (refusal_tarpit.h).
  builder.AddChannelArgument(
      GRPC_ARG_MAX_CONCURRENT_STREAMS,
      static_cast<int>(std::min<std::uint32_t>(handler_.options().max_streams_per_connection,
                                               std::numeric_limits<int>::max())));
  // gRPC's own limit sits above the validator's, so an oversize batch gets a
  // REJECTED ack naming the limit instead of a broken stream.
  const std::size_t limit = handler_.options().limits.max_batch_bytes * 2 + (1 << 20);
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<std::size_t>(limit, std::numeric_limits<int>::max())));
  // gRPC's own buffers (a pending read holds up to the message limit above,
  // per stream) are outside the in-flight budget, which counts parsed
  // batches: a quota of the same size bounds them too, never below two
  // messages at the limit. Under pressure gRPC reads less and may close idle
  // connections; at 10,000 TLS agents and beside 100 hostile ones
  // (bench/ingest_bench) no honest stream broke.
  grpc::ResourceQuota quota("hostmesh-ingest");
  quota.Resize(std::max(handler_.options().max_in_flight_bytes, 2 * limit));
  builder.SetResourceQuota(quota);
  server_ = builder.BuildAndStart();
  if (!server_ || port == 0) {
    server_.reset();
    error = "cannot listen for agents on " + address;
    return false;
  }
  port_ = port;
  return true;
}

IngestServer::~IngestServer() {
  Shutdown();
}

void IngestServer::Shutdown(std::chrono::nanoseconds grace) {
  if (!server_) return;
  service_->ReleaseRefused();
  server_->Shutdown(std::chrono::system_clock::now() +
                    std::chrono::duration_cast<std::chrono::system_clock::duration>(grace));
  server_->Wait();
  server_.reset();
}

bool IngestServer::Relisten(std::chrono::nanoseconds grace, std::string& error) {
  Shutdown(grace);
  return Listen(host_ + ":" + std::to_string(port_), error);
}

}  // namespace hostmesh::analyzer::ingest
