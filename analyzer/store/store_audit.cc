#include "analyzer/store/store_audit.h"

#include <iterator>
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

void ResultAuditor::Add(std::string_view agent_id, std::uint64_t boot_id, std::uint32_t src_nic,
                        std::uint64_t sequence) {
  if (last_ == nullptr || std::get<0>(last_key_) != agent_id || std::get<1>(last_key_) != boot_id ||
      std::get<2>(last_key_) != src_nic) {
    last_key_ = RowKey(std::string(agent_id), boot_id, src_nic);
    last_ = &rows_[last_key_];
  }
  Tally& t = *last_;
  ++t.stored;
  auto next = t.runs.upper_bound(sequence);  // the first run starting after it
  if (next != t.runs.begin()) {
    auto prev = std::prev(next);
    if (sequence <= prev->second) {
      ++t.duplicates;
      return;
    }
    if (prev->second + 1 == sequence) {  // extends the run before it...
      prev->second = sequence;
      if (next != t.runs.end() && next->first == sequence + 1) {  // ...up to the one after
        prev->second = next->second;
        t.runs.erase(next);
        --runs_;
      }
      return;
    }
  }
  if (next != t.runs.end() && next->first == sequence + 1) {  // starts the run after it
    const std::uint64_t last = next->second;
    t.runs.erase(next);
    t.runs.emplace(sequence, last);
    return;
  }
  t.runs.emplace(sequence, sequence);
  ++runs_;
}

std::vector<AuditRow> ResultAuditor::Rows() const {
  std::vector<AuditRow> rows;
  for (const auto& [key, t] : rows_) {
    AuditRow row;
    std::tie(row.agent_id, row.boot_id, row.src_nic) = key;
    row.stored = t.stored;
    row.duplicates = t.duplicates;
    row.distinct = t.stored - t.duplicates;
    if (!t.runs.empty()) {
      row.first_seq = t.runs.begin()->first;
      row.last_seq = t.runs.rbegin()->second;
      row.missing = row.last_seq - row.first_seq + 1 - row.distinct;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<AuditRow> AuditResults(const std::map<Store::ResultIdentity, std::uint32_t>& copies) {
  ResultAuditor auditor;
  for (const auto& [identity, count] : copies) {
    const auto& [agent, boot, nic, seq] = identity;
    for (std::uint32_t i = 0; i < count; ++i) auditor.Add(agent, boot, nic, seq);
  }
  return auditor.Rows();
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
