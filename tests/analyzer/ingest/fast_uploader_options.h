#pragma once

// The agent's uploader tuned for tests against a local analyzer: small
// batches, short ages and backoffs, plaintext, a fixed jitter seed.
#include <chrono>
#include <string>

#include "agent/upload/uploader.h"

namespace hostmesh::analyzer::testing {

inline agent::upload::UploaderOptions FastUploaderOptions(const std::string& address) {
  using namespace std::chrono_literals;
  agent::upload::UploaderOptions options;
  options.analyzer_address = address;
  options.security.insecure = true;
  options.engine.upload.batch_max_results = 20;
  options.engine.upload.batch_max_age = 20ms;
  options.engine.upload.backoff_initial = 10ms;
  options.engine.upload.backoff_max = 100ms;
  options.engine.ack_timeout = 5s;
  options.engine.upload.hello_timeout = 1s;
  options.jitter_seed = 1;
  return options;
}

}  // namespace hostmesh::analyzer::testing
