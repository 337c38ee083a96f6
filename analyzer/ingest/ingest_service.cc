#include "analyzer/ingest/ingest_service.h"

#include <grpc/grpc_security_constants.h>

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
    case HelloCode::kPermissionDenied:
      return grpc::StatusCode::PERMISSION_DENIED;
  }
  return grpc::StatusCode::INTERNAL;
}

std::vector<std::string> Values(const grpc::AuthContext& auth, const char* property) {
  std::vector<std::string> out;
  for (const grpc::string_ref& v : auth.FindPropertyValues(property))
    out.emplace_back(v.data(), v.size());
  return out;
}

}  // namespace

PeerIdentity IngestService::IdentityOf(const grpc::CallbackServerContext& context) const {
  if (policy_.insecure) return PeerIdentity::Anyone();
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (!auth || !auth->IsPeerAuthenticated()) return PeerIdentity::FromSans({}, {}, {});
  return PeerIdentity::FromSans(Values(*auth, GRPC_PEER_DNS_PROPERTY_NAME),
                                Values(*auth, GRPC_PEER_URI_PROPERTY_NAME),
                                policy_.spiffe_trust_domain);
}

grpc::ServerUnaryReactor* IngestService::Hello(grpc::CallbackServerContext* context,
                                               const v1::AgentHello* request,
                                               v1::HelloReply* reply) {
  // Quick enough for a callback thread: an unsynced put and one ledger seek.
  const HelloOutcome outcome = handler_.Hello(*request, IdentityOf(*context), *reply);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  grpc::Status status = outcome.code == HelloCode::kOk
                            ? grpc::Status::OK
                            : grpc::Status(ToGrpc(outcome.code), outcome.message);
  // Refused for what the peer sent (another host's name, a malformed Hello):
  // through the tarpit, as refused Upload streams (refusal_tarpit.h). Its
  // place among the connection's 16 streams bounds how many wait.
  if (outcome.code == HelloCode::kPermissionDenied || outcome.code == HelloCode::kInvalidArgument) {
    tarpit_.Hold([reactor, status = std::move(status)] { reactor->Finish(status); });
  } else {
    reactor->Finish(status);
  }
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* IngestService::Upload(
    grpc::CallbackServerContext* context) {
  return new UploadReactor(handler_, tarpit_, IdentityOf(*context));  // deletes itself in OnDone
}

}  // namespace hostmesh::analyzer::ingest
