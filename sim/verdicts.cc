#include "sim/verdicts.h"

#include <algorithm>

namespace hostmesh::sim {
namespace {

void Add(Verdict& v, ComponentKey key, double confidence = 0, double raw = 0, double added = 0) {
  const auto it = std::find(v.named.begin(), v.named.end(), key);
  if (it == v.named.end()) {
    v.named.push_back(key);
    v.confidence.push_back(confidence);
    v.raw_confidence.push_back(raw);
    v.added_ns.push_back(added);
  } else {
    const auto i = static_cast<std::size_t>(it - v.named.begin());
    v.confidence[i] = std::max(v.confidence[i], confidence);
    v.raw_confidence[i] = std::max(v.raw_confidence[i], raw);
    v.added_ns[i] = std::max(v.added_ns[i], added);
  }
}

// A NIC's own link is its RNIC, as the ground truth names it (scorecard.h):
// Algorithm 1 votes on the whole path, NIC links included.
ComponentKey LinkComponentKey(const Fleet& fleet, Category c, LinkId link) {
  if (link < fleet.link_count() && fleet.is_nic_link(link)) {
    return RnicKey(c, fleet.nic_link_host(link), fleet.nic_link_nic(link));
  }
  return LinkKey(c, link);
}

ComponentKey KeyOf(const Fleet& fleet, Category c, const analysis::Component& comp,
                   const std::vector<std::uint32_t>& host_of) {
  if (comp.kind == analysis::Component::Kind::kLink) return LinkComponentKey(fleet, c, comp.link);
  const std::uint32_t host = comp.host < host_of.size() ? host_of[comp.host] : comp.host;
  return RnicKey(c, host, comp.nic);
}

// Algorithm 1 as a verdict: the links with the most votes.
void TopVoted(Verdict& v, const Fleet& fleet, Category c,
              const std::vector<analysis::LinkRank>& baseline, ComponentKey* top) {
  std::uint64_t best = 0;
  for (const auto& rank : baseline) best = std::max(best, rank.votes);
  if (best == 0) return;
  for (const auto& rank : baseline) {
    if (rank.votes != best) continue;
    const ComponentKey key = LinkComponentKey(fleet, c, rank.link);
    if (top != nullptr && *top == 0) *top = key;
    Add(v, key);
  }
}

}  // namespace

Verdict OurVerdict(const analysis::WindowReport& report, const Fleet& fleet,
                   const std::vector<std::uint32_t>& host_of) {
  Verdict v;
  // Top: the loss culprit (link, RNIC or switch) with the most evidence.
  double top_evidence = -1;
  for (const analysis::Suspect& s : report.loss.culprits) {
    const ComponentKey key = KeyOf(fleet, Category::kLoss, s.component, host_of);
    Add(v, key, s.confidence, s.raw_confidence);
    if (s.z > top_evidence) {
      top_evidence = s.z;
      v.top_loss = key;
    }
  }
  for (const analysis::SwitchRank& r : report.loss.switches) {
    if (!r.culprit) continue;
    Add(v, SwitchKey(Category::kLoss, r.id), r.confidence, r.raw_confidence);
    if (r.evidence > top_evidence) {
      top_evidence = r.evidence;
      v.top_loss = SwitchKey(Category::kLoss, r.id);
    }
  }
  for (const analysis::Suspect& s : report.latency.culprits) {
    Add(v, KeyOf(fleet, Category::kLatency, s.component, host_of), s.confidence, s.raw_confidence,
        s.added_latency_ns);
  }
  for (const analysis::ProcessingFlag& f : report.processing_flags) {
    Add(v, HostKey(f.host < host_of.size() ? host_of[f.host] : f.host), f.confidence,
        f.raw_confidence);
  }
  return v;
}

Verdict PaperVerdict(const analysis::WindowReport& report, const Fleet& fleet,
                     const std::vector<std::uint32_t>& host_of) {
  Verdict v;
  for (const analysis::RnicStatus& r : report.rnics) {
    if (!r.paper_anomalous) continue;
    const std::uint32_t host = r.host < host_of.size() ? host_of[r.host] : r.host;
    const ComponentKey key = RnicKey(Category::kLoss, host, r.nic);
    if (v.top_loss == 0) v.top_loss = key;
    Add(v, key);
  }
  if (report.sla.cluster.network_drops > 0)
    TopVoted(v, fleet, Category::kLoss, report.loss.baseline, &v.top_loss);
  TopVoted(v, fleet, Category::kLatency, report.latency.baseline, nullptr);
  return v;
}

}  // namespace hostmesh::sim
