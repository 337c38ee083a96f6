// hostmesh.v1.AgentIngest over gRPC's callback API: no thread per stream (a
// fleet keeps thousands of streams open), and no callback ever waits for the
// disk: batches go to the group committer and are acked when it calls back.
#pragma once

#include <grpcpp/grpcpp.h>

#include "analyzer/ingest/ingest_handler.h"
#include "hostmesh/v1/ingest.grpc.pb.h"

namespace hostmesh::analyzer::ingest {

class IngestService final : public v1::AgentIngest::CallbackService {
 public:
  explicit IngestService(IngestHandler& handler) : handler_(handler) {}

  grpc::ServerUnaryReactor* Hello(grpc::CallbackServerContext* context,
                                  const v1::AgentHello* request, v1::HelloReply* reply) override;
  grpc::ServerBidiReactor<v1::UploadBatch, v1::UploadAck>* Upload(
      grpc::CallbackServerContext* context) override;

 private:
  IngestHandler& handler_;
};

}  // namespace hostmesh::analyzer::ingest
