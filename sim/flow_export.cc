#include "sim/flow_export.h"

#include <nlohmann/json.hpp>

#include "common/net/roce.h"
#include "sim/host_clock.h"
#include "sim/report.h"
#include "topology/inventory_writer.h"

namespace hostmesh::sim {

FlowExporter::FlowExporter(const Fleet& fleet, const Scenario& scenario,
                           const std::filesystem::path& dir)
    : fleet_(fleet),
      window_ns_(scenario.config.analysis.window.count()),
      timeout_ns_(scenario.config.agent.probe.timeout.count()),
      resolver_(fleet.topology()) {
  std::filesystem::create_directories(dir);
  std::ofstream topo(dir / "topology.yaml");
  topo << topology::WriteInventoryYaml(topology::GenerateInventory(scenario.config.shape), {});
  nlohmann::json faults = nlohmann::json::array();
  for (const Fault& f : scenario.config.faults) {
    nlohmann::json truth = nlohmann::json::array();
    for (const ComponentKey k : TruthOf(fleet, f).components)
      truth.push_back(DescribeKey(fleet, k));
    faults.push_back({{"fault", DescribeFault(fleet, f)},
                      {"kind", FaultKindName(f.kind)},
                      {"start_s", ToSeconds(f.start_ns)},
                      {"end_s", ToSeconds(f.end_ns)},
                      {"culprits", truth}});
  }
  std::ofstream(dir / "faults.json") << faults.dump(1) << "\n";
  flows_.open(dir / "flows.jsonl");
  if (!topo || !flows_) throw std::runtime_error("cannot write the export to " + dir.string());
}

void FlowExporter::Add(std::int64_t slice_end_ns, const std::vector<HostOutput>& uploads) {
  for (std::uint32_t h = 0; h < uploads.size(); ++h) {
    for (const tracer::PathReport& p : uploads[h].paths) {
      std::vector<topology::Hop> hops;
      for (const auto& hop : p.hops) {
        hops.push_back(hop.address.IsZero() ? std::nullopt : std::optional(hop.address));
      }
      const topology::ResolvedPath r = resolver_.Resolve(p.tuple.src, p.tuple.dst, hops);
      if (r.status == topology::PathStatus::kInconsistent) continue;
      paths_[{h, p.src_nic, p.dst_nic, p.tuple.sport}] = r.links;
    }
    for (const agent::ProbeResult& r : uploads[h].results) {
      const std::int64_t t = r.send_time_ns - kWallOffsetNs;
      Flow& f = open_[{t - t % window_ns_, h, r.src_nic, r.dst_nic, r.src_port}];
      ++f.sent;
      if (r.timeout) {
        ++f.lost;
        continue;
      }
      if (r.nic_send_ns == 0 || r.nic_recv_ns == 0) continue;
      const std::int64_t lat = r.nic_recv_ns - r.nic_send_ns;
      f.lat_min = f.lat_n == 0 ? lat : std::min(f.lat_min, lat);
      f.lat_max = std::max(f.lat_max, lat);
      f.lat_sum += static_cast<double>(lat);
      ++f.lat_n;
    }
  }
  // A window is complete once its last probes have timed out.
  const std::int64_t complete = slice_end_ns - timeout_ns_ - 1'000'000'000;
  Flush(complete - complete % window_ns_ - window_ns_ + window_ns_);
}

void FlowExporter::Flush(std::int64_t before_window_ns) {
  const auto& topo = fleet_.topology();
  for (auto it = open_.begin(); it != open_.end();) {
    const auto& [window, host, src, dst, sport] = it->first;
    if (window + window_ns_ > before_window_ns) break;
    const Flow& f = it->second;
    const FleetHost& fh = fleet_.hosts()[host];
    nlohmann::json path = nlohmann::json::array();
    if (const auto p = paths_.find({host, src, dst, sport}); p != paths_.end()) {
      for (const LinkId l : p->second) {
        path.push_back(l == topology::kNone ? nlohmann::json(nullptr)
                                            : nlohmann::json(topo.link(l).name));
      }
    }
    nlohmann::json line = {
        {"window_start_s", ToSeconds(window)},
        {"src", fh.name + "/nic" + std::to_string(src)},
        {"dst", fh.name + "/nic" + std::to_string(dst)},
        {"src_ip", fh.nic_ips[src].ToString()},
        {"dst_ip", fh.nic_ips[dst].ToString()},
        {"src_port", sport},
        {"dst_port", net::kRoceV2Port},
        {"protocol", 17},
        {"path", path},
        {"sent", f.sent},
        {"lost", f.lost},
    };
    if (f.lat_n > 0) {
      line["latency_ns"] = {{"min", f.lat_min},
                            {"mean", f.lat_sum / static_cast<double>(f.lat_n)},
                            {"max", f.lat_max},
                            {"samples", f.lat_n}};
    }
    flows_ << line.dump() << "\n";
    it = open_.erase(it);
  }
}

void FlowExporter::Finish() {
  Flush(std::numeric_limits<std::int64_t>::max());
  flows_.flush();
}

}  // namespace hostmesh::sim
