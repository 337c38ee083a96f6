// How many Upload streams one credential holds open at once. Each stream may
// pin max_in_flight_bytes_per_stream of batches being committed and a gRPC
// read buffer, so without a bound one stolen certificate (or one agent in a
// reconnect loop) could take the global in-flight budget from the rest of the
// fleet by opening streams. An agent uploads on one stream; the headroom
// covers a reconnect while its dead connection's stream is still open, until
// the server's keepalive ends it.
//
// The plaintext opt-in (grpc.insecure) has no credential to count by: there
// only the global caps hold.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

#include "analyzer/ingest/peer_identity.h"

namespace hostmesh::analyzer::ingest {

class StreamsPerPeer {
 public:
  explicit StreamsPerPeer(std::size_t max_per_peer) : max_(max_per_peer) {}

  // The credential `peer` is counted under: its names, in order; empty for
  // the plaintext opt-in (not counted). A certificate without names is one
  // credential too: it may speak for nobody, but could still hold streams.
  static std::string KeyOf(const PeerIdentity& peer);

  // Whether the credential may open one more stream; if so it is counted
  // until Close. Always true for the empty key or a limit of 0.
  bool TryOpen(const std::string& key);
  void Close(const std::string& key);
  std::size_t Open(const std::string& key) const;
  std::size_t max_per_peer() const { return max_; }

 private:
  const std::size_t max_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::size_t> open_;
};

}  // namespace hostmesh::analyzer::ingest
