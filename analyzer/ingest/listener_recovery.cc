#include "analyzer/ingest/listener_recovery.h"

namespace hostmesh::analyzer::ingest {

bool ListenerRecovery::Due(std::uint64_t failures, MonoTime now) {
  if (failures <= answered_) return false;
  if (last_ && now - *last_ < min_gap_) return false;
  answered_ = failures;
  last_ = now;
  return true;
}

}  // namespace hostmesh::analyzer::ingest
