#include "topology/generator.h"

#include <cstdio>
#include <stdexcept>

namespace hostmesh::topology {

namespace {

// The testbed's addressing plan (layout.py): RFC 2544 benchmarking space.
constexpr std::uint32_t kNicLinkBase = (198U << 24) | (18U << 16);      // 198.18.0.0/16
constexpr std::uint32_t kFabricLinkBase = (198U << 24) | (19U << 16);   // 198.19.0.0/17
constexpr std::uint32_t kMgmtHostBase = kFabricLinkBase | (129U << 8);  // 198.19.129.0
constexpr Ipv4 kAnalyzer{kFabricLinkBase | (128U << 8) | 1U};           // 198.19.128.1
// NIC links beyond the testbed's /16 (fleets over 32768 NICs, which only the
// simulator builds) continue in 100.64.0.0/10, so the testbed's addresses stay
// as they are.
constexpr std::uint32_t kWideNicLinkBase = (100U << 24) | (64U << 16);  // 100.64.0.0/10
constexpr int kTestbedNicLinks = 1 << 15;
constexpr int kMaxNicLinks = kTestbedNicLinks + (1 << 21);
constexpr int kMaxFabricLinks = 1 << 14;
constexpr int kMaxMgmtHosts = 32768 - 256;

std::string Format(const char* pattern, int a, int b = 0) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, pattern, a, b);
  return buffer;
}
std::string HostName(int h) {
  return Format("h%03d", h);
}
std::string NicName(int r) {
  return Format("nic%d", r);
}
std::string RailSwitchName(int p, int r) {
  return Format("p%dr%d", p, r);
}
std::string AggregationName(int r, int a) {
  return Format("r%da%02d", r, a);
}
std::string SpineName(int s) {
  return Format("s%02d", s);
}

std::string Subnet31(Ipv4 ip) {
  return Ipv4{ip.value & ~1U}.ToString() + "/31";
}

int Aggregations(const FabricShape& s) {
  return s.aggregations > 0 ? s.aggregations : s.spines;
}

void Validate(const FabricShape& s) {
  const auto fail = [](const std::string& why) { throw std::invalid_argument(why); };
  if (s.hosts < 1) fail("--hosts must be at least 1, got " + std::to_string(s.hosts));
  if (s.rails < 2) fail("--rails must be at least 2: probes go between NICs of one host");
  if (s.spines < 1) fail("--spines must be at least 1, got " + std::to_string(s.spines));
  if (s.pods < 1) fail("--pods must be at least 1, got " + std::to_string(s.pods));
  if (s.tiers != 2 && s.tiers != 3) fail("--tiers must be 2 or 3, got " + std::to_string(s.tiers));
  if (s.aggregations < 0) fail("--aggregations must not be negative");
  if (s.hosts % s.pods != 0) {
    fail("--hosts (" + std::to_string(s.hosts) + ") must be a multiple of --pods (" +
         std::to_string(s.pods) + ")");
  }
  const long long nic_links = 1LL * s.hosts * s.rails;
  if (nic_links > kMaxNicLinks)
    fail("hosts x rails must be at most " + std::to_string(kMaxNicLinks));
  const long long fabric_links = s.tiers == 2
                                     ? 1LL * s.pods * s.rails * s.spines
                                     : 1LL * s.rails * Aggregations(s) * (s.pods + s.spines);
  if (fabric_links > kMaxFabricLinks) {
    fail(std::string(s.tiers == 2 ? "pods x rails x spines"
                                  : "rails x aggregations x (pods + spines)") +
         " must be at most " + std::to_string(kMaxFabricLinks));
  }
  if (s.hosts > kMaxMgmtHosts) fail("--hosts must be at most " + std::to_string(kMaxMgmtHosts));
}

// Accumulates one fabric: switches with their ports in the testbed's order.
class Generator {
 public:
  explicit Generator(const FabricShape& shape) : s_(shape), a_(Aggregations(shape)) {}

  Inventory Run() {
    inv_.management = InventoryManagement{"198.19.128.0/17", kAnalyzer};
    AddHostsAndNicLinks();
    if (s_.tiers == 2) {
      AddTwoTierFabric();
    } else {
      AddThreeTierFabric();
    }
    for (int p = 0; p < s_.pods; ++p) {
      for (int r = 0; r < s_.rails; ++r) inv_.switches.push_back(std::move(rail_[Rail(p, r)]));
    }
    for (InventorySwitch& sw : aggregation_) inv_.switches.push_back(std::move(sw));
    for (InventorySwitch& sw : spine_) inv_.switches.push_back(std::move(sw));
    return std::move(inv_);
  }

 private:
  size_t Rail(int p, int r) const { return static_cast<size_t>(p * s_.rails + r); }

  // One /31 link: `lower` gets the even address for switch pairs; for NIC links
  // the switch (upper) does, as in the testbed.
  void Link(LinkKind kind, InventorySwitch* lower_switch, const std::string& lower_device,
            const std::string& lower_if, InventorySwitch* upper, const std::string& upper_if,
            Ipv4 lower_ip, Ipv4 upper_ip) {
    const std::string link_name =
        (kind == LinkKind::kNic ? lower_device + "." + lower_if : lower_device) + "-" + upper->name;
    upper->interfaces.push_back({upper_if, upper_ip, lower_device, lower_if, lower_ip});
    if (lower_switch != nullptr) {
      lower_switch->interfaces.push_back({lower_if, lower_ip, upper->name, upper_if, upper_ip});
    }
    inv_.links.push_back({link_name,
                          kind,
                          Subnet31(lower_ip),
                          {lower_device, lower_if, lower_ip},
                          {upper->name, upper_if, upper_ip}});
  }

