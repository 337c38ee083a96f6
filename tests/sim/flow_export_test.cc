// The export for external localizers, field by field as sim/README.md documents
// it, from a real run of a tiny fleet with a lossy link.

#include "sim/flow_export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/sim/sim_test_util.h"
#include "topology/inventory_loader.h"

namespace hostmesh::sim {
namespace {

using testing::kSecond;
using testing::LinkNamed;

TEST(FlowExportTest, EveryProbeOnceWithItsPathLossAndLatency) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("hostmesh-sim-export-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  Scenario scenario;
  scenario.name = "export";
  SimConfig& c = scenario.config;
  c.shape = {4, 2, 2, 1, 2, 0};
  c.duration_ns = 60 * kSecond;
  const Fleet names(c.shape);
  Fault f;
  f.kind = FaultKind::kLinkLoss;
  f.link = LinkNamed(names, "p0r1-s00");
  f.rate = 1.0;
  f.start_ns = 20 * kSecond;
  f.end_ns = 60 * kSecond;
  c.faults = {f};

  Simulation sim(c);
  FlowExporter exporter(sim.fleet(), scenario, dir);
  std::uint64_t timeouts = 0;
  const SimResult result = sim.Run({}, [&](std::int64_t end, const std::vector<HostOutput>& up) {
    for (const HostOutput& h : up) {
      for (const agent::ProbeResult& r : h.results) timeouts += r.timeout;
    }
    exporter.Add(end, up);
  });
  exporter.Finish();

  // The fabric, readable by the inventory loader; the truth.
  const topology::Topology topo = topology::LoadInventoryFile(dir / "topology.yaml");
  EXPECT_EQ(topo.links().size(), sim.fleet().link_count());
  nlohmann::json faults;
  std::ifstream(dir / "faults.json") >> faults;
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0]["kind"], "link_loss");
  EXPECT_EQ(faults[0]["fault"], "link_loss p0r1-s00 100% 20s-60s");
  EXPECT_EQ(faults[0]["start_s"], 20.0);
  EXPECT_EQ(faults[0]["end_s"], 60.0);
  EXPECT_EQ(faults[0]["culprits"], nlohmann::json::array({"loss link p0r1-s00"}));

  std::ifstream flows(dir / "flows.jsonl");
  std::string line;
  std::uint64_t sent = 0, lost = 0, lines = 0, traced = 0, lost_on_bad = 0, cut_short = 0;
  std::uint64_t lost_untraced = 0, with_path = 0;
  std::set<double> windows;
  std::set<std::tuple<double, std::string, std::string, int>> keys;
  while (std::getline(flows, line)) {
    const auto j = nlohmann::json::parse(line);
    ++lines;
    for (const char* key : {"window_start_s", "src", "dst", "src_ip", "dst_ip", "src_port",
                            "dst_port", "protocol", "path", "path_kind", "sent", "lost"}) {
      ASSERT_TRUE(j.contains(key)) << key << " in " << line;
    }
    const double window = j["window_start_s"];
    windows.insert(window);
    EXPECT_TRUE(keys.emplace(window, j["src"], j["dst"], j["src_port"]).second) << line;
    EXPECT_EQ(j["dst_port"], 4791);
    EXPECT_EQ(j["protocol"], 17);
    const std::uint64_t s = j["sent"], l = j["lost"];
    EXPECT_GE(s, 1u);
    EXPECT_LE(l, s);
    sent += s;
    lost += l;
    if (l < s) {
      ASSERT_TRUE(j.contains("latency_ns")) << line;
      const auto& lat = j["latency_ns"];
      EXPECT_EQ(lat["samples"], s - l);
      EXPECT_LE(lat["min"].get<double>(), lat["mean"].get<double>());
      EXPECT_LE(lat["mean"].get<double>(), lat["max"].get<double>());
      EXPECT_GT(lat["min"].get<double>(), 1000.0);  // four hops and more
    } else {
      EXPECT_FALSE(j.contains("latency_ns")) << line;
    }
    // The traced path, NIC link to NIC link, by name (unknown while a trace
    // cut short by the dead link could not be resolved).
    const auto& path = j["path"];
    if (l > 0 && path.empty()) lost_untraced += l;
    if (!path.empty()) ++with_path;
    const std::string kind = j["path_kind"];
    if (kind == "cut_short") {
      // Cut short at the dead link: the analyzer held the way up to it and
      // every link the probes could have taken on; the dead one among them.
      ++cut_short;
      ASSERT_TRUE(j.contains("candidates")) << line;
      bool names_bad = false;
      for (const auto& at : j["candidates"]) {
        EXPECT_TRUE(path[at["position"].get<std::size_t>()].is_null()) << line;
        EXPECT_GE(at["links"].size(), 2u) << line;
        for (const auto& link : at["links"]) names_bad |= link == "p0r1-s00";
      }
      EXPECT_TRUE(names_bad) << line;
      EXPECT_GE(window, 20) << "only the dead link cuts traces short: " << line;
    } else {
      EXPECT_FALSE(j.contains("candidates")) << line;
    }
    if (path.size() != 4 || !path[1].is_string() || !path[2].is_string()) continue;
    ++traced;
    const std::string src = j["src"], dst = j["dst"];  // "h002/nic1"
    EXPECT_EQ(path[0], src.substr(0, 4) + "." + src.substr(5) + "-p0r" + src.substr(8));
    EXPECT_EQ(path[3], dst.substr(0, 4) + "." + dst.substr(5) + "-p0r" + dst.substr(8));
    const bool via_bad = path[1] == "p0r1-s00" || path[2] == "p0r1-s00";
    if (window >= 20 && via_bad) {
      EXPECT_EQ(l, s) << line;  // everything crossing the dead link is lost
      lost_on_bad += l;
    }
    if (!via_bad) {
      EXPECT_EQ(l, 0u) << line;
    }
  }
  EXPECT_EQ(exporter.late_results(), 0u);
  EXPECT_EQ(sent, result.probes);  // every probe once
  EXPECT_EQ(lost, timeouts);
  EXPECT_GT(lost_on_bad, 100u);
  // Lost probes are on flows whose path the analyzer held, whole or cut short.
  EXPECT_GT(cut_short, 0u);
  EXPECT_LE(lost_untraced * 20, lost) << lost_untraced << " of " << lost << " lost untraced";
  EXPECT_EQ(windows, (std::set<double>{0, 20, 40}));
  // Windows x hosts x NIC pairs x ports (the pools first rotate at 60 s).
  EXPECT_EQ(lines, 3u * 4 * 2 * 16);
  EXPECT_GT(with_path, lines * 9 / 10);
  EXPECT_GT(traced, lines * 3 / 4);  // the rest cut short at the dead link
  std::filesystem::remove_all(dir);
}

