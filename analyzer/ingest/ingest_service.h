// hostmesh.v1.AgentIngest over gRPC's callback API: no thread per stream (a
// fleet keeps thousands of streams open), and no callback ever waits for the
// disk: batches go to the group committer and are acked when it calls back.
// Upload is a raw method: its messages are parsed by the reactor, which tells
// garbage from a half-close (upload_reactor.h).
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>

#include "analyzer/ingest/ingest_handler.h"
#include "analyzer/ingest/peer_identity.h"
#include "analyzer/ingest/refusal_tarpit.h"
#include "hostmesh/v1/ingest.grpc.pb.h"

namespace hostmesh::analyzer::ingest {

// How a call's PeerIdentity is found.
struct IdentityPolicy {
  bool insecure = false;            // no TLS: anyone speaks for anyone
  std::string spiffe_trust_domain;  // empty: URI SANs name nothing
};

class IngestService final
    : public v1::AgentIngest::WithCallbackMethod_Hello<
          v1::AgentIngest::WithRawCallbackMethod_Upload<v1::AgentIngest::Service>> {
 public:
  IngestService(IngestHandler& handler, IdentityPolicy policy)
      : handler_(handler), policy_(std::move(policy)), tarpit_(handler.options().refusal_delay) {}

  grpc::ServerUnaryReactor* Hello(grpc::CallbackServerContext* context,
                                  const v1::AgentHello* request, v1::HelloReply* reply) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Upload(
      grpc::CallbackServerContext* context) override;
  // Shutdown: refused streams end now, not after their delay.
  void ReleaseRefused() { tarpit_.Release(); }

 private:
  PeerIdentity IdentityOf(const grpc::CallbackServerContext& context) const;

  IngestHandler& handler_;
  const IdentityPolicy policy_;
  RefusalTarpit tarpit_;
};

}  // namespace hostmesh::analyzer::ingest
