// hostmeshctl trace: one traceroute of an exact UDP 5-tuple (tracer/), the
// hops named by device and port and resolved into links with --topology
// (topology/). Exit codes: 0 destination reached with every hop answered,
// 1 not reached or hops missing, 2 bad input, 3 no privileges (CAP_NET_RAW).

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/config/config_error.h"
#include "ctl/commands.h"
#include "topology/inventory_loader.h"
#include "topology/path_resolver.h"
#include "tracer/kernel_trace_io.h"
#include "tracer/probe_tag.h"
#include "tracer/trace_engine.h"

namespace hostmesh::ctl {

namespace {

// True when `addr` is one of this host's own addresses: the destination NIC is
// then local and the agent's probe receiver may consume the last probe instead
// of answering Port Unreachable, so the trace must infer the destination.
bool IsLocalAddress(const tracer::Ipv4& addr) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return false;
  bool local = false;
  for (const ifaddrs* it = list; it != nullptr && !local; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(it->ifa_addr);
    local = ntohl(in->sin_addr.s_addr) == addr.value;
  }
  ::freeifaddrs(list);
  return local;
}

constexpr int kExitReached = 0;
constexpr int kExitNotReached = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitNoPrivileges = 3;

struct TraceOptions {
  std::string src;
  std::string dst;
  int sport = 0;
  int dport = tracer::kRoceV2Port;
  std::string dev;
  int max_ttl = 8;
  int timeout_ms = 500;
  int tclass = 106;  // the agent's default probe class (probe.traffic_class)
  std::string topology;
  bool json = false;
};

const char* HopStatusName(tracer::HopStatus status) {
  switch (status) {
    case tracer::HopStatus::kSilent:
      return "silent";
    case tracer::HopStatus::kTimeExceeded:
      return "time_exceeded";
    case tracer::HopStatus::kDestination:
      return "destination";
    case tracer::HopStatus::kInferredDestination:
      return "inferred_destination";
    case tracer::HopStatus::kUnreachable:
      return "unreachable";
  }
  return "?";
}

using Json = nlohmann::ordered_json;  // fields in the order they are set

Json StringOrNull(const std::optional<std::string>& text) {
  return text ? Json(*text) : Json(nullptr);
}

std::string Milliseconds(std::chrono::nanoseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", static_cast<double>(d.count()) / 1e6);
  return buf;
}

// Device and interface of a hop address, when the inventory knows it.
struct HopName {
  std::string device;
  std::string interface;
};

std::optional<HopName> NameOf(const topology::Topology* topo, tracer::Ipv4 ip) {
  if (topo == nullptr || ip.IsZero()) return std::nullopt;
  const topology::InterfaceId id = topo->FindInterface(ip);
  if (id == topology::kNone) return std::nullopt;
  const topology::Interface& iface = topo->interface(id);
  return HopName{topo->device(iface.device).name, iface.name};
}

std::unique_ptr<topology::Topology> LoadTopology(const std::string& file, CommandContext& ctx) {
  try {
    return std::make_unique<topology::Topology>(topology::LoadInventoryFile(file));
  } catch (const config::ConfigError& e) {
    ctx.err << e.what() << "\n";  // the first issues by position, then "... and N more"
    ctx.err << "hostmeshctl trace: " << e.total() << (e.total() == 1 ? " problem" : " problems")
            << " in " << file << "\n";
    return nullptr;
  }
}

topology::ResolvedPath Resolve(const topology::Topology& topo, const tracer::TraceResult& r) {
  std::vector<topology::Hop> hops;
  for (const tracer::Hop& hop : r.hops) {
    if (hop.status == tracer::HopStatus::kSilent || hop.address.IsZero()) {
      hops.emplace_back(std::nullopt);
    } else {
      hops.emplace_back(hop.address);
    }
  }
  // The resolver takes at most kMaxHops; a longer trace cannot be a fabric path.
  if (hops.size() > topology::PathResolver::kMaxHops) hops.resize(topology::PathResolver::kMaxHops);
  return topology::PathResolver(topo).Resolve(r.tuple.src, r.tuple.dst, hops);
}

int ExitCodeOf(const tracer::TraceResult& r) {
  return r.reached_destination && r.silent_hops() == 0 ? kExitReached : kExitNotReached;
}

void PrintText(const TraceOptions& opt, const tracer::TraceResult& r,
               const topology::Topology* topo, std::ostream& out) {
  out << "trace " << r.tuple.ToString();
  if (!opt.dev.empty()) out << " dev " << opt.dev;
  out << ", max ttl " << opt.max_ttl << "\n";
  for (const tracer::Hop& hop : r.hops) {
    char ttl[8];
    std::snprintf(ttl, sizeof(ttl), "%2d", hop.ttl);
    out << ttl << "  ";
    if (hop.status == tracer::HopStatus::kSilent) {
      out << "*\n";
      continue;
    }
    std::string address = hop.address.ToString();
    address.resize(std::max<std::size_t>(address.size(), 15), ' ');
    out << address;
    if (hop.status == tracer::HopStatus::kInferredDestination) {
      out << "  (no reply: taken by the destination's receiver)";
    } else {
      out << "  " << Milliseconds(hop.rtt) << " ms";
    }
    if (const auto name = NameOf(topo, hop.address)) {
      out << "  " << name->device << ":" << name->interface;
    } else if (topo != nullptr) {
      out << "  (not in the inventory)";
    }
    if (hop.status == tracer::HopStatus::kUnreachable) {
      out << "  unreachable (code " << static_cast<int>(hop.icmp_code) << ")";
    }
    out << "\n";
  }
  out << "end: " << tracer::ToString(r.end)
      << (r.reached_destination ? ", reached" : ", not reached") << ", " << r.answered_hops()
      << " answered, " << r.silent_hops() << " silent, " << r.probes_sent << " probes\n";
  if (topo == nullptr) return;
  const topology::ResolvedPath path = Resolve(*topo, r);
  out << "path: " << topology::PathStatusName(path.status) << ", " << path.links.size() << " links";
  if (path.filled > 0) out << " (" << path.filled << " filled from the graph)";
  if (!path.problem.empty()) out << ": " << path.problem;
  out << "\n";
  for (std::size_t i = 0; i < path.links.size(); ++i) {
    const topology::LinkId id = path.links[i];
    if (id != topology::kNone) {
      out << "  " << topo->link(id).name << "  " << topo->Describe(id) << "\n";
      continue;
    }
    out << "  ? one of:";
    for (const topology::LinkCandidates& c : path.candidates) {
      if (c.position != i) continue;
      for (const topology::LinkId l : c.links) out << " " << topo->link(l).name;
    }
    out << "\n";
  }
}

void PrintJson(const TraceOptions& opt, const tracer::TraceResult& r,
               const topology::Topology* topo, std::ostream& out) {
  Json j = Json::object();
  j["src"] = r.tuple.src.ToString();
  j["dst"] = r.tuple.dst.ToString();
  j["sport"] = r.tuple.sport;
  j["dport"] = r.tuple.dport;
  j["dev"] = StringOrNull(opt.dev.empty() ? std::nullopt : std::optional(opt.dev));
  j["reached"] = r.reached_destination;
  j["end"] = tracer::ToString(r.end);
  j["probes_sent"] = r.probes_sent;
  Json& hops = j["hops"] = Json::array();
  for (const tracer::Hop& hop : r.hops) {
    const bool has_address = hop.status != tracer::HopStatus::kSilent && !hop.address.IsZero();
    const auto name = has_address ? NameOf(topo, hop.address) : std::nullopt;
    Json& h = hops.emplace_back(Json::object());
    h["ttl"] = hop.ttl;
    h["address"] = StringOrNull(has_address ? std::optional(hop.address.ToString()) : std::nullopt);
    h["status"] = HopStatusName(hop.status);
    // Microsecond resolution, as the text output prints it.
    h["rtt_ms"] = hop.answered()
                      ? Json(std::round(static_cast<double>(hop.rtt.count()) / 1e3) / 1e3)
                      : Json(nullptr);
    if (hop.status == tracer::HopStatus::kUnreachable) h["icmp_code"] = hop.icmp_code;
    if (topo != nullptr) {
      h["device"] = StringOrNull(name ? std::optional(name->device) : std::nullopt);
      h["interface"] = StringOrNull(name ? std::optional(name->interface) : std::nullopt);
    }
  }
  if (topo != nullptr) {
    const topology::ResolvedPath path = Resolve(*topo, r);
    Json& p = j["path"] = Json::object();
    p["status"] = topology::PathStatusName(path.status);
    p["filled"] = path.filled;
    p["problem"] = StringOrNull(path.problem.empty() ? std::nullopt : std::optional(path.problem));
    Json& links = p["links"] = Json::array();
    for (std::size_t i = 0; i < path.links.size(); ++i) {
      const topology::LinkId id = path.links[i];
      if (id != topology::kNone) {
        links.push_back(topo->link(id).name);
        continue;
      }
      // Ambiguous: the candidate links of this position.
      Json& candidates = links.emplace_back(Json::array());
      for (const topology::LinkCandidates& c : path.candidates) {
        if (c.position != i) continue;
        for (const topology::LinkId l : c.links) candidates.push_back(topo->link(l).name);
      }
    }
  }
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

bool IsPermissionError(int err, const std::string& message) {
  return err == EPERM || err == EACCES || message.find("not permitted") != std::string::npos ||
         message.find("Permission denied") != std::string::npos;
}

int RunTraceCommand(const TraceOptions& opt, CommandContext& ctx) {
  const auto src = tracer::Ipv4::Parse(opt.src);
  const auto dst = tracer::Ipv4::Parse(opt.dst);
  if (!src || !dst) {
    ctx.err << "hostmeshctl trace: " << (!src ? "--src" : "--dst") << ": not an IPv4 address: \""
            << (!src ? opt.src : opt.dst) << "\"\n";
    return kExitBadInput;
  }
  std::unique_ptr<topology::Topology> topo;
  if (!opt.topology.empty()) {
    topo = LoadTopology(opt.topology, ctx);
    if (!topo) return kExitBadInput;
    for (const auto& [flag, ip] : {std::pair{"--src", *src}, std::pair{"--dst", *dst}}) {
      if (topo->FindInterface(ip) == topology::kNone) {
        ctx.err << "hostmeshctl trace: warning: " << flag << " " << ip.ToString() << " is not in "
                << opt.topology << "; the path cannot be resolved\n";
      }
    }
  }

  SystemClock clock;
  std::string error;
  auto io = tracer::KernelTraceIo::Create(clock, static_cast<std::uint8_t>(opt.tclass), error);
  const int create_errno = errno;
  if (!io) {
    if (IsPermissionError(create_errno, error)) {
      ctx.err << "hostmeshctl trace: needs CAP_NET_RAW (run as root): " << error << "\n";
      return kExitNoPrivileges;
    }
    ctx.err << "hostmeshctl trace: " << error << "\n";
    return kExitNotReached;
  }

  tracer::TraceRequest request;
  request.tuple.src = *src;
  request.tuple.dst = *dst;
  request.tuple.sport = static_cast<std::uint16_t>(opt.sport);
  request.tuple.dport = static_cast<std::uint16_t>(opt.dport);
  request.netdev = opt.dev;
  request.max_ttl = opt.max_ttl;
  request.probe_timeout = std::chrono::milliseconds{opt.timeout_ms};
  request.session = static_cast<std::uint32_t>(std::random_device{}()) | 1U;
  request.destination_swallows = IsLocalAddress(*dst);
  const tracer::TraceResult result = tracer::RunTrace(request, *io, clock);

  if (result.end == tracer::TraceEnd::kError) {
    ctx.err << "hostmeshctl trace: " << result.error << "\n";
    // Send failures are "ttl N: ..." (a firewall's EPERM among them): the path
    // failed. Anything else failed opening the 5-tuple's socket.
    if (result.error.rfind("ttl ", 0) != 0) {
      if (IsPermissionError(0, result.error)) {
        ctx.err << "hostmeshctl trace: needs CAP_NET_RAW (run as root)\n";
        return kExitNoPrivileges;
      }
      // Address not on this host, no such device, port held without
      // SO_REUSEADDR: bad input.
      return kExitBadInput;
    }
  }
  if (opt.json) {
    PrintJson(opt, result, topo.get(), ctx.out);
  } else {
    PrintText(opt, result, topo.get(), ctx.out);
  }
  return result.end == tracer::TraceEnd::kError ? kExitNotReached : ExitCodeOf(result);
}

}  // namespace

void AddTraceCommand(CLI::App& app, CommandContext& ctx) {
  auto opt = std::make_shared<TraceOptions>();
  CLI::App* trace = app.add_subcommand(
      "trace",
      "Traceroute one UDP 5-tuple (needs CAP_NET_RAW). Exit 0: destination reached, every hop "
      "answered; 1: not reached or hops missing; 2: bad input; 3: needs privileges");
  trace->add_option("--src", opt->src, "Source address (a local NIC's IPv4 address)")->required();
  trace->add_option("--dst", opt->dst, "Destination IPv4 address")->required();
  trace->add_option("--sport", opt->sport, "UDP source port")
      ->required()
      ->check(CLI::Range(1, 65535));
  trace->add_option("--dport", opt->dport, "UDP destination port (RoCEv2)")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  trace->add_option("--dev", opt->dev, "Send through this netdev (SO_BINDTODEVICE), e.g. nic0");
  trace->add_option("--max-ttl", opt->max_ttl, "Highest TTL probed")
      ->check(CLI::Range(1, tracer::kMaxTtl))
      ->capture_default_str();
  trace->add_option("--timeout-ms", opt->timeout_ms, "Wait per probe before a hop counts as silent")
      ->check(CLI::Range(1, 60000))
      ->capture_default_str();
  trace
      ->add_option("--tclass", opt->tclass,
                   "IP TOS byte of the probes: the probes' class, so the trace takes their queue")
      ->check(CLI::Range(0, 255))
      ->capture_default_str();
  trace->add_option("--topology", opt->topology,
                    "Inventory YAML (`fabric topology`, `hostmeshctl topology generate`): name "
                    "each hop's device and interface and resolve the links");
  trace->add_flag("--json", opt->json, "Print JSON");
  trace->callback([opt, &ctx] { ctx.exit_code = RunTraceCommand(*opt, ctx); });
}

}  // namespace hostmesh::ctl
