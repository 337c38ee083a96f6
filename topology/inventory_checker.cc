// BuildTopology: the cross-reference checks of an inventory, and the build.

#include <charconv>
#include <string>
#include <unordered_map>

#include "common/config/config_error.h"
#include "common/config/map_reader.h"
#include "topology/inventory_loader.h"

namespace hostmesh::topology {

namespace {

using config::Quote;

std::string Idx(std::string_view list, size_t i) {
  return std::string(list) + "[" + std::to_string(i) + "]";
}

// "198.18.0.0/31" -> (network, prefix length).
std::optional<std::pair<Ipv4, int>> ParseSubnet(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::optional<Ipv4> ip = ParseIpv4(text.substr(0, slash));
  int len = -1;
  const std::string_view digits = text.substr(slash + 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), len);
  if (!ip || ec != std::errc() || end != digits.data() + digits.size() || len < 0 || len > 32) {
    return std::nullopt;
  }
  return std::pair{*ip, len};
}

bool InSubnet(Ipv4 ip, Ipv4 net, int len) {
  const std::uint32_t mask = len == 0 ? 0 : ~std::uint32_t{0} << (32 - len);
  return (ip.value & mask) == (net.value & mask);
}

class Checker {
 public:
  Checker(const Inventory& inv, std::string_view source, const Locator& locate)
      : inv_(inv), sink_(std::string(source)), locate_(locate) {}

  Topology Run() {
    AddDevices();
    AddInterfaces();
    AddLinks();
    CheckNics();
    CheckSwitchPorts();
    sink_.ThrowIfAny();
    return std::move(builder_).Finish();
  }

 private:
  void Issue(const std::string& path, std::string message) {
    const auto [line, column] = locate_ ? locate_(path) : std::pair{0, 0};
    sink_.Add(line, column, path, std::move(message));
  }
  // " (line N)" pointing at where something was first defined, when known.
  std::string FirstAt(const std::string& path) const {
    if (!locate_) return "";
    const int line = locate_(path).first;
    return line > 0 ? " (line " + std::to_string(line) + ")" : "";
  }

  std::string DevicePath(DeviceId id) const {
    return id < inv_.hosts.size() ? Idx("hosts", id) : Idx("switches", id - inv_.hosts.size());
  }

  const Topology& topo() const { return builder_.partial(); }

  std::optional<DeviceId> Device(const std::string& name) const {
    const auto it = devices_.find(name);
    if (it == devices_.end()) return std::nullopt;
    return it->second;
  }
  InterfaceId Port(const std::string& device, const std::string& name) const {
    const auto it = ports_.find(device + '\0' + name);
    return it == ports_.end() ? kNone : it->second;
  }

  void AddDevice(const std::string& path, topology::Device device) {
    const auto [it, fresh] = devices_.emplace(device.name, DeviceId{});
    if (!fresh) {
      Issue(path + ".name", "duplicate device name " + Quote(device.name) + ", also " +
                                DevicePath(it->second) + FirstAt(DevicePath(it->second)));
    }
    const DeviceId id = builder_.AddDevice(std::move(device));
    if (fresh) it->second = id;
    device_paths_.push_back(path);
  }

  void AddDevices() {
    for (size_t h = 0; h < inv_.hosts.size(); ++h) {
      const InventoryHost& host = inv_.hosts[h];
      AddDevice(Idx("hosts", h), {.name = host.name, .tier = Tier::kHost, .pod = host.pod});
    }
    for (size_t s = 0; s < inv_.switches.size(); ++s) {
      const InventorySwitch& sw = inv_.switches[s];
      const std::string path = Idx("switches", s);
      if (sw.tier == Tier::kRail && !sw.rail) {
        Issue(path, "rail switch " + Quote(sw.name) + " needs `rail`, its rail index");
      }
      const bool has_pod = sw.tier == Tier::kRail;
      AddDevice(path, {.name = sw.name,
                       .tier = sw.tier,
                       .pod = has_pod ? sw.pod.value_or(0) : sw.pod.value_or(-1),
                       .rail = sw.rail.value_or(-1)});
    }
  }

