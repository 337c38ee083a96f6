// The analyzer's effective configuration as JSON, for /api/v1/config and the
// support bundle (hostmeshctl bundle): every key an operator sets, with what
// could lead to a secret left out (TLS private keys and the bearer token
// file are shown as "(redacted)" when set, never their paths).
#pragma once

#include <string>
#include <string_view>

#include "analyzer/config/analyzer_config.h"

namespace hostmesh::analyzer::app {

std::string RenderConfigJson(const AnalyzerConfig& config, std::string_view version);

}  // namespace hostmesh::analyzer::app