TEST(FlowExportTest, AWindowIsWrittenWhenTheAnalyzerJudgesItAndLaterResultsAreLate) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("hostmesh-sim-export-late-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  Scenario scenario;
  scenario.config.shape = {4, 2, 2, 1, 2, 0};
  scenario.config.analysis.window = std::chrono::seconds{20};
  scenario.config.analysis.grace = std::chrono::seconds{10};
  const Fleet fleet(scenario.config.shape);
  std::vector<HostOutput> uploads(fleet.hosts().size());
  for (HostOutput& u : uploads) u.converted_ahead = true;
  const auto sent_at = [&](std::int64_t t) {
    agent::ProbeResult r;
    r.src_nic = 0;
    r.dst_nic = 1;
    r.src_port = 49152;
    r.send_time_ns = kWallOffsetNs + t;
    r.timeout = true;
    return r;
  };
  const auto lines = [&] {
    std::ifstream in(dir / "flows.jsonl");
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  };
  FlowExporter exporter(fleet, scenario, dir);
  uploads[0].results = {sent_at(5 * kSecond)};
  exporter.Add(29 * kSecond, uploads);  // window 0-20 s is judged at 30 s
  uploads[0].results = {sent_at(15 * kSecond), sent_at(25 * kSecond)};
  exporter.Add(30 * kSecond, uploads);
  uploads[0].results = {sent_at(18 * kSecond)};  // after its window was judged
  exporter.Add(31 * kSecond, uploads);
  exporter.Finish();
  const std::vector<nlohmann::json> flows = lines();
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[0]["window_start_s"], 0.0);
  EXPECT_EQ(flows[0]["sent"], 2) << "what arrived by its end + grace";
  EXPECT_EQ(flows[0]["path_kind"], "untraced");
  EXPECT_EQ(flows[1]["window_start_s"], 20.0);
  EXPECT_EQ(exporter.late_results(), 1u);
  std::filesystem::remove_all(dir);
}

TEST(FlowExportTest, AnUnwritableFolderIsAClearError) {
  Scenario scenario;
  scenario.config.shape = {4, 2, 2, 1, 2, 0};
  const Fleet fleet(scenario.config.shape);
  EXPECT_THROW(FlowExporter(fleet, scenario, "/proc/hostmesh-sim-export"), std::exception);
}

}  // namespace
}  // namespace hostmesh::sim
