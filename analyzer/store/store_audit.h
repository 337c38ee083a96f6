// What an audit of the stored results finds per (agent, boot, source NIC):
// probe sequences stored twice (ingest must prevent it) and sequences missing
// between the first and the last stored (results lost before they were
// acknowledged, or dropped by the agent's buffer budget). Pure: fed from
// Store::CountResultCopies by `hostmesh-analyzer --audit-store`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
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

// The audit in one pass over a scan, in memory that grows with the gaps and
// (agent, boot, NIC) rows, not with the results: a store of a 10,000-host
// fleet holds billions. Per row it keeps the runs of sequences seen; a
// sequence inside a run is a duplicate.
class ResultAuditor {
 public:
  void Add(std::string_view agent_id, std::uint64_t boot_id, std::uint32_t src_nic,
           std::uint64_t sequence);
  // Ordered by agent, boot, NIC.
  std::vector<AuditRow> Rows() const;
  // Runs held in memory, over all rows.
  std::size_t runs() const { return runs_; }

 private:
  struct Tally {
    std::map<std::uint64_t, std::uint64_t> runs;  // first -> last sequence, disjoint, not adjacent
    std::uint64_t stored = 0;
    std::uint64_t duplicates = 0;
  };
  using RowKey = std::tuple<std::string, std::uint64_t, std::uint32_t>;
  std::map<RowKey, Tally> rows_;
  Tally* last_ = nullptr;  // results come in batches: the row of the previous one
  RowKey last_key_;
  std::size_t runs_ = 0;
};

std::vector<AuditRow> AuditResults(const std::map<Store::ResultIdentity, std::uint32_t>& copies);

// One JSON object per line, per row.
std::string AuditJsonLines(const std::vector<AuditRow>& rows);

}  // namespace hostmesh::analyzer::store
