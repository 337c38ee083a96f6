// ServerOptions from the configuration keys both daemons share
// (common/config/http_server_config.h); the listen address is the caller's.
#pragma once

#include "common/config/http_server_config.h"
#include "common/http/server.h"

namespace hostmesh::http {

inline void ApplyHttpServerConfig(const config::HttpServerConfig& config, ServerOptions& options) {
  if (config.tls()) options.tls = TlsOptions{config.tls_cert, config.tls_key, config.tls_client_ca};
  options.bearer_token_file = config.bearer_token_file;
  options.protect_metrics = config.protect_metrics;
  options.max_connections = config.max_connections;
  options.max_connections_per_peer = config.max_connections_per_peer;
  options.timeout = config.timeout;
}

}  // namespace hostmesh::http
