#include "sim/telemetry_model.h"

#include <algorithm>
#include <cmath>

namespace hostmesh::sim {
namespace {

using agent::telemetry::Carrier;
using agent::telemetry::NicCounter;
using agent::telemetry::NicReading;

constexpr double kNs = 1e9;
constexpr std::uint32_t kPortActive = 4, kPortDown = 1;
constexpr std::uint32_t kPhysLinkUp = 5, kPhysDisabled = 3;
constexpr std::size_t kRoceLosslessPriority = 3;

bool Flaps(FaultKind k) {
  return k == FaultKind::kRnicFlap || k == FaultKind::kRnicDown;
}

void Add(NicReading& r, NicCounter c, double value) {
  r[c] = r[c].value_or(0) + static_cast<std::uint64_t>(std::llround(value));
}

}  // namespace

double ActiveSeconds(const Fault& f, std::int64_t t) {
  const std::int64_t until = std::min(t, f.end_ns);
  return until <= f.start_ns ? 0.0 : static_cast<double>(until - f.start_ns) / kNs;
}

std::uint64_t DownsBy(const Fault& f, std::int64_t t) {
  if (t < f.start_ns) return 0;
  if (f.kind == FaultKind::kRnicDown || f.period_ns <= 0) return 1;
  const std::int64_t last = std::min(t, f.end_ns - 1);
  return static_cast<std::uint64_t>((last - f.start_ns) / f.period_ns) + 1;
}

std::uint64_t UpsBy(const Fault& f, std::int64_t t) {
  if (t < f.start_ns) return 0;
  if (f.kind == FaultKind::kRnicDown || f.period_ns <= 0) return t >= f.end_ns ? 1 : 0;
  // Down phase k ends at start + k period + period / 2, or at the fault's end.
  const std::int64_t half = f.period_ns / 2;
  std::uint64_t ups = 0;
  if (t >= f.start_ns + half) {
    ups = static_cast<std::uint64_t>((std::min(t, f.end_ns) - f.start_ns - half) / f.period_ns) + 1;
  }
  // A fault ending inside a down phase brings the link up at its end.
  if (t >= f.end_ns && f.DownAt(f.end_ns - 1)) ++ups;
  return std::min(ups, DownsBy(f, t));
}

TelemetryModel::TelemetryModel(const Fleet& fleet, const FaultSet& faults,
                               TelemetryModelParams params)
    : fleet_(fleet), faults_(faults), params_(params), by_nic_(fleet.hosts().size()) {
  for (std::size_t h = 0; h < fleet.hosts().size(); ++h) {
    by_nic_[h].resize(fleet.hosts()[h].nic_links.size());
  }
  for (std::uint32_t i = 0; i < faults.faults().size(); ++i) {
    const Fault& f = faults.faults()[i];
    const bool on_nic =
        f.kind == FaultKind::kRnicLoss || Flaps(f.kind) || f.kind == FaultKind::kPcieDowngrade;
    if (on_nic && f.host < by_nic_.size() && f.nic < by_nic_[f.host].size()) {
      by_nic_[f.host][f.nic].push_back(i);
    }
    if (f.kind == FaultKind::kEcmpCollision && f.link < fleet.link_count()) {
      // Every NIC cabled to the switch below the hot uplink is paused by it.
      const DeviceId below = fleet.lower_device(f.link);
      for (std::size_t h = 0; h < fleet.hosts().size(); ++h) {
        const std::vector<LinkId>& links = fleet.hosts()[h].nic_links;
        for (std::size_t n = 0; n < links.size(); ++n) {
          if (fleet.upper_device(links[n]) == below) by_nic_[h][n].push_back(i);
        }
      }
    }
  }
}

NicReading TelemetryModel::Read(std::uint32_t host, std::uint32_t nic, std::int64_t t,
                                std::int64_t wall_offset_ns) const {
  NicReading r;
  r.time_ns = t + wall_offset_ns;
  // Every counter the agent reads on an mlx5 NIC exists and starts at 0.
  for (auto& c : r.counters) c = 0;
  for (auto& p : r.rx_pfc_pause) p = 0;
  for (auto& p : r.tx_pfc_pause) p = 0;
  r.port_state = kPortActive;
  r.phys_state = kPhysLinkUp;
  r.carrier = Carrier::kUp;
  r.pcie = agent::telemetry::PcieLink{params_.pcie_max_width, params_.pcie_max_width,
                                      params_.pcie_max_speed_mts, params_.pcie_max_speed_mts};
  const double seconds = static_cast<double>(std::max<std::int64_t>(t, 0)) / kNs;
  const double bytes = params_.frames_per_second * params_.bytes_per_frame * seconds;
  Add(r, NicCounter::kPortRcvDataBytes, bytes);
  Add(r, NicCounter::kPortXmitDataBytes, bytes);
  if (host >= by_nic_.size() || nic >= by_nic_[host].size()) return r;

  double down_seconds = 0;
  for (const std::uint32_t i : by_nic_[host][nic]) {
    const Fault& f = faults_.faults()[i];
    const double active = ActiveSeconds(f, t);
    const double frames = params_.frames_per_second * active;
    const double pauses = params_.pause_frames_per_second * active;
    switch (f.kind) {
      case FaultKind::kRnicLoss:
        Add(r, NicCounter::kSymbolError, f.rate * frames);
        Add(r, NicCounter::kRxSymbolErrors, f.rate * frames);
        Add(r, NicCounter::kRxFcsErrors, 0.9 * f.rate * frames);
        Add(r, NicCounter::kPortRcvErrors, 0.9 * f.rate * frames);
        break;
      case FaultKind::kRnicFlap:
      case FaultKind::kRnicDown: {
        const std::uint64_t downs = DownsBy(f, t);
        Add(r, NicCounter::kLinkDowned, static_cast<double>(downs));
        Add(r, NicCounter::kLinkDownEvents, static_cast<double>(downs));
        Add(r, NicCounter::kCarrierChanges, static_cast<double>(downs + UpsBy(f, t)));
        if (f.DownAt(t)) {
          r.port_state = kPortDown;
          r.phys_state = kPhysDisabled;
          r.carrier = Carrier::kDown;
        }
        // A down link carries no traffic: the data counters stand still.
        down_seconds += f.kind == FaultKind::kRnicDown || f.period_ns <= 0
                            ? active
                            : active / 2;  // down for half of every period
        break;
      }
      case FaultKind::kPcieDowngrade:
        if (f.ActiveAt(t)) r.pcie->current_width = params_.pcie_downgraded_width;
        r.tx_pfc_pause[kRoceLosslessPriority] =
            *r.tx_pfc_pause[kRoceLosslessPriority] + static_cast<std::uint64_t>(pauses);
        Add(r, NicCounter::kRxDiscardsPhy, f.rate * frames);
        break;
      case FaultKind::kEcmpCollision:
        r.rx_pfc_pause[kRoceLosslessPriority] =
            *r.rx_pfc_pause[kRoceLosslessPriority] + static_cast<std::uint64_t>(pauses);
        break;
      default:
        break;
    }
  }
  if (down_seconds > 0) {
    const double idle =
        params_.frames_per_second * params_.bytes_per_frame * std::min(down_seconds, seconds);
    for (const NicCounter c : {NicCounter::kPortRcvDataBytes, NicCounter::kPortXmitDataBytes}) {
      r[c] = *r[c] - std::min(*r[c], static_cast<std::uint64_t>(idle));
    }
  }
  return r;
}

}  // namespace hostmesh::sim
