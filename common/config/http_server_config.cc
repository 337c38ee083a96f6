#include "common/config/http_server_config.h"

#include "common/config/map_reader.h"

namespace hostmesh::config {

using namespace std::chrono_literals;

void ReadHttpServerKeys(MapReader& m, HttpServerConfig& cfg) {
  m.Map("tls", [&](MapReader& t) {
    // Present means on: a tls block without its files is a mistake, not plain HTTP.
    t.Required("cert", &cfg.tls_cert);
    t.Required("key", &cfg.tls_key);
    t.Optional("client_ca", &cfg.tls_client_ca);
  });
  m.Optional("bearer_token_file", &cfg.bearer_token_file);
  if (m.Optional("protect_metrics", &cfg.protect_metrics) && cfg.protect_metrics &&
      cfg.bearer_token_file.empty() && cfg.tls_client_ca.empty()) {
    m.Fail("protect_metrics",
           "needs bearer_token_file or tls.client_ca: there is nothing to protect /metrics with");
  }
  const bool max_ok =
      m.Optional("max_connections", &cfg.max_connections, Range<std::uint32_t>{1, 100'000});
  const bool peer_ok = m.Optional("max_connections_per_peer", &cfg.max_connections_per_peer,
                                  Range<std::uint32_t>{1, 100'000});
  if ((max_ok || peer_ok) && cfg.max_connections_per_peer > cfg.max_connections) {
    m.Fail("max_connections_per_peer", "must be at most max_connections (" +
                                           std::to_string(cfg.max_connections) + "), got " +
                                           std::to_string(cfg.max_connections_per_peer));
  }
  m.Optional("timeout", &cfg.timeout, Range{100ms, 10min});
}

}  // namespace hostmesh::config
