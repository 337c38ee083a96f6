#include "analyzer/ingest/ingest_server.h"

#include <limits>

namespace hostmesh::analyzer::ingest {

std::unique_ptr<IngestServer> IngestServer::Start(IngestHandler& handler,
                                                  const std::string& address, std::string& error) {
  std::unique_ptr<IngestServer> server(new IngestServer(handler));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &server->port_);
  builder.RegisterService(&server->service_);
  // No bandwidth-delay probing: each probe is an HTTP/2 ping that wakes the
  // agent at the other end (its uploader's I/O thread), on every connection
  // of the fleet; batches are small enough for the default window.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  // gRPC's own limit sits above the validator's, so an oversize batch gets a
  // REJECTED ack naming the limit instead of a broken stream.
  const std::size_t limit = handler.options().limits.max_batch_bytes * 2 + (1 << 20);
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<std::size_t>(limit, std::numeric_limits<int>::max())));
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || server->port_ == 0) {
    error = "cannot listen for agents on " + address;
    return nullptr;
  }
  return server;
}

IngestServer::~IngestServer() {
  Shutdown();
}

void IngestServer::Shutdown(std::chrono::nanoseconds grace) {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() +
                    std::chrono::duration_cast<std::chrono::system_clock::duration>(grace));
  server_->Wait();
  server_.reset();
}

}  // namespace hostmesh::analyzer::ingest
