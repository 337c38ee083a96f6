#include "topology/learned_graph.h"

#include <algorithm>

namespace hostmesh::topology {
namespace {

std::uint32_t Subnet(Ipv4 ip) {
  return ip.value & ~1U;
}

// Switch j (1-based) of m on a valley-free path between two NICs of one host:
// it climbs to the middle and comes down again.
Tier TierAt(std::size_t j, std::size_t m) {
  const std::size_t level = std::min(j, m + 1 - j);
  const std::size_t top = (m + 1) / 2;
  if (level == 1) return Tier::kRail;
  return level == top ? Tier::kSpine : Tier::kAggregation;
}

}  // namespace

DeviceId FabricLearner::DeviceOf(Ipv4 ip) const {
  const auto it = device_of_.find(ip);
  return it == device_of_.end() ? kNone : it->second;
}

LinkId FabricLearner::LinkOf(Ipv4 ip) const {
  const auto it = link_of_.find(Subnet(ip));
  return it == link_of_.end() ? kNone : it->second;
}

DeviceId FabricLearner::AddDevice(std::string name, Tier tier) {
  const auto id = static_cast<DeviceId>(devices_.size());
  devices_.push_back({std::move(name), tier, -1, kNone, {}});
  Changed();
  return id;
}

DeviceId FabricLearner::HostDevice(std::string_view host) {
  const auto it = hosts_.find(std::string(host));
  if (it != hosts_.end()) return it->second;
  const DeviceId id = AddDevice(std::string(host), Tier::kHost);
  hosts_.emplace(std::string(host), id);
  return id;
}

bool FabricLearner::Place(Ipv4 ip, DeviceId device) {
  if (DeviceOf(ip.Peer31()) == device) return false;
  device_of_[ip] = device;
  devices_[device].ports.push_back(ip);
  Changed();
  NoteRail(ip);
  return true;
}

void FabricLearner::PlaceAnswer(Ipv4 ip) {
  if (DeviceOf(ip) == kNone) Place(ip, AddDevice(ip.ToString(), Tier::kRail));
}

LinkId FabricLearner::EnsureLink(Ipv4 ip, LinkKind kind, bool ip_is_upper) {
  const auto [it, fresh] = link_of_.try_emplace(Subnet(ip), static_cast<LinkId>(links_.size()));
  if (!fresh) return it->second;
  links_.push_back({ip_is_upper ? ip.Peer31() : ip, ip_is_upper ? ip : ip.Peer31(), kind});
  Changed();
  return it->second;
}

void FabricLearner::NoteRail(Ipv4 switch_port) {
  const DeviceId d = DeviceOf(switch_port);
  if (d == kNone || devices_[d].tier == Tier::kHost || devices_[d].rail >= 0) return;
  const auto nic = nic_rails_.find(switch_port.Peer31());
  if (nic == nic_rails_.end() || nic->second < 0) return;
  devices_[d].rail = nic->second;
  Changed();
}

void FabricLearner::RaiseTier(DeviceId device, Tier tier) {
  if (device == kNone || devices_[device].tier >= tier) return;
  devices_[device].tier = tier;
  Changed();
}

void FabricLearner::AddNic(std::string_view host, std::string_view name, Ipv4 ip, int rail) {
  const DeviceId h = HostDevice(host);
  const DeviceId at = DeviceOf(ip);
  if (at == kNone) {
    if (!Place(ip, h)) return;
  } else if (at != h) {
    return;  // known as another device's address: the first word stands
  }
  if (!name.empty()) {
    auto [it, fresh] = nic_names_.try_emplace(ip, name);
    if (fresh || it->second != name) {
      it->second = name;
      Changed();
    }
  }
  if (rail >= 0) {
    auto [it, fresh] = nic_rails_.try_emplace(ip, rail);
    if (fresh || it->second != rail) {
      it->second = rail;
      Changed();
    }
  }
  EnsureLink(ip, LinkKind::kNic, false);
  NoteRail(ip.Peer31());
}

void FabricLearner::Tie(Ipv4 a, Ipv4 b) {
  const DeviceId da = DeviceOf(a);
  const DeviceId db = DeviceOf(b);
  if (da == kNone || da == db) return;
  if (db == kNone) {
    if (!Place(b, da)) ++stats_.merges_refused;
    return;
  }
  if (devices_[db].tier == Tier::kHost || devices_[da].tier == Tier::kHost) {
    ++stats_.merges_refused;
    return;
  }
  if (pending_merges_.size() >= kMaxPendingMerges) pending_merges_.clear();
  if (++pending_merges_[{a, b}] < kMergeConfirmations) return;
  pending_merges_.erase({a, b});
  const DeviceId keep = std::min(da, db);
  const DeviceId gone = std::max(da, db);
  for (Ipv4 p : devices_[gone].ports) {
    if (DeviceOf(p.Peer31()) == keep) {
      ++stats_.merges_refused;
      return;
    }
  }
  Merge(keep, gone);
}

void FabricLearner::Merge(DeviceId keep, DeviceId gone) {
  Dev& k = devices_[keep];
  Dev& g = devices_[gone];
  for (Ipv4 p : g.ports) {
    device_of_[p] = keep;
    k.ports.push_back(p);
  }
  g.ports.clear();
  g.ports.shrink_to_fit();
  k.tier = std::max(k.tier, g.tier);
  if (k.rail < 0) k.rail = g.rail;
  g.merged_into = keep;
  for (Dev& d : devices_) {
    if (d.merged_into == gone) d.merged_into = keep;
  }
  ++stats_.merges;
  Changed();
}

void FabricLearner::Add(std::string_view host, Ipv4 src, Ipv4 dst, std::span<const Hop> hops,
                        const Topology* graph, ResolvedPath* out) {
  out->Clear();
  ++stats_.traces;
  const auto refuse = [&](std::string why) {
    ++stats_.refused;
    out->problem = std::move(why);
  };
  const auto where = [&](std::size_t k) {
    return "hop " + std::to_string(k + 1) + " (" + hops[k]->ToString() + ")";
  };
  if (Subnet(src) == Subnet(dst)) return refuse("source and destination share a link");
  // Trailing silence and the destination's own answer are no switches.
  std::size_t end = hops.size();
  while (end > 0 && !hops[end - 1]) --end;
  const bool reached = end > 0 && hops[end - 1] == dst;
  if (reached) --end;
  hops = hops.first(end);
  if (hops.size() > PathResolver::kMaxHops) {
    return refuse("more than " + std::to_string(PathResolver::kMaxHops) + " hops");
  }
  AddNic(host, "", src, -1);
  AddNic(host, "", dst, -1);
  if (hops.empty()) {
    out->problem = reached ? "no hops: a path crosses at least one switch" : "no hop answered";
    return;
  }
  if (hops[0] && *hops[0] != src.Peer31()) {
    return refuse(where(0) + " is not the /31 peer of the source NIC " + src.ToString() +
                  ": the fabric is learned from /31 links only");
  }
  for (std::size_t k = 1; k < hops.size(); ++k) {
    if (!hops[k]) continue;
    const LinkId l = LinkOf(*hops[k]);
    if (l != kNone && links_[l].kind == LinkKind::kNic) {
      return refuse(where(k) + " is on a NIC's link, not between two switches");
    }
    if (hops[k - 1] && hops[k]->Peer31() == *hops[k - 1]) {
      return refuse(where(k) + " is the far end of the link hop " + std::to_string(k) +
                    " came in on");
    }
  }

  // Cut short: not reached, or reached by the tracer's inference after a
  // gray link ate the rest: an even number of switches, a last answer from
  // above the rail tier or from another switch than the destination's, or
  // one switch between NICs of two rails.
  const std::size_t m = hops.size();
  bool complete = reached && m % 2 == 1;
  if (complete && hops.back()) {
    // (Another switch by its rail: while learning, one switch may still be
    // known as several parts, which only its NICs' rails tell to be one.)
    const DeviceId last = DeviceOf(*hops.back());
    const DeviceId rail_switch = DeviceOf(dst.Peer31());
    if (last != kNone &&
        (devices_[last].tier > Tier::kRail ||
         (rail_switch != kNone && devices_[last].rail >= 0 && devices_[rail_switch].rail >= 0 &&
          devices_[last].rail != devices_[rail_switch].rail))) {
      complete = false;
    }
  }
  if (complete && m == 1) {
    const auto a = nic_rails_.find(src);
    const auto b = nic_rails_.find(dst);
    if (a != nic_rails_.end() && b != nic_rails_.end() && a->second != b->second) complete = false;
  }

  // Bounded: a trace that could found switches past the cap teaches nothing.
  std::size_t unknown = 0;
  for (const std::optional<Ipv4>& hop : hops) unknown += hop && DeviceOf(*hop) == kNone ? 1 : 0;
  if (unknown > 0 && switch_count() + unknown > max_switches_) {
    ++stats_.refused_full;
    return refuse("the learned fabric holds its limit of " + std::to_string(max_switches_) +
                  " switches and this trace names " + std::to_string(unknown) + " new addresses");
  }

  // An answer from a port not seen before joins the switch its egress on the
  // path is known on, rather than founding a part to merge later.
  for (std::size_t k = 0; k + 1 < m; ++k) {
    if (!hops[k] || !hops[k + 1] || DeviceOf(*hops[k]) != kNone) continue;
    if (const DeviceId d = DeviceOf(hops[k + 1]->Peer31()); d != kNone) Place(*hops[k], d);
  }
  if (hops[0]) PlaceAnswer(*hops[0]);
  for (std::size_t k = 1; k < m; ++k) {
    if (!hops[k]) continue;
    // Link k climbs from switch k to k+1 in the first half of a whole path.
    EnsureLink(*hops[k], LinkKind::kFabric, !complete || k < (m + 1) / 2);
    PlaceAnswer(*hops[k]);
  }
  for (std::size_t k = 0; k + 1 < m; ++k) {
    if (hops[k] && hops[k + 1]) Tie(*hops[k], hops[k + 1]->Peer31());
  }
  if (complete) {
    for (std::size_t k = 0; k < m; ++k) {
      if (hops[k]) RaiseTier(DeviceOf(*hops[k]), TierAt(k + 1, m));
    }
  }

  if (!complete) {
    std::size_t answered = m;
    while (answered > 0 && !hops[answered - 1]) --answered;
    if (graph == nullptr) {
      out->truncated = true;
      out->problem = "cut short, and nothing learned yet to continue it";
      return;
    }
    PathResolver(*graph).ResolveTruncated(src, dst, hops.first(answered), kMaxContinuation, out);
    return;
  }
  const std::size_t n = m + 1;
  out->links.assign(n, kNone);
  out->links[0] = LinkOf(src);
  out->links[n - 1] = LinkOf(dst);
  bool gaps = false;
  for (std::size_t k = 1; k + 1 < n; ++k) {
    if (hops[k]) {
      out->links[k] = LinkOf(*hops[k]);
    } else {
      gaps = true;
    }
  }
  out->status = PathStatus::kOk;
  if (!gaps) return;
  if (graph != nullptr) {
    PathResolver(*graph).Resolve(src, dst, hops, &scratch_);
    if (scratch_.status != PathStatus::kInconsistent && scratch_.links.size() == n) {
      for (std::size_t k = 0; k < n; ++k) {
        if (out->links[k] == kNone) out->links[k] = scratch_.links[k];
      }
      out->candidates = scratch_.candidates;
      out->filled = scratch_.filled;
      out->status = scratch_.status;
      return;
    }
  }
  // Not learned well enough yet to fill: those positions stay unknown.
  out->status = PathStatus::kAmbiguous;
  for (std::size_t k = 1; k + 1 < n; ++k) {
    if (out->links[k] == kNone) out->candidates.push_back({k, {}});
  }
}

Topology FabricLearner::Build() const {
  TopologyBuilder b;
  for (const Dev& d : devices_) {
    std::string name = d.name;
    if (d.merged_into != kNone) name += " (merged into " + devices_[d.merged_into].name + ")";
    b.AddDevice({.name = std::move(name), .tier = d.tier, .rail = d.rail});
  }
  const DeviceId unplaced =
      b.AddDevice({.name = std::string(kUnplacedDevice), .tier = Tier::kHost});
  std::unordered_map<Ipv4, InterfaceId> interfaces;
  const auto interface = [&](Ipv4 ip) {
    const auto it = interfaces.find(ip);
    if (it != interfaces.end()) return it->second;
    const DeviceId d = DeviceOf(ip);
    const auto name = nic_names_.find(ip);
    const auto rail = nic_rails_.find(ip);
    const InterfaceId id =
        b.AddInterface({.name = name != nic_names_.end() ? name->second : ip.ToString(),
                        .device = d == kNone ? unplaced : d,
                        .ip = ip,
                        .rail = rail != nic_rails_.end() ? rail->second : -1});
    interfaces.emplace(ip, id);
    return id;
  };
  for (const LearnedFabric::Link& l : links_) {
    Ipv4 lower = l.lower;
    Ipv4 upper = l.upper;
    const DeviceId dl = DeviceOf(lower);
    const DeviceId du = DeviceOf(upper);
    if (dl != kNone && du != kNone && devices_[dl].tier > devices_[du].tier)
      std::swap(lower, upper);
    b.AddLink({.name = lower.ToString() + "-" + upper.ToString(),
               .kind = l.kind,
               .lower = interface(lower),
               .upper = interface(upper)});
  }
  return std::move(b).Finish();
}

LearnedFabric FabricLearner::Export() const {
  LearnedFabric out;
  out.devices.reserve(devices_.size());
  for (const Dev& d : devices_) out.devices.push_back({d.name, d.tier, d.rail, d.merged_into});
  out.ports.reserve(device_of_.size());
  for (const auto& [ip, device] : device_of_) {
    const auto name = nic_names_.find(ip);
    const auto rail = nic_rails_.find(ip);
    out.ports.push_back({ip, device, name != nic_names_.end() ? name->second : std::string(),
                         rail != nic_rails_.end() ? rail->second : -1});
  }
  std::sort(out.ports.begin(), out.ports.end(),
            [](const auto& a, const auto& b) { return a.ip < b.ip; });
  out.links = links_;
  return out;
}

bool FabricLearner::Import(const LearnedFabric& state, std::string* error) {
  *this = FabricLearner();
  const auto fail = [&](std::string why) {
    *this = FabricLearner();
    *error = std::move(why);
    return false;
  };
  const auto count = static_cast<DeviceId>(state.devices.size());
  for (DeviceId id = 0; id < count; ++id) {
    const LearnedFabric::Device& d = state.devices[id];
    if (d.merged_into != kNone && (d.merged_into >= count || d.merged_into == id)) {
      return fail("device " + std::to_string(id) + " merged into an unknown device");
    }
    devices_.push_back({d.name, d.tier, d.rail, d.merged_into, {}});
    if (d.tier == Tier::kHost && !hosts_.emplace(d.name, id).second) {
      return fail("host " + d.name + " twice");
    }
  }
  for (const LearnedFabric::Port& p : state.ports) {
    if (p.device >= count || devices_[p.device].merged_into != kNone) {
      return fail("port " + p.ip.ToString() + " on an unknown device");
    }
    if (!device_of_.emplace(p.ip, p.device).second)
      return fail("port " + p.ip.ToString() + " twice");
    devices_[p.device].ports.push_back(p.ip);
    if (!p.name.empty()) nic_names_[p.ip] = p.name;
    if (p.rail >= 0) nic_rails_[p.ip] = p.rail;
  }
  for (const LearnedFabric::Link& l : state.links) {
    if (l.lower.Peer31() != l.upper) return fail("link " + l.lower.ToString() + " is not a /31");
    if (!link_of_.emplace(Subnet(l.lower), static_cast<LinkId>(links_.size())).second) {
      return fail("link " + l.lower.ToString() + " twice");
    }
    links_.push_back(l);
  }
  version_ = 1;
  return true;
}

}  // namespace hostmesh::topology
