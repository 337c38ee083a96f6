#include "analyzer/evidence/evidence_targets.h"

#include <algorithm>
#include <set>

namespace hostmesh::analyzer::evidence {

namespace {

using analysis::FabricMap;
using analysis::kUnknown;
using analysis::LinkId;
using analysis::SwitchId;

Target SuspectOf(const analysis::Incident& incident) {
  using analysis::IncidentKind;
  const analysis::Component& c = incident.suspect;
  switch (incident.kind) {
    case IncidentKind::kSwitch:
      return {Target::Kind::kSwitch, c.link};
    case IncidentKind::kHostProcessing:
      return {Target::Kind::kHost, c.host};
    default:
      if (c.kind == analysis::Component::Kind::kRnic) return {Target::Kind::kRnic, c.host, c.nic};
      return {Target::Kind::kLink, c.link};
  }
}

// Up to n of `pool` (sorted, unique), starting just after `self` and wrapping.
std::vector<std::uint32_t> SpreadAfter(const std::vector<std::uint32_t>& pool, std::uint32_t self,
                                       std::uint32_t n) {
  std::vector<std::uint32_t> out;
  auto it = std::upper_bound(pool.begin(), pool.end(), self);
  for (std::size_t k = 0; k < pool.size() && out.size() < n; ++k, ++it) {
    if (it == pool.end()) it = pool.begin();
    if (*it != self) out.push_back(*it);
  }
  return out;
}

// Other links of the same switch at the same tier: uplinks of the link's
// lower switch, or (a host's NIC link) other NIC links of its switch.
std::vector<std::uint32_t> SiblingLinks(const FabricMap& fabric, LinkId link,
                                        const std::set<std::uint32_t>& blamed) {
  std::vector<std::uint32_t> pool;
  if (link >= fabric.links.size()) return pool;
  const FabricMap::LinkEnds ends = fabric.links[link];
  for (LinkId l = 0; l < fabric.links.size(); ++l) {
    const FabricMap::LinkEnds e = fabric.links[l];
    const bool same = ends.lower != kUnknown
                          ? e.lower == ends.lower
                          : e.lower == kUnknown && e.upper == ends.upper && ends.upper != kUnknown;
    if (same && blamed.count(l) == 0) pool.push_back(l);
  }
  return pool;
}

// Switches of the same tier: those sharing a neighbour above with it, or
// (a top-tier switch) sharing one below.
std::vector<std::uint32_t> SiblingSwitches(const FabricMap& fabric, SwitchId sw,
                                           const std::set<std::uint32_t>& blamed) {
  std::set<SwitchId> above, below;
  for (const FabricMap::LinkEnds& e : fabric.links) {
    if (e.lower == sw && e.upper != kUnknown) above.insert(e.upper);
    if (e.upper == sw && e.lower != kUnknown) below.insert(e.lower);
  }
  std::set<std::uint32_t> pool;
  for (const FabricMap::LinkEnds& e : fabric.links) {
    if (e.lower == kUnknown || e.upper == kUnknown) continue;
    if (!above.empty() ? above.count(e.upper) != 0 : below.count(e.lower) != 0) {
      pool.insert(!above.empty() ? e.lower : e.upper);
    }
  }
  pool.erase(sw);
  std::vector<std::uint32_t> out;
  for (const std::uint32_t s : pool) {
    if (blamed.count(s) == 0) out.push_back(s);
  }
  return out;
}

}  // namespace

std::string_view TargetKindName(Target::Kind kind) {
  switch (kind) {
    case Target::Kind::kLink:
      return "link";
    case Target::Kind::kSwitch:
      return "switch";
    case Target::Kind::kRnic:
      return "rnic";
    case Target::Kind::kHost:
      return "host";
  }
  return "link";
}

std::vector<Target> TargetsOf(const analysis::Incident& incident, const FabricMap& fabric,
                              const analysis::WindowReport& report, std::uint32_t siblings) {
  const Target suspect = SuspectOf(incident);
  std::vector<Target> out{suspect};
  std::vector<std::uint32_t> ids;
  switch (suspect.kind) {
    case Target::Kind::kLink: {
      std::set<std::uint32_t> blamed;
      for (const analysis::Localization* l : {&report.loss, &report.latency}) {
        for (const analysis::Suspect& s : l->culprits) {
          if (s.component.kind == analysis::Component::Kind::kLink) blamed.insert(s.component.link);
        }
      }
      ids = SpreadAfter(SiblingLinks(fabric, suspect.id, blamed), suspect.id, siblings);
      break;
    }
    case Target::Kind::kSwitch: {
      const std::set<std::uint32_t> blamed(report.loss.culprit_switches.begin(),
                                           report.loss.culprit_switches.end());
      ids = SpreadAfter(SiblingSwitches(fabric, suspect.id, blamed), suspect.id, siblings);
      break;
    }
    case Target::Kind::kRnic: {
      // Other NICs of the host that no window blames.
      std::set<std::uint32_t> blamed;
      for (const analysis::RnicStatus& r : report.rnics) {
        if (r.host == suspect.id && r.anomalous) blamed.insert(r.nic);
      }
      std::vector<std::uint32_t> nics;
      const std::size_t count =
          suspect.id < fabric.rails.size() ? fabric.rails[suspect.id].size() : 0;
      for (std::uint32_t n = 0; n < count; ++n) {
        if (blamed.count(n) == 0) nics.push_back(n);
      }
      for (const std::uint32_t n : SpreadAfter(nics, suspect.nic, siblings)) {
        out.push_back({Target::Kind::kRnic, suspect.id, n, true});
      }
      return out;
    }
    case Target::Kind::kHost:
      return out;
  }
  for (const std::uint32_t id : ids) out.push_back({suspect.kind, id, 0, true});
  return out;
}

}  // namespace hostmesh::analyzer::evidence
