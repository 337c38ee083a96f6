// Inventories that disagree with the fabric they describe, still loadable:
// for tests of the disagreement report (a miscabled link, a missing one).
#pragma once

#include <stdexcept>
#include <string>

#include "topology/inventory.h"

namespace hostmesh::topology::testing {

inline InventoryLink& LinkNamed(Inventory& inv, const std::string& name) {
  for (InventoryLink& l : inv.links) {
    if (l.name == name) return l;
  }
  throw std::invalid_argument("no link " + name);
}

inline InventoryInterface& PortOf(Inventory& inv, const InventoryLinkEnd& end) {
  for (InventorySwitch& sw : inv.switches) {
    if (sw.name != end.device) continue;
    for (InventoryInterface& i : sw.interfaces) {
      if (i.name == end.interface) return i;
    }
  }
  throw std::invalid_argument("no port " + end.device + ":" + end.interface);
}

// The inventory says link a's lower end is cabled to link b's upper end and
// the other way round (two switch-to-switch links, e.g. "p0r0-s00", "p0r1-s01").
inline void SwapUpperEnds(Inventory& inv, const std::string& a, const std::string& b) {
  InventoryLink& la = LinkNamed(inv, a);
  InventoryLink& lb = LinkNamed(inv, b);
  std::swap(la.b, lb.b);
  la.subnet.clear();  // the addresses no longer share a /31
  lb.subnet.clear();
  for (InventoryLink* l : {&la, &lb}) {
    InventoryInterface& lower = PortOf(inv, l->a);
    lower.peer = l->b.device;
    lower.peer_interface = l->b.interface;
    lower.peer_ip = l->b.ip;
    InventoryInterface& upper = PortOf(inv, l->b);
    upper.peer = l->a.device;
    upper.peer_interface = l->a.interface;
    upper.peer_ip = l->a.ip;
  }
}

// The inventory forgot a switch-to-switch link, ports and all.
inline void RemoveLink(Inventory& inv, const std::string& name) {
  const InventoryLink link = LinkNamed(inv, name);
  std::erase_if(inv.links, [&](const InventoryLink& l) { return l.name == name; });
  for (InventorySwitch& sw : inv.switches) {
    std::erase_if(sw.interfaces, [&](const InventoryInterface& i) {
      return (sw.name == link.a.device && i.name == link.a.interface) ||
             (sw.name == link.b.device && i.name == link.b.interface);
    });
  }
}

}  // namespace hostmesh::topology::testing
