#include "sim/faults.h"

#include <array>
#include <cmath>

#include "agent/core/rng.h"

namespace hostmesh::sim {
namespace {

constexpr std::array<std::pair<FaultKind, std::string_view>, 16> kNames{{
    {FaultKind::kLinkLoss, "link_loss"},
    {FaultKind::kLinkDown, "link_down"},
    {FaultKind::kLinkFlap, "link_flap"},
    {FaultKind::kRnicDown, "rnic_down"},
    {FaultKind::kRnicLoss, "rnic_loss"},
    {FaultKind::kRnicFlap, "rnic_flap"},
    {FaultKind::kSwitchLoss, "switch_loss"},
    {FaultKind::kBlackhole, "blackhole"},
    {FaultKind::kLinkLatency, "link_latency"},
    {FaultKind::kHostProcessing, "host_processing"},
    {FaultKind::kHostLeave, "host_leave"},
    {FaultKind::kAgentRestart, "agent_restart"},
    {FaultKind::kMissingRoute, "missing_route"},
    {FaultKind::kPcieDowngrade, "pcie_downgrade"},
    {FaultKind::kPfcMisconfig, "pfc_misconfig"},
    {FaultKind::kEcmpCollision, "ecmp_collision"},
}};

}  // namespace

bool AppliesInDirection(const Fault& f, bool up) {
  return (f.direction & (up ? kUp : kDown)) != 0;
}

std::string_view FaultKindName(FaultKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

bool FaultKindFromName(std::string_view name, FaultKind* kind) {
  for (const auto& [k, n] : kNames) {
    if (n == name) {
      *kind = k;
      return true;
    }
  }
  return false;
}

bool FaultOnLink(FaultKind k) {
  return k == FaultKind::kLinkLoss || k == FaultKind::kLinkDown || k == FaultKind::kLinkFlap ||
         k == FaultKind::kBlackhole || k == FaultKind::kLinkLatency ||
         k == FaultKind::kPfcMisconfig || k == FaultKind::kEcmpCollision;
}

bool FaultOnNic(FaultKind k) {
  return k == FaultKind::kRnicDown || k == FaultKind::kRnicLoss || k == FaultKind::kRnicFlap ||
         k == FaultKind::kMissingRoute || k == FaultKind::kPcieDowngrade;
}

bool FaultHasRate(FaultKind k) {
  return k == FaultKind::kLinkLoss || k == FaultKind::kRnicLoss || k == FaultKind::kSwitchLoss ||
         k == FaultKind::kPcieDowngrade || k == FaultKind::kPfcMisconfig;
}

bool FaultHasAdded(FaultKind k) {
  return k == FaultKind::kLinkLatency || k == FaultKind::kHostProcessing ||
         k == FaultKind::kPfcMisconfig || k == FaultKind::kEcmpCollision;
}

bool Fault::DownAt(std::int64_t t) const {
  if (!ActiveAt(t)) return false;
  if (period_ns <= 0) return true;
  return (t - start_ns) % period_ns < period_ns / 2;
}

FaultSet::FaultSet(const Fleet& fleet, std::vector<Fault> faults, BackgroundLoss background,
                   std::uint64_t seed)
    : faults_(std::move(faults)),
      background_(fleet.link_count() * 2, 0.0),
      by_link_(fleet.link_count()),
      by_switch_(fleet.device_count()) {
  if (background.max > 0) {
    agent::Rng rng(seed ^ 0xB6C0DEULL);
    const double lo = std::log(std::max(background.min, 1e-12));
    const double hi = std::log(std::max(background.max, background.min));
    for (double& rate : background_) {
      const double u = static_cast<double>(rng.Next() >> 11) * 0x1.0p-53;
      rate = std::exp(lo + (hi - lo) * u);
    }
  }
  for (std::uint32_t i = 0; i < faults_.size(); ++i) {
    const Fault& f = faults_[i];
    // Indexed by what the fault is on: FaultOnLink and FaultOnNic say which kinds those are.
    if (FaultOnLink(f.kind)) {
      if (f.link < by_link_.size()) by_link_[f.link].push_back(i);
      any_down_ |= f.kind == FaultKind::kLinkDown || f.kind == FaultKind::kLinkFlap;
    } else if (FaultOnNic(f.kind)) {
      by_nic_[NicKey(f.host, f.nic)].push_back(i);
    } else if (f.kind == FaultKind::kSwitchLoss) {
      if (f.switch_id < by_switch_.size()) by_switch_[f.switch_id].push_back(i);
    } else {  // processing, leave, restart: the host's
      by_host_[f.host].push_back(i);
    }
  }
}

double FaultSet::LinkFaultPass(LinkId link, bool up, std::uint16_t sport, std::int64_t t) const {
  double pass = 1.0;
  for (const std::uint32_t i : by_link_[link]) {
    const Fault& f = faults_[i];
    if (!f.ActiveAt(t) || !AppliesInDirection(f, up)) continue;
    switch (f.kind) {
      case FaultKind::kLinkLoss:
      case FaultKind::kPfcMisconfig:
        pass *= 1.0 - f.rate;
        break;
      case FaultKind::kLinkDown:
        return 0.0;
      case FaultKind::kLinkFlap:
        if (f.DownAt(t)) return 0.0;
        break;
      case FaultKind::kBlackhole:
        if (sport >= f.port_min && sport <= f.port_max) return 0.0;
        break;
      default:
        break;
    }
  }
  return pass;
}

double FaultSet::SwitchFaultDrop(DeviceId sw, std::int64_t t) const {
  double pass = 1.0;
  for (const std::uint32_t i : by_switch_[sw]) {
    if (faults_[i].ActiveAt(t)) pass *= 1.0 - faults_[i].rate;
  }
  return 1.0 - pass;
}

const std::vector<std::uint32_t>* FaultSet::OnNic(std::uint32_t host, std::uint32_t nic) const {
  const auto it = by_nic_.find(NicKey(host, nic));
  return it == by_nic_.end() ? nullptr : &it->second;
}

double FaultSet::RnicDrop(std::uint32_t host, std::uint32_t nic, std::int64_t t) const {
  if (by_nic_.empty()) return 0.0;
  const auto it = by_nic_.find(NicKey(host, nic));
  if (it == by_nic_.end()) return 0.0;
  double pass = 1.0;
  for (const std::uint32_t i : it->second) {
    const Fault& f = faults_[i];
    if (!f.ActiveAt(t)) continue;
    if (f.kind == FaultKind::kRnicDown || f.kind == FaultKind::kMissingRoute) return 1.0;
    if (f.kind == FaultKind::kRnicFlap && f.DownAt(t)) return 1.0;
    if (f.kind == FaultKind::kRnicLoss || f.kind == FaultKind::kPcieDowngrade) {
      pass *= 1.0 - f.rate;
    }
  }
  return 1.0 - pass;
}

bool FaultSet::RnicPortDown(std::uint32_t host, std::uint32_t nic, std::int64_t t) const {
  if (by_nic_.empty()) return false;
  const auto it = by_nic_.find(NicKey(host, nic));
  if (it == by_nic_.end()) return false;
  for (const std::uint32_t i : it->second) {
    const Fault& f = faults_[i];
    if (f.kind == FaultKind::kRnicDown && f.ActiveAt(t)) return true;
    if (f.kind == FaultKind::kRnicFlap && f.ActiveAt(t) && f.DownAt(t)) return true;
  }
  return false;
}

std::int64_t FaultSet::LinkFaultLatency(LinkId link, bool up, std::int64_t t) const {
  std::int64_t added = 0;
  for (const std::uint32_t i : by_link_[link]) {
    const Fault& f = faults_[i];
    const bool delays = f.kind == FaultKind::kLinkLatency || f.kind == FaultKind::kPfcMisconfig ||
                        f.kind == FaultKind::kEcmpCollision;
    if (delays && f.ActiveAt(t) && AppliesInDirection(f, up)) added += f.added_ns;
  }
  return added;
}

std::int64_t FaultSet::ProcessingDelay(std::uint32_t host, std::int64_t t) const {
  if (by_host_.empty()) return 0;
  const auto it = by_host_.find(host);
  if (it == by_host_.end()) return 0;
  std::int64_t added = 0;
  for (const std::uint32_t i : it->second) {
    const Fault& f = faults_[i];
    if (f.kind == FaultKind::kHostProcessing && f.ActiveAt(t)) added += f.added_ns;
  }
  return added;
}

bool FaultSet::HostAbsent(std::uint32_t host, std::int64_t t) const {
  if (by_host_.empty()) return false;
  const auto it = by_host_.find(host);
  if (it == by_host_.end()) return false;
  for (const std::uint32_t i : it->second) {
    if (faults_[i].kind == FaultKind::kHostLeave && faults_[i].ActiveAt(t)) return true;
  }
  return false;
}

int FaultSet::RestartsBetween(std::uint32_t host, std::int64_t from, std::int64_t to) const {
  if (by_host_.empty()) return 0;
  const auto it = by_host_.find(host);
  if (it == by_host_.end()) return 0;
  int n = 0;
  for (const std::uint32_t i : it->second) {
    const Fault& f = faults_[i];
    if (f.kind == FaultKind::kAgentRestart && f.start_ns >= from && f.start_ns < to) ++n;
  }
  return n;
}

void FaultSet::DeadLinksAt(std::int64_t t, std::vector<std::uint8_t>& dead) const {
  dead.assign(by_link_.size(), 0);
  if (!any_down_) return;
  for (const Fault& f : faults_) {
    if (f.link >= dead.size()) continue;
    // Down since at least kReconvergeNs: the routing protocol has withdrawn it.
    // A flapping link whose down phase is shorter never gets withdrawn.
    if (f.kind == FaultKind::kLinkDown) {
      if (f.ActiveAt(t) && t - f.start_ns >= kReconvergeNs) dead[f.link] = 1;
    } else if (f.kind == FaultKind::kLinkFlap && f.DownAt(t) && f.period_ns > 0) {
      const std::int64_t down_since = t - (t - f.start_ns) % f.period_ns;
      if (t - down_since >= kReconvergeNs) dead[f.link] = 1;
    }
  }
}

}  // namespace hostmesh::sim
