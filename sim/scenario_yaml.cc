// A scenario as the YAML ParseScenario reads (sim/README.md), every setting
// written out, so that a suite's scenario can be rerun from its file alone
// with the same result: rates to 17 significant digits (a double's exact
// round trip), times in nanoseconds, the seed as an integer.
#include <yaml-cpp/yaml.h>

#include <cstdio>

#include "sim/scenario.h"

namespace hostmesh::sim {
namespace {

std::string Ns(std::int64_t ns) {
  return std::to_string(ns) + "ns";
}

std::string Exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

const char* DirectionName(std::uint8_t d) {
  return d == kUp ? "up" : d == kDown ? "down" : "both";
}

void EmitFault(YAML::Emitter& out, const Fleet& fleet, const Fault& f) {
  out << YAML::BeginMap;
  out << YAML::Key << "kind" << YAML::Value << std::string(FaultKindName(f.kind));
  if (FaultOnLink(f.kind)) {
    out << YAML::Key << "link" << YAML::Value << fleet.topology().link(f.link).name;
    out << YAML::Key << "direction" << YAML::Value << DirectionName(f.direction);
  }
  const bool on_host = FaultOnNic(f.kind) || f.kind == FaultKind::kHostProcessing ||
                       f.kind == FaultKind::kHostLeave || f.kind == FaultKind::kAgentRestart;
  if (on_host) out << YAML::Key << "host" << YAML::Value << fleet.hosts()[f.host].name;
  if (FaultOnNic(f.kind)) out << YAML::Key << "nic" << YAML::Value << f.nic;
  if (f.kind == FaultKind::kSwitchLoss) {
    out << YAML::Key << "switch" << YAML::Value << fleet.topology().device(f.switch_id).name;
  }
  if (FaultHasRate(f.kind)) out << YAML::Key << "rate" << YAML::Value << Exact(f.rate);
  if (f.kind == FaultKind::kLinkFlap || f.kind == FaultKind::kRnicFlap) {
    out << YAML::Key << "period" << YAML::Value << Ns(f.period_ns);
  }
  if (f.kind == FaultKind::kBlackhole) {
    out << YAML::Key << "ports" << YAML::Value
        << std::to_string(f.port_min) + "-" + std::to_string(f.port_max);
  }
  if (FaultHasAdded(f.kind)) out << YAML::Key << "added" << YAML::Value << Ns(f.added_ns);
  out << YAML::Key << "start" << YAML::Value << Ns(f.start_ns);
  out << YAML::Key << "end" << YAML::Value << Ns(f.end_ns);
  out << YAML::EndMap;
}

void EmitAgent(YAML::Emitter& out, const AgentSettings& a) {
  out << YAML::Key << "agent" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "interval" << YAML::Value << Ns(a.probe.interval.count());
  out << YAML::Key << "timeout" << YAML::Value << Ns(a.probe.timeout.count());
  out << YAML::Key << "pool_size" << YAML::Value << a.ports.pool_size;
  out << YAML::Key << "rotation_period" << YAML::Value << Ns(a.ports.rotation_period.count());
  out << YAML::Key << "trace_refresh" << YAML::Value << Ns(a.traceroute.refresh_period.count());
  out << YAML::Key << "trace_rate" << YAML::Value << Exact(a.traceroute.rate_per_second);
  out << YAML::Key << "traceroute" << YAML::Value << (a.traceroute.enabled ? "true" : "false");
  out << YAML::EndMap;
}

}  // namespace

std::string ScenarioYaml(const Scenario& s) {
  const SimConfig& c = s.config;
  const Fleet fleet(c.shape);
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << s.name;
  out << YAML::Key << "fabric" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "hosts" << YAML::Value << c.shape.hosts;
  out << YAML::Key << "rails" << YAML::Value << c.shape.rails;
  out << YAML::Key << "spines" << YAML::Value << c.shape.spines;
  out << YAML::Key << "pods" << YAML::Value << c.shape.pods;
  out << YAML::Key << "tiers" << YAML::Value << c.shape.tiers;
  out << YAML::Key << "aggregations" << YAML::Value << c.shape.aggregations;
  out << YAML::EndMap;
  out << YAML::Key << "duration" << YAML::Value << Ns(c.duration_ns);
  out << YAML::Key << "seed" << YAML::Value << std::to_string(c.seed);
  out << YAML::Key << "hash_seed" << YAML::Value << c.hash_seed;
  out << YAML::Key << "window" << YAML::Value << Ns(c.analysis.window.count());
  out << YAML::Key << "threads" << YAML::Value << c.threads;
  EmitAgent(out, c.agent);
  out << YAML::Key << "background_loss" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "min" << YAML::Value << Exact(c.background.min);
  out << YAML::Key << "max" << YAML::Value << Exact(c.background.max);
  out << YAML::EndMap;
  const LatencyModel& l = c.latency;
  out << YAML::Key << "congestion" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "share" << YAML::Value << Exact(l.moving.share);
  out << YAML::Key << "min_added" << YAML::Value << Ns(l.moving.min_added_ns);
  out << YAML::Key << "max_added" << YAML::Value << Ns(l.moving.max_added_ns);
  out << YAML::Key << "min_duration" << YAML::Value << Ns(l.moving.min_duration_ns);
  out << YAML::Key << "max_duration" << YAML::Value << Ns(l.moving.max_duration_ns);
  out << YAML::Key << "wander" << YAML::Value << Exact(l.queue.sigma);
  out << YAML::Key << "knot" << YAML::Value << Ns(l.queue.knot_ns);
  out << YAML::Key << "busy" << YAML::Value << Exact(l.queue.busy);
  out << YAML::Key << "tail" << YAML::Value << (l.queue.tail ? "true" : "false");
  out << YAML::EndMap;
  out << YAML::Key << "faults" << YAML::Value << YAML::BeginSeq;
  for (const Fault& f : c.faults) EmitFault(out, fleet, f);
  out << YAML::EndSeq;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace hostmesh::sim
