#include "sim/suite.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <span>

#include "agent/core/rng.h"
#include "sim/packet_model.h"

namespace hostmesh::sim {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

double LogUniform(agent::Rng& rng, double lo, double hi) {
  return std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * Uniform01(rng));
}

std::int64_t Seconds(agent::Rng& rng, std::int64_t lo_ns, std::int64_t hi_ns) {
  if (hi_ns <= lo_ns) return lo_ns;
  return (lo_ns + static_cast<std::int64_t>(rng.Below(static_cast<std::uint64_t>(hi_ns - lo_ns)))) /
         kSecond * kSecond;
}

struct Targets {
  std::vector<LinkId> fabric_links;
  std::vector<LinkId> rail_uplinks;  // from a rail switch (NICs below it) upwards
  std::vector<DeviceId> switches;
};

// `kinds`: draw among these only (empty: all); `kind`: that kind instead of
// the drawn one.
Fault DrawFault(agent::Rng& rng, const Fleet& fleet, const Targets& t, std::int64_t duration,
                std::span<const FaultKind> kinds, std::optional<FaultKind> kind = std::nullopt) {
  static constexpr std::pair<FaultKind, int> kWeights[] = {
      {FaultKind::kLinkLoss, 4},     {FaultKind::kLinkDown, 1},
      {FaultKind::kLinkFlap, 1},     {FaultKind::kRnicDown, 1},
      {FaultKind::kRnicLoss, 2},     {FaultKind::kRnicFlap, 1},
      {FaultKind::kSwitchLoss, 1},   {FaultKind::kBlackhole, 1},
      {FaultKind::kLinkLatency, 1},  {FaultKind::kHostProcessing, 1},
      {FaultKind::kMissingRoute, 1}, {FaultKind::kPcieDowngrade, 1},
      {FaultKind::kPfcMisconfig, 1}, {FaultKind::kEcmpCollision, 1},
  };
  const auto weight = [&](FaultKind k, int w) {
    return kinds.empty() || std::find(kinds.begin(), kinds.end(), k) != kinds.end() ? w : 0;
  };
  int total = 0;
  for (const auto& [k, w] : kWeights) total += weight(k, w);
  int pick = static_cast<int>(rng.Below(static_cast<std::uint64_t>(std::max(total, 1))));
  Fault f;
  for (const auto& [k, w0] : kWeights) {
    const int w = weight(k, w0);
    if (pick < w) {
      f.kind = k;
      break;
    }
    pick -= w;
  }
  if (kind) f.kind = *kind;
  f.start_ns = Seconds(rng, 60 * kSecond, std::max<std::int64_t>(61 * kSecond, duration / 2));
  f.end_ns = std::min(duration, f.start_ns + Seconds(rng, duration / 4, duration));
  const auto host = static_cast<std::uint32_t>(rng.Below(fleet.hosts().size()));
  const auto nic = static_cast<std::uint32_t>(rng.Below(fleet.hosts()[host].nic_ips.size()));
  const LinkId link = t.fabric_links[rng.Below(t.fabric_links.size())];
  static constexpr std::uint8_t kDirections[] = {kUp, kDown, kBoth};
  switch (f.kind) {
    case FaultKind::kLinkLoss:
      f.link = link;
      f.direction = kDirections[rng.Below(3)];
      f.rate = LogUniform(rng, 0.005, 1.0);
      break;
    case FaultKind::kLinkDown:
      f.link = link;
      break;
    case FaultKind::kLinkFlap:
      f.link = link;
      f.period_ns = Seconds(rng, 2 * kSecond, 20 * kSecond);
      break;
    case FaultKind::kRnicDown:
      f.host = host;
      f.nic = nic;
      break;
    case FaultKind::kRnicLoss:
      f.host = host;
      f.nic = nic;
      f.rate = LogUniform(rng, 0.01, 0.10);
      break;
    case FaultKind::kRnicFlap:
      f.host = host;
      f.nic = nic;
      f.period_ns = Seconds(rng, 2 * kSecond, 20 * kSecond);
      break;
    case FaultKind::kSwitchLoss:
      f.switch_id = t.switches[rng.Below(t.switches.size())];
      f.rate = LogUniform(rng, 0.01, 0.05);
      break;
    case FaultKind::kBlackhole: {
      f.link = link;
      const auto width = static_cast<std::uint16_t>(64 + rng.Below(2048));
      f.port_min = static_cast<std::uint16_t>(49152 + rng.Below(65535 - 49152 - width));
      f.port_max = static_cast<std::uint16_t>(f.port_min + width);
      break;
    }
    case FaultKind::kLinkLatency:
      f.link = link;
      f.direction = kDirections[rng.Below(3)];
      f.added_ns = static_cast<std::int64_t>(LogUniform(rng, 20e3, 200e3));
      break;
    case FaultKind::kHostProcessing:
      f.host = host;
      f.added_ns = static_cast<std::int64_t>(LogUniform(rng, 1e6, 10e6));
      break;
    case FaultKind::kMissingRoute:
      // The RNIC came up without its route: unreachable from the start.
      f.host = host;
      f.nic = nic;
      f.start_ns = 0;
      break;
    case FaultKind::kPcieDowngrade:
      f.host = host;
      f.nic = nic;
      f.rate = LogUniform(rng, 0.01, 0.10);
      break;
    case FaultKind::kPfcMisconfig:
      f.link = link;
      f.direction = kDirections[rng.Below(3)];
      f.rate = LogUniform(rng, 0.01, 0.10);
      f.added_ns = static_cast<std::int64_t>(LogUniform(rng, 20e3, 200e3));
      break;
    case FaultKind::kEcmpCollision:
      f.link = t.rail_uplinks[rng.Below(t.rail_uplinks.size())];
      f.direction = kUp;
      f.added_ns = static_cast<std::int64_t>(LogUniform(rng, 20e3, 200e3));
      break;
    default:
      break;
  }
  return f;
}

}  // namespace