  void AddInterface(const std::string& path, DeviceId device, Interface iface) {
    const std::string device_name = topo().device(device).name;
    const InterfaceId same_ip = topo().FindInterface(iface.ip);
    if (same_ip != kNone) {
      Issue(path + ".ip", "duplicate IP " + iface.ip.ToString() + ", also on " +
                              topo().DescribeInterface(same_ip) + FirstAt(port_paths_[same_ip]));
      return;
    }
    if (!ports_.emplace(device_name + '\0' + iface.name, InterfaceId{}).second) {
      Issue(path + ".name", Quote(device_name) + " has two interfaces named " + Quote(iface.name));
      return;
    }
    iface.device = device;
    const std::string key = device_name + '\0' + iface.name;
    ports_[key] = builder_.AddInterface(std::move(iface));
    port_paths_.push_back(path);
  }

  void AddInterfaces() {
    for (size_t h = 0; h < inv_.hosts.size(); ++h) {
      for (size_t n = 0; n < inv_.hosts[h].nics.size(); ++n) {
        const InventoryNic& nic = inv_.hosts[h].nics[n];
        AddInterface(Idx(Idx("hosts", h) + ".nics", n), static_cast<DeviceId>(h),
                     {.name = nic.name, .ip = nic.ip, .rail = nic.rail});
      }
    }
    for (size_t s = 0; s < inv_.switches.size(); ++s) {
      const auto device = static_cast<DeviceId>(inv_.hosts.size() + s);
      for (size_t i = 0; i < inv_.switches[s].interfaces.size(); ++i) {
        const InventoryInterface& port = inv_.switches[s].interfaces[i];
        AddInterface(Idx(Idx("switches", s) + ".interfaces", i), device,
                     {.name = port.name, .ip = port.ip});
      }
    }
  }

  // The interface a link end names, or kNone after reporting why not.
  InterfaceId ResolveEnd(const std::string& path, const InventoryLinkEnd& end) {
    const std::optional<DeviceId> device = Device(end.device);
    if (!device) {
      Issue(path + ".device", "unknown device " + Quote(end.device));
      return kNone;
    }
    const InterfaceId port = Port(end.device, end.interface);
    if (port == kNone) {
      Issue(path + ".interface", "link to a missing interface: " + Quote(end.device) +
                                     " has no interface " + Quote(end.interface));
      return kNone;
    }
    if (topo().interface(port).ip != end.ip) {
      Issue(path + ".ip", end.ip.ToString() + " is not the address of " + end.device + ":" +
                              end.interface + " (" + topo().interface(port).ip.ToString() + ")");
      return kNone;
    }
    if (topo().interface(port).link != kNone) {
      const LinkId other = topo().interface(port).link;
      Issue(path, end.device + ":" + end.interface + " is already an end of link " +
                      Quote(topo().link(other).name) + FirstAt(Idx("links", other)));
      return kNone;
    }
    return port;
  }

  void AddLinks() {
    for (size_t l = 0; l < inv_.links.size(); ++l) {
      const InventoryLink& link = inv_.links[l];
      const std::string path = Idx("links", l);
      InterfaceId a = ResolveEnd(path + ".a", link.a);
      InterfaceId b = ResolveEnd(path + ".b", link.b);
      if (a == kNone || b == kNone) {
        builder_failed_ = true;
        continue;
      }
      if (a == b) {
        Issue(path + ".b", "a link needs two different interfaces");
        builder_failed_ = true;
        continue;
      }
      const Tier ta = topo().TierOf(topo().DeviceOf(a));
      const Tier tb = topo().TierOf(topo().DeviceOf(b));
      const bool nic_link = ta == Tier::kHost || tb == Tier::kHost;
      if (ta == Tier::kHost && tb == Tier::kHost) {
        Issue(path, "a link between two hosts; hosts connect to rail switches");
      } else if (nic_link != (link.kind == LinkKind::kNic)) {
        Issue(path + ".kind", nic_link ? "a host's link is of kind \"nic\""
                                       : "a link between switches is of kind \"fabric\"");
      }
      if (!link.subnet.empty()) {
        const auto subnet = ParseSubnet(link.subnet);
        if (!subnet) {
          Issue(path + ".subnet",
                "expected a subnet such as 198.18.0.0/31, got " + Quote(link.subnet));
        } else if (!InSubnet(link.a.ip, subnet->first, subnet->second) ||
                   !InSubnet(link.b.ip, subnet->first, subnet->second)) {
          Issue(path + ".subnet", "subnet " + link.subnet + " does not hold both ends (" +
                                      link.a.ip.ToString() + ", " + link.b.ip.ToString() + ")");
        }
      }
      // Lower end first, whatever order the file used.
      if (tb < ta) std::swap(a, b);
      builder_.AddLink({.name = link.name, .kind = link.kind, .lower = a, .upper = b});
    }
  }

