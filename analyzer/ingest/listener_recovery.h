// When to rebuild the ingest server after gRPC dropped its listener
// (grpc_listener_watch.h). A rebuild ends every agent's stream; agents
// reconnect and resend what was not acknowledged, so nothing is lost, but the
// fleet pays a round of handshakes (1,000 agents: about 6 s of the analyzer's
// CPU, bench/reconnect_stampede). If the cause persists (a peer that keeps the
// open-files limit full), rebuilds are spaced by `min_gap` rather than looped.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "common/base/clock.h"

namespace hostmesh::analyzer::ingest {

class ListenerRecovery {
 public:
  explicit ListenerRecovery(std::chrono::nanoseconds min_gap) : min_gap_(min_gap) {}

  // `failures`: GrpcListenerFailures() now. True when a failure is not yet
  // answered by a rebuild and the last rebuild is `min_gap` old: the caller
  // rebuilds now.
  bool Due(std::uint64_t failures, MonoTime now);
  // The rebuild Due asked for did not listen: due again after `min_gap`.
  void RebuildFailed() { answered_ = 0; }

 private:
  const std::chrono::nanoseconds min_gap_;
  std::uint64_t answered_ = 0;  // failures seen by the last rebuild
  std::optional<MonoTime> last_;
};

}  // namespace hostmesh::analyzer::ingest