std::vector<Scenario> BuildSuite(const SuiteOptions& options) {
  const Fleet fleet(options.shape);
  Targets targets;
  for (LinkId l = 0; l < fleet.link_count(); ++l) {
    if (!fleet.is_nic_link(l)) targets.fabric_links.push_back(l);
  }
  std::vector<std::uint8_t> rail_switch(fleet.device_count(), 0);
  for (LinkId l = 0; l < fleet.link_count(); ++l) {
    if (fleet.is_nic_link(l)) rail_switch[fleet.upper_device(l)] = 1;
  }
  for (const LinkId l : targets.fabric_links) {
    if (rail_switch[fleet.lower_device(l)]) targets.rail_uplinks.push_back(l);
  }
  for (DeviceId d = 0; d < fleet.device_count(); ++d) {
    if (fleet.is_switch(d)) targets.switches.push_back(d);
  }
  std::vector<Scenario> suite;
  for (int i = 0; i < options.scenarios; ++i) {
    agent::Rng rng(options.seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(i) + 1);
    Scenario s;
    s.name = "suite-" + std::to_string(options.seed) + "-" + std::to_string(i);
    SimConfig& c = s.config;
    c.shape = options.shape;
    c.duration_ns = options.duration_ns;
    c.seed = rng.Next();
    c.threads = options.threads;
    const double bg = Uniform01(rng);
    if (bg < 0.5) {
      c.background = {1e-5, 1e-4};
    } else if (bg < 0.75) {
      c.background = {1e-5, 1e-3};
    }
    const bool fault_free = i % 5 == 4;
    // The count is drawn even when --faults fixes it, so the scenario's other
    // draws stay as the seed has them.
    int faults = 0;
    if (!fault_free) {
      faults = 1 + static_cast<int>(rng.Below(static_cast<std::uint64_t>(options.max_faults)));
      if (options.faults > 0) faults = options.faults;
    }
    for (int k = 0; k < faults; ++k) {
      agent::Rng before = rng;
      c.faults.push_back(DrawFault(rng, fleet, targets, c.duration_ns, options.kinds));
      if (options.every_kind && k == 0) {
        // Its kind in turn, from the same draws; the generator goes on from
        // the drawn fault, so the rest of the scenario is as the seed has it.
        const int faulty_before = i - i / 5;  // one in five is fault-free
        c.faults.back() =
            DrawFault(before, fleet, targets, c.duration_ns, options.kinds,
                      kEveryKind[static_cast<std::size_t>(faulty_before) % std::size(kEveryKind)]);
      }
    }
    // Noise that is no fault: an agent restarts, a tenant's host leaves and comes back.
    if (Uniform01(rng) < 0.3) {
      Fault f;
      f.kind = FaultKind::kAgentRestart;
      f.host = static_cast<std::uint32_t>(rng.Below(fleet.hosts().size()));
      f.start_ns = Seconds(rng, 30 * kSecond, c.duration_ns);
      f.end_ns = f.start_ns + kSecond;
      c.faults.push_back(f);
    }
    if (Uniform01(rng) < 0.2) {
      Fault f;
      f.kind = FaultKind::kHostLeave;
      f.host = static_cast<std::uint32_t>(rng.Below(fleet.hosts().size()));
      f.start_ns = Seconds(rng, 30 * kSecond, c.duration_ns / 2);
      f.end_ns = f.start_ns + Seconds(rng, 60 * kSecond, c.duration_ns / 2);
      c.faults.push_back(f);
    }
    suite.push_back(std::move(s));
  }
  return suite;
}

}  // namespace hostmesh::sim