  // Whether `port` is linked to `peer_device:peer_interface` at `peer_ip`;
  // reports the problem at `path` (the referencing record) otherwise.
  void CheckPeer(const std::string& path, InterfaceId port, const std::string& peer_device,
                 const std::string& peer_interface, Ipv4 peer_ip, std::string_view device_key,
                 std::string_view interface_key, std::string_view ip_key) {
    const InterfaceId named = Port(peer_device, peer_interface);
    if (named == kNone) {
      Issue(path + "." + std::string(interface_key), "unknown reference: " + Quote(peer_device) +
                                                         " has no interface " +
                                                         Quote(peer_interface));
      return;
    }
    if (topo().interface(named).ip != peer_ip) {
      Issue(path + "." + std::string(ip_key), peer_ip.ToString() + " is not the address of " +
                                                  peer_device + ":" + peer_interface + " (" +
                                                  topo().interface(named).ip.ToString() + ")");
      return;
    }
    const InterfaceId linked = topo().Peer(port);
    if (linked == kNone) {
      if (!builder_failed_) {
        Issue(path + "." + std::string(device_key), "no entry in links joins " +
                                                        topo().DescribeInterface(port) + " and " +
                                                        topo().DescribeInterface(named));
      }
    } else if (linked != named) {
      Issue(path + "." + std::string(device_key), "links join " + topo().DescribeInterface(port) +
                                                      " to " + topo().DescribeInterface(linked) +
                                                      ", not to " + peer_device + ":" +
                                                      peer_interface);
    }
  }

  void CheckNics() {
    for (size_t h = 0; h < inv_.hosts.size(); ++h) {
      for (size_t n = 0; n < inv_.hosts[h].nics.size(); ++n) {
        const InventoryNic& nic = inv_.hosts[h].nics[n];
        const std::string path = Idx(Idx("hosts", h) + ".nics", n);
        const InterfaceId port = Port(inv_.hosts[h].name, nic.name);
        if (port == kNone || topo().DeviceOf(port) != h) continue;  // reported already
        const std::optional<DeviceId> sw = Device(nic.switch_name);
        if (!sw) {
          Issue(path + ".switch", "unknown reference: no switch named " + Quote(nic.switch_name));
          continue;
        }
        const topology::Device& dev = topo().device(*sw);
        if (dev.tier != Tier::kRail) {
          Issue(path + ".switch", "the NIC has no rail switch: " + Quote(dev.name) + " is a " +
                                      std::string(TierName(dev.tier)) +
                                      (dev.tier == Tier::kHost ? "" : " switch"));
          continue;
        }
        if (dev.rail >= 0 && dev.rail != nic.rail) {
          Issue(path + ".rail", "NIC of rail " + std::to_string(nic.rail) + " hangs off " +
                                    dev.name + ", the switch of rail " + std::to_string(dev.rail));
        }
        CheckPeer(path, port, nic.switch_name, nic.switch_interface, nic.switch_ip, "switch",
                  "switch_interface", "switch_ip");
      }
    }
  }

  void CheckSwitchPorts() {
    for (size_t s = 0; s < inv_.switches.size(); ++s) {
      const InventorySwitch& sw = inv_.switches[s];
      for (size_t i = 0; i < sw.interfaces.size(); ++i) {
        const InventoryInterface& p = sw.interfaces[i];
        const std::string path = Idx(Idx("switches", s) + ".interfaces", i);
        const InterfaceId port = Port(sw.name, p.name);
        if (port == kNone || topo().DeviceOf(port) != inv_.hosts.size() + s) continue;
        if (!Device(p.peer)) {
          Issue(path + ".peer", "unknown reference: no device named " + Quote(p.peer));
          continue;
        }
        CheckPeer(path, port, p.peer, p.peer_interface, p.peer_ip, "peer", "peer_interface",
                  "peer_ip");
      }
    }
  }

  const Inventory& inv_;
  config::IssueSink sink_;
  const Locator& locate_;
  TopologyBuilder builder_;
  std::unordered_map<std::string, DeviceId> devices_;
  std::unordered_map<std::string, InterfaceId> ports_;  // "device\0interface"
  std::vector<std::string> device_paths_;
  std::vector<std::string> port_paths_;
  bool builder_failed_ = false;  // some link was left out: missing links are not news
};

}  // namespace

Topology BuildTopology(const Inventory& inventory, std::string_view source_name,
                       const Locator& locate) {
  return Checker(inventory, source_name, locate).Run();
}

}  // namespace hostmesh::topology
