#pragma once

// The HTTP serving keys shared by the analyzer's `http:` block and the
// agent's `metrics:` block (an operator contract: documented in
// deploy/analyzer.example.yaml and deploy/agent.example.yaml). Each program
// keeps its own `listen` key and picks its own defaults for the caps.

#include <chrono>
#include <cstdint>
#include <string>

namespace hostmesh::config {

class MapReader;

struct HttpServerConfig {
  // tls: {cert, key, client_ca}. Empty cert: plain HTTP.
  std::string tls_cert{};
  std::string tls_key{};
  std::string tls_client_ca{};      // empty: no client certificates asked for
  std::string bearer_token_file{};  // empty: no token
  bool protect_metrics = false;
  std::uint32_t max_connections = 256;
  std::uint32_t max_connections_per_peer = 16;
  std::chrono::nanoseconds timeout = std::chrono::seconds{10};

  bool tls() const { return !tls_cert.empty(); }
};

// Reads tls, bearer_token_file, protect_metrics, max_connections,
// max_connections_per_peer and timeout from `m` into `cfg` (absent keys keep
// cfg's defaults), with the cross-key checks.
void ReadHttpServerKeys(MapReader& m, HttpServerConfig& cfg);

}  // namespace hostmesh::config
