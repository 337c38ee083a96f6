#pragma once

// The inventory's keys, read with config::MapReader (yaml-cpp's parser under
// it: any YAML, every problem with its line, column and key path).

#include <array>
#include <optional>
#include <span>
#include <string>

#include "common/config/map_reader.h"
#include "topology/inventory.h"

namespace hostmesh::topology::schema {

inline constexpr std::array<config::EnumName<Tier>, 3> kTierNames{{
    {"rail", Tier::kRail},
    {"aggregation", Tier::kAggregation},
    {"spine", Tier::kSpine},
}};
inline constexpr std::array<config::EnumName<LinkKind>, 2> kLinkKindNames{{
    {"nic", LinkKind::kNic},
    {"fabric", LinkKind::kFabric},
}};

inline std::optional<Ipv4> ToIpv4(const config::IpAddress& ip) {
  if (!ip.is_v4()) return std::nullopt;
  return Ipv4{(std::uint32_t{ip.bytes[0]} << 24) | (std::uint32_t{ip.bytes[1]} << 16) |
              (std::uint32_t{ip.bytes[2]} << 8) | std::uint32_t{ip.bytes[3]}};
}

template <typename Reader>
bool ReadIp(Reader& r, std::string_view key, Ipv4* out, bool required = true) {
  config::IpAddress ip;
  const bool read = required ? r.Required(key, &ip) : r.Optional(key, &ip);
  if (!read) return false;
  const std::optional<Ipv4> v4 = ToIpv4(ip);
  if (!v4) {
    r.Fail(key, "the fabric is IPv4; expected a dotted IPv4 address");
    return false;
  }
  *out = *v4;
  return true;
}

template <typename Reader>
void ReadOptionalInt(Reader& r, std::string_view key, std::optional<int>* out) {
  if (!r.Has(key)) return;
  int value = 0;
  if (r.Required(key, &value)) *out = value;
}

template <typename Reader>
void ReadLinkEnd(Reader& r, InventoryLinkEnd* end) {
  r.Required("device", &end->device);
  r.Required("interface", &end->interface);
  ReadIp(r, "ip", &end->ip);
}

template <typename Reader>
void ReadInventory(Reader& r, Inventory* inv) {
  if (r.Required("version", &inv->version) && inv->version != kInventoryVersion) {
    r.Fail("version", "unsupported inventory version " + std::to_string(inv->version) +
                          "; this build reads version " + std::to_string(kInventoryVersion));
  }
  if (r.Has("management")) {
    InventoryManagement management;
    r.Map("management", [&](auto& m) {
      m.Required("network", &management.network);
      ReadIp(m, "analyzer", &management.analyzer);
    });
    inv->management = std::move(management);
  }
  r.RequiredList("hosts", [&](auto& h) {
    InventoryHost& host = inv->hosts.emplace_back();
    h.Required("name", &host.name);
    h.Optional("pod", &host.pod);
    if (h.Has("mgmt_ip")) {
      Ipv4 ip;
      if (ReadIp(h, "mgmt_ip", &ip)) host.mgmt_ip = ip;
    }
    h.RequiredList("nics", [&](auto& n) {
      InventoryNic& nic = host.nics.emplace_back();
      n.Required("name", &nic.name);
      n.Required("rail", &nic.rail);
      ReadIp(n, "ip", &nic.ip);
      if (!n.Optional("netdev", &nic.netdev)) nic.netdev = nic.name;
      n.Required("switch", &nic.switch_name);
      n.Required("switch_interface", &nic.switch_interface);
      ReadIp(n, "switch_ip", &nic.switch_ip);
    });
  });
  r.RequiredList("switches", [&](auto& s) {
    InventorySwitch& sw = inv->switches.emplace_back();
    s.Required("name", &sw.name);
    s.Required("tier", &sw.tier, std::span<const config::EnumName<Tier>>(kTierNames));
    ReadOptionalInt(s, "pod", &sw.pod);
    ReadOptionalInt(s, "rail", &sw.rail);
    s.RequiredList("interfaces", [&](auto& i) {
      InventoryInterface& port = sw.interfaces.emplace_back();
      i.Required("name", &port.name);
      ReadIp(i, "ip", &port.ip);
      i.Required("peer", &port.peer);
      i.Required("peer_interface", &port.peer_interface);
      ReadIp(i, "peer_ip", &port.peer_ip);
    });
  });
  r.RequiredList("links", [&](auto& l) {
    InventoryLink& link = inv->links.emplace_back();
    l.Required("name", &link.name);
    l.Required("kind", &link.kind, std::span<const config::EnumName<LinkKind>>(kLinkKindNames));
    l.Optional("subnet", &link.subnet);
    l.RequiredMap("a", [&](auto& end) { ReadLinkEnd(end, &link.a); });
    l.RequiredMap("b", [&](auto& end) { ReadLinkEnd(end, &link.b); });
  });
}

}  // namespace hostmesh::topology::schema
