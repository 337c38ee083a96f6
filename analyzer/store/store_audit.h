// What an audit of the stored results finds per (agent, boot, source NIC):
// probe sequences stored twice (ingest must prevent it) and sequences missing
// between the first and the last stored (results lost before they were
// acknowledged, or dropped by the agent's buffer budget). Pure: fed from
// Store::CountResultCopies by `hostmesh-analyzer --audit-store`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyzer/store/store.h"

namespace hostmesh::analyzer::store {

struct AuditRow {
  std::string agent_id;
  std::uint64_t boot_id = 0;
  std::uint32_t src_nic = 0;
  std::uint64_t stored = 0;      // results, copies counted
  std::uint64_t distinct = 0;    // sequences
  std::uint64_t duplicates = 0;  // stored - distinct
  std::uint64_t first_seq = 0;
  std::uint64_t last_seq = 0;
  std::uint64_t missing = 0;  // sequences in [first_seq, last_seq] not stored
};

std::vector<AuditRow> AuditResults(const std::map<Store::ResultIdentity, std::uint32_t>& copies);

// One JSON object per line, per row.
std::string AuditJsonLines(const std::vector<AuditRow>& rows);

}  // namespace hostmesh::analyzer::store
