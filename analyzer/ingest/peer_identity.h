// Who is at the other end of an ingest call, as its TLS client certificate
// says: the host names (and agent ids) it may speak for. Identity comes from
// the transport, never from the message (DESIGN section 7).
//
// The mapping, documented in docs/security.md:
//   - every DNS SAN of the certificate is a name it may speak for;
//   - with a SPIFFE trust domain configured, every URI SAN
//     spiffe://<trust domain>/host/<name> is one too; other URIs are ignored.
// A Hello may name host H and agent_id A only when both are names of the
// certificate (A defaults to H, so one SAN is enough for the usual agent).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hostmesh::analyzer::ingest {

class PeerIdentity {
 public:
  // The plaintext opt-in (grpc.insecure): anyone may speak for anyone.
  static PeerIdentity Anyone() { return PeerIdentity(true, {}); }
  static PeerIdentity FromSans(const std::vector<std::string>& dns_sans,
                               const std::vector<std::string>& uri_sans,
                               std::string_view spiffe_trust_domain);

  bool MaySpeakFor(std::string_view name) const;
  bool anyone() const { return anyone_; }
  // For error messages and logs: "anyone (insecure)", "no names" or the names.
  std::string Describe() const;
  const std::vector<std::string>& names() const { return names_; }

 private:
  PeerIdentity(bool anyone, std::vector<std::string> names)
      : anyone_(anyone), names_(std::move(names)) {}

  bool anyone_ = false;
  std::vector<std::string> names_;
};

}  // namespace hostmesh::analyzer::ingest
