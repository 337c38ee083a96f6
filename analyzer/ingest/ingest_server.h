// A gRPC server carrying the AgentIngest service on one listening address.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "analyzer/ingest/ingest_handler.h"
#include "analyzer/ingest/ingest_service.h"

namespace hostmesh::analyzer::ingest {

class IngestServer {
 public:
  // `address` like "0.0.0.0:50051" or "127.0.0.1:0" (any free port). nullptr
  // with `error` set when it cannot listen. `handler` must outlive the server.
  static std::unique_ptr<IngestServer> Start(IngestHandler& handler, const std::string& address,
                                             std::string& error);
  ~IngestServer();
  IngestServer(const IngestServer&) = delete;
  IngestServer& operator=(const IngestServer&) = delete;

  int port() const { return port_; }

  // Stops accepting, gives open streams `grace` to end, then cancels them and
  // waits until every call is finished (their commits included). Idempotent.
  // The group committer must still be running.
  void Shutdown(std::chrono::nanoseconds grace = std::chrono::nanoseconds::zero());

 private:
  explicit IngestServer(IngestHandler& handler) : service_(handler) {}

  IngestService service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace hostmesh::analyzer::ingest
