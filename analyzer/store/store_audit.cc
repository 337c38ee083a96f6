#include "analyzer/store/store_audit.h"

#include <tuple>

namespace hostmesh::analyzer::store {
namespace {

// Agent ids are validated printable text without quotes or backslashes
// (batch_validator), but the audit must never print broken JSON.
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::vector<AuditRow> AuditResults(const std::map<Store::ResultIdentity, std::uint32_t>& copies) {
  std::vector<AuditRow> rows;
  for (const auto& [identity, count] : copies) {
    const auto& [agent, boot, nic, seq] = identity;
    if (rows.empty() || std::tie(rows.back().agent_id, rows.back().boot_id, rows.back().src_nic) !=
                            std::tie(agent, boot, nic)) {
      AuditRow row;
      row.agent_id = agent;
      row.boot_id = boot;
      row.src_nic = nic;
      row.first_seq = seq;  // the map is ordered: the first is the lowest
      rows.push_back(row);
    }
    AuditRow& row = rows.back();
    row.stored += count;
    ++row.distinct;
    row.last_seq = seq;
  }
  for (AuditRow& row : rows) {
    row.duplicates = row.stored - row.distinct;
    row.missing = row.last_seq - row.first_seq + 1 - row.distinct;
  }
  return rows;
}

std::string AuditJsonLines(const std::vector<AuditRow>& rows) {
  std::string out;
  for (const AuditRow& r : rows) {
    out += "{\"agent_id\":" + Quoted(r.agent_id) + ",\"boot_id\":" + std::to_string(r.boot_id) +
           ",\"src_nic\":" + std::to_string(r.src_nic) + ",\"stored\":" + std::to_string(r.stored) +
           ",\"distinct\":" + std::to_string(r.distinct) +
           ",\"duplicates\":" + std::to_string(r.duplicates) +
           ",\"first_seq\":" + std::to_string(r.first_seq) +
           ",\"last_seq\":" + std::to_string(r.last_seq) +
           ",\"missing\":" + std::to_string(r.missing) + "}\n";
  }
  return out;
}

}  // namespace hostmesh::analyzer::store
