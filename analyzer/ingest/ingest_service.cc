#include "analyzer/ingest/ingest_service.h"

#include "analyzer/ingest/upload_reactor.h"

namespace hostmesh::analyzer::ingest {

namespace {

grpc::StatusCode ToGrpc(HelloCode code) {
  switch (code) {
    case HelloCode::kOk:
      return grpc::StatusCode::OK;
    case HelloCode::kFailedPrecondition:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case HelloCode::kInvalidArgument:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case HelloCode::kUnavailable:
      return grpc::StatusCode::UNAVAILABLE;
  }
  return grpc::StatusCode::INTERNAL;
}

}  // namespace

grpc::ServerUnaryReactor* IngestService::Hello(grpc::CallbackServerContext* context,
                                               const v1::AgentHello* request,
                                               v1::HelloReply* reply) {
  // Quick enough for a callback thread: an unsynced put and one ledger seek.
  const HelloOutcome outcome = handler_.Hello(*request, *reply);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(outcome.code == HelloCode::kOk
                      ? grpc::Status::OK
                      : grpc::Status(ToGrpc(outcome.code), outcome.message));
  return reactor;
}

grpc::ServerBidiReactor<v1::UploadBatch, v1::UploadAck>* IngestService::Upload(
    grpc::CallbackServerContext* /*context*/) {
  return new UploadReactor(handler_);  // deletes itself in OnDone
}

}  // namespace hostmesh::analyzer::ingest