  void AddHostsAndNicLinks() {
    const int per_pod = s_.hosts / s_.pods;
    for (int p = 0; p < s_.pods; ++p) {
      for (int r = 0; r < s_.rails; ++r) {
        rail_.push_back({.name = RailSwitchName(p, r), .tier = Tier::kRail, .pod = p, .rail = r});
      }
    }
    inv_.hosts.resize(static_cast<size_t>(s_.hosts));
    for (int h = 0; h < s_.hosts; ++h) {
      InventoryHost& host = inv_.hosts[static_cast<size_t>(h)];
      host.name = HostName(h);
      host.pod = h / per_pod;
      host.mgmt_ip = Ipv4{kMgmtHostBase + static_cast<std::uint32_t>(h)};
    }
    for (int r = 0; r < s_.rails; ++r) {
      for (int h = 0; h < s_.hosts; ++h) {
        const auto idx = static_cast<std::uint32_t>(r * s_.hosts + h);
        const Ipv4 switch_ip{idx < kTestbedNicLinks
                                 ? kNicLinkBase + 2 * idx
                                 : kWideNicLinkBase + 2 * (idx - kTestbedNicLinks)};
        const Ipv4 nic_ip{switch_ip.value + 1};
        InventoryHost& host = inv_.hosts[static_cast<size_t>(h)];
        InventorySwitch& sw = rail_[Rail(host.pod, r)];
        const std::string nic = NicName(r);
        host.nics.push_back({nic, r, nic_ip, nic, sw.name, host.name, switch_ip});
        Link(LinkKind::kNic, nullptr, host.name, nic, &sw, host.name, nic_ip, switch_ip);
      }
    }
    // Hosts list their NICs by rail; the loop above went rail by rail.
  }

  void AddTwoTierFabric() {
    for (int sp = 0; sp < s_.spines; ++sp)
      spine_.push_back({.name = SpineName(sp), .tier = Tier::kSpine});
    for (int p = 0; p < s_.pods; ++p) {
      for (int r = 0; r < s_.rails; ++r) {
        for (int sp = 0; sp < s_.spines; ++sp) {
          const auto idx = static_cast<std::uint32_t>((p * s_.rails + r) * s_.spines + sp);
          const Ipv4 lower{kFabricLinkBase + 2 * idx};
          InventorySwitch& rail = rail_[Rail(p, r)];
          InventorySwitch& spine = spine_[static_cast<size_t>(sp)];
          Link(LinkKind::kFabric, &rail, rail.name, spine.name, &spine, rail.name, lower,
               Ipv4{lower.value + 1});
        }
      }
    }
  }

  void AddThreeTierFabric() {
    for (int r = 0; r < s_.rails; ++r) {
      for (int a = 0; a < a_; ++a) {
        aggregation_.push_back(
            {.name = AggregationName(r, a), .tier = Tier::kAggregation, .rail = r});
      }
    }
    for (int sp = 0; sp < s_.spines; ++sp)
      spine_.push_back({.name = SpineName(sp), .tier = Tier::kSpine});
    for (int p = 0; p < s_.pods; ++p) {
      for (int r = 0; r < s_.rails; ++r) {
        for (int a = 0; a < a_; ++a) {
          const auto idx = static_cast<std::uint32_t>((p * s_.rails + r) * a_ + a);
          const Ipv4 lower{kFabricLinkBase + 2 * idx};
          InventorySwitch& rail = rail_[Rail(p, r)];
          InventorySwitch& agg = aggregation_[static_cast<size_t>(r * a_ + a)];
          Link(LinkKind::kFabric, &rail, rail.name, agg.name, &agg, rail.name, lower,
               Ipv4{lower.value + 1});
        }
      }
    }
    // Upper links are numbered after every lower one, in the same /17.
    const auto lower_links = static_cast<std::uint32_t>(s_.pods * s_.rails * a_);
    for (int r = 0; r < s_.rails; ++r) {
      for (int a = 0; a < a_; ++a) {
        for (int sp = 0; sp < s_.spines; ++sp) {
          const auto idx = lower_links + static_cast<std::uint32_t>((r * a_ + a) * s_.spines + sp);
          const Ipv4 lower{kFabricLinkBase + 2 * idx};
          InventorySwitch& agg = aggregation_[static_cast<size_t>(r * a_ + a)];
          InventorySwitch& spine = spine_[static_cast<size_t>(sp)];
          Link(LinkKind::kFabric, &agg, agg.name, spine.name, &spine, agg.name, lower,
               Ipv4{lower.value + 1});
        }
      }
    }
  }

  const FabricShape& s_;
  const int a_;
  Inventory inv_;
  std::vector<InventorySwitch> rail_;
  std::vector<InventorySwitch> aggregation_;
  std::vector<InventorySwitch> spine_;
};

}  // namespace

Inventory GenerateInventory(const FabricShape& shape) {
  Validate(shape);
  return Generator(shape).Run();
}

std::string DescribeShape(const FabricShape& s) {
  std::string text = std::to_string(s.hosts) + " hosts x " + std::to_string(s.rails) + " rails x " +
                     std::to_string(s.spines) + " spines, " + std::to_string(s.pods) +
                     (s.pods > 1 ? " pods" : " pod");
  if (s.tiers == 3) {
    text += ", 3 tiers (" + std::to_string(Aggregations(s)) + " aggregation switches per rail)";
  }
  return text;
}

}  // namespace hostmesh::topology
