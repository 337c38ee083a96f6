#include "sim/flow_export.h"

#include <nlohmann/json.hpp>

#include "common/net/roce.h"
#include "sim/host_clock.h"
#include "sim/report.h"
#include "topology/inventory_writer.h"

namespace hostmesh::sim {
namespace {

std::string_view PathKindName(analyzer::app::PathConversion c) {
  switch (c) {
    case analyzer::app::PathConversion::kResolved:
      return "traced";
    case analyzer::app::PathConversion::kContinued:
      return "continued";
    case analyzer::app::PathConversion::kCutShort:
      return "cut_short";
    case analyzer::app::PathConversion::kUnresolved:
      break;
  }
  return "untraced";
}

}  // namespace

FlowExporter::FlowExporter(const Fleet& fleet, const Scenario& scenario,
                           const std::filesystem::path& dir)
    : fleet_(fleet),
      window_ns_(scenario.config.analysis.window.count()),
      grace_ns_(scenario.config.analysis.grace.count()),
      converter_(fleet.topology()) {
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

void FlowExporter::AddPath(std::uint32_t host, const ConvertedPath& path) {
  // What the analyzer's feed adds to its path table; an unresolved report
  // leaves the 5-tuple's previous path standing there too.
  if (path.conversion == analyzer::app::PathConversion::kUnresolved) return;
  const analysis::PathRecord& r = path.record;
  paths_[{host, r.src_nic, r.dst_nic, r.src_port}] = Path{path.conversion, r};
}

void FlowExporter::Add(std::int64_t slice_end_ns, const std::vector<HostOutput>& uploads) {
  for (std::uint32_t h = 0; h < uploads.size(); ++h) {
    const HostOutput* converted = &uploads[h];
    if (!converted->converted_ahead) {
      unconverted_.wire_paths = uploads[h].wire_paths;
      converter_.Convert(unconverted_);
      converted = &unconverted_;
    }
    for (std::size_t i = 0; i < converted->converted_count; ++i) {
      AddPath(h, converted->converted[i]);
    }
    for (const agent::ProbeResult& r : uploads[h].results) {
      const std::int64_t t = r.send_time_ns - kWallOffsetNs;
      const std::int64_t window = t - ((t % window_ns_) + window_ns_) % window_ns_;
      if (window < written_before_ns_) {
        ++late_;
        continue;
      }
      Flow& f = open_[{window, h, r.src_nic, r.dst_nic, r.src_port}];
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
  // As the analyzer: a window is judged once its end + grace has passed.
  Flush(slice_end_ns - grace_ns_);
}

void FlowExporter::Flush(std::int64_t judged_ns) {
  const auto& topo = fleet_.topology();
  const auto name = [&](LinkId l) {
    return l == topology::kNone || l >= topo.links().size() ? nlohmann::json(nullptr)
                                                            : nlohmann::json(topo.link(l).name);
  };
  for (auto it = open_.begin(); it != open_.end();) {
    const auto& [window, host, src, dst, sport] = it->first;
    if (window + window_ns_ > judged_ns) break;
    written_before_ns_ = std::max(written_before_ns_, window + window_ns_);
    const Flow& f = it->second;
    const FleetHost& fh = fleet_.hosts()[host];
    nlohmann::json path = nlohmann::json::array();
    auto kind = analyzer::app::PathConversion::kUnresolved;
    nlohmann::json candidates = nlohmann::json::array();
    if (const auto p = paths_.find({host, src, dst, sport}); p != paths_.end()) {
      kind = p->second.conversion;
      for (const LinkId l : p->second.record.links) path.push_back(name(l));
      for (const analysis::PathCandidate& c : p->second.record.candidates) {
        if (candidates.empty() || candidates.back()["position"] != c.position) {
          candidates.push_back({{"position", c.position}, {"links", nlohmann::json::array()}});
        }
        candidates.back()["links"].push_back(name(c.link));
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
        {"path_kind", PathKindName(kind)},
        {"sent", f.sent},
        {"lost", f.lost},
    };
    if (!candidates.empty()) line["candidates"] = std::move(candidates);
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
