// JSON of a hand-built window report, field by field, and the handlers over
// a fake snapshot through the router (no sockets).
#include "analyzer/api/render.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/api/api_handlers.h"
#include "analyzer/api/dashboard.h"
#include "analyzer/api/incident_page.h"
#include "analyzer/api/json_values.h"
#include "analyzer/api/render_evidence.h"
#include "common/base/clock.h"
#include "tests/analyzer/telemetry/telemetry_sample.h"

namespace hostmesh::analyzer::api {
namespace {

using analysis::WindowReport;

std::shared_ptr<ApiSnapshot> Snapshot() {
  auto s = std::make_shared<ApiSnapshot>();
  s->version = "0.1.0";
  s->started_ns = 1'000'000'000;
  s->window_ns = 20'000'000'000;
  s->grace_ns = 10'000'000'000;
  s->inventory_loaded = true;
  s->topology_source = "inventory";
  s->host_table = std::make_shared<const std::vector<HostInfo>>(
      std::vector<HostInfo>{{"h0", "h0", {{"nic0", "10.0.0.1", 0}, {"nic1", "10.0.1.1", 1}}}});
  InventoryView inventory;
  inventory.devices = {{"h0", "host", 0, -1}, {"r0", "rail", 0, 0}, {"s0", "spine", -1, -1}};
  inventory.links = {
      {"h0:nic0 - r0:p1", {"h0", "nic0", "10.0.0.1", 0}, {"r0", "p1", "10.0.0.0", 1}, "nic"},
      {"r0:up0 - s0:p0", {"r0", "up0", "10.9.0.1", 1}, {"s0", "p0", "10.9.0.0", 2}, "fabric"}};
  s->inventory = std::make_shared<const InventoryView>(std::move(inventory));
  auto r = std::make_shared<WindowReport>();
  r->start_ns = 20'000'000'000;
  r->end_ns = 40'000'000'000;
  r->results = 100;
  r->present_hosts = {0};
  analysis::RnicStatus rnic;
  rnic.host = 0;
  rnic.nic = 1;
  rnic.probes = 50;
  rnic.timeouts = 50;
  rnic.probes_to = 25;
  rnic.timeouts_to = 25;
  rnic.send_failures = 75;
  rnic.paper_anomalous = true;
  rnic.state = analysis::RnicState::kDown;
  rnic.anomalous = true;
  rnic.anomalous_until_ns = 100'000'000'000;
  rnic.loss = 1;
  r->rnics = {rnic};
  r->sla.cluster.probes = 100;
  r->sla.cluster.timeouts = 50;
  r->sla.cluster.rnic_drops = 50;
  r->sla.cluster.rnic_drop_rate = 0.5;
  r->sla.cluster.latency = {50, 5000, 6000, 7000, 7500};
  r->sla.rails = {{1, r->sla.cluster}};
  analysis::LinkRank rank;
  rank.link = 1;
  rank.failures = 8;
  rank.good = 24;
  rank.loss = 0.25;
  rank.score = 2;
  rank.culprit = true;
  r->loss.links = {rank, analysis::LinkRank{0, 0, 10, 0, 0, 0, false}};
  analysis::LinkRank vote = rank;
  vote.votes = 8;
  r->loss.baseline = {vote};
  s->report = r;
  analysis::Incident inc;
  inc.id = 1;
  inc.kind = analysis::IncidentKind::kRnicDown;
  inc.suspect = {analysis::Component::Kind::kRnic, analysis::kUnknown, 0, 1};
  inc.summary = "host 0 nic 1";
  inc.confidence = 0.9;
  inc.evidence.failures = 50;
  inc.evidence.first_seen_ns = 20'000'000'000;
  inc.evidence.last_seen_ns = 40'000'000'000;
  inc.evidence.windows = 1;
  inc.diagnosis = {"flapping",
                   "flapping: probes lost in bursts, or link_downed, carrier changes or PHY "
                   "link-down events rose with probe loss and the link came back",
                   "RNIC h0 nic1 losing 100.0% of probes; link_downed +2 in the window",
                   {{"carrier_changes", 4}, {"link_downed", 2}},
                   20'000'000'000};
  s->incidents = {inc};
  return s;
}

TEST(JsonValues, EscapesAndWritesNumbersAsBefore) {
  Json j = Json::object();
  j["a\"b"] = "x\n\x01";
  Json& n = j["n"] = Json::array({-1, JsonNumber(0.5)});
  for (double v : {std::numeric_limits<double>::quiet_NaN(), 400000.0, -0.0, 2.5e6, 1e20, 1e-7}) {
    n.push_back(JsonNumber(v));
  }
  EXPECT_EQ(DumpJson(j), R"({"a\"b":"x\n\u0001","n":[-1,0.5,null,400000,0,2500000,1e+20,1e-07]})");
}

TEST(JsonValues, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  Json j = Json::object();
  j["host"] =
      "h\xff"
      "0 caf\xc3\xa9";
  EXPECT_EQ(DumpJson(j),
            "{\"host\":\"h\xef\xbf\xbd"
            "0 caf\xc3\xa9\"}");
}

TEST(Render, RnicsHaveEveryFieldAndThePaperVerdictBesideOurs) {
  EXPECT_EQ(RenderRnics(*Snapshot()),
            R"({"window":{"start_ns":20000000000,"end_ns":40000000000,"results":100},)"
            R"("telemetry":"not collected",)"
            R"("rnics":[{"host":"h0","nic":1,"nic_name":"nic1","ip":"10.0.1.1","rail":1,)"
            R"("state":"down","anomalous":true,"paper_anomalous":true,)"
            R"("anomalous_until_ns":100000000000,"loss":1,"probes":50,"timeouts":50,)"
            R"("probes_to":25,"timeouts_to":25,"send_failures":75,"telemetry":null}]})");
}

// The window's counter deltas of agent h0's NICs: nic1's moved, nic0 is not
// in the report, another agent's nic1 is not this RNIC.
TelemetryAnswer WindowDeltas() {
  TelemetryAnswer answer;
  for (const auto& [agent, nic, id] :
       {std::tuple<const char*, const char*, std::uint32_t>{"h0", "nic0", 0},
        {"h0", "nic1", 1},
        {"h9", "nic1", 1}}) {
    telemetry::NicTelemetryRow row{agent, nic, {}};
    const std::uint64_t moved = std::string(agent) == "h0" && id == 1 ? 4210 : 0;
    row.totals.Add(telemetry::testing::Sample(
        id, 20'000'000'000, 30'000'000'000,
        {{v1::NIC_COUNTER_SYMBOL_ERROR, moved}, {v1::NIC_COUNTER_LINK_DOWNED, moved ? 2u : 0u}}));
    answer.rows.push_back(row);
  }
  return answer;
}

TEST(Render, RnicsShowTheWindowsCounterDeltasBesideTheVerdict) {
  const TelemetryAnswer deltas = WindowDeltas();
  EXPECT_EQ(RenderRnics(*Snapshot(), &deltas),
            R"({"window":{"start_ns":20000000000,"end_ns":40000000000,"results":100},)"
            R"("telemetry":"window",)"
            R"("rnics":[{"host":"h0","nic":1,"nic_name":"nic1","ip":"10.0.1.1","rail":1,)"
            R"("state":"down","anomalous":true,"paper_anomalous":true,)"
            R"("anomalous_until_ns":100000000000,"loss":1,"probes":50,"timeouts":50,)"
            R"("probes_to":25,"timeouts_to":25,"send_failures":75,)"
            R"("telemetry":{"samples":1,"start_ns":20000000000,"end_ns":30000000000,)"
            R"("counters":{"link_downed":2,"symbol_error":4210},)"
            R"("pfc_pause_received":{},"pfc_pause_sent":{},"port_state":4,"phys_state":5,)"
            R"("carrier":"up","pcie":null,"read_failures":0,"counter_resets":0}}]})");
  // An RNIC whose agent sent no telemetry in the window, and a store that failed.
  TelemetryAnswer none;
  EXPECT_NE(RenderRnics(*Snapshot(), &none).find(R"("send_failures":75,"telemetry":null)"),
            std::string::npos);
  TelemetryAnswer failed;
  failed.error = "IO error: disk";
  const std::string body = RenderRnics(*Snapshot(), &failed);
  EXPECT_NE(body.find(R"("telemetry":"store: IO error: disk","rnics":[{"host":"h0")"),
            std::string::npos)
      << body;
}

TEST(Render, LinksRankedWithVotesEndsAndNames) {
  EXPECT_EQ(RenderLinks(*Snapshot(), true),
            R"({"window":{"start_ns":20000000000,"end_ns":40000000000,"results":100},)"
            R"("kind":"loss","method":"greedy loss-weighted inference; votes: paper Algorithm 1",)"
            R"("links":[{"rank":1,"link":1,"name":"r0:up0 - s0:p0","ends":[)"
            R"({"ip":"10.9.0.1","device":"r0","port":"up0"},)"
            R"({"ip":"10.9.0.0","device":"s0","port":"p0"}],)"
            R"("culprit":true,"loss":0.25,"score":2,"failures":8,"good":24,"votes":8}]})");
  // Without the filter the healthy link follows, with no votes.
  EXPECT_NE(RenderLinks(*Snapshot(), false).find(R"("rank":2,"link":0,"name":"h0:nic0 - r0:p1")"),
            std::string::npos);
}

TEST(Render, SlaClusterRailsHosts) {
  const std::string sla = RenderSla(*Snapshot());
  EXPECT_NE(sla.find(R"("cluster":{"probes":100,"timeouts":50,"rnic_drops":50,"network_drops":0,)"
                     R"("rnic_drop_rate":0.5,"network_drop_rate":0,)"
                     R"("latency_ns":{"count":50,"p50":5000,"p90":6000,"p99":7000,"p999":7500},)"
                     R"("processing_ns":{"count":0,"p50":0,"p90":0,"p99":0,"p999":0}})"),
            std::string::npos)
      << sla;
  EXPECT_NE(sla.find(R"("rails":[{"rail":1,"probes":100)"), std::string::npos) << sla;
  EXPECT_NE(sla.find(R"("hosts":[])"), std::string::npos) << sla;
}

TEST(Render, IncidentsOpenWithNamedSuspect) {
  EXPECT_EQ(
      RenderIncidents(*Snapshot()),
      R"j({"open":[{"id":1,"kind":"rnic_down","summary":"RNIC h0 nic1 (10.0.1.1, rail 1) down",)j"
      R"("suspect":{"host":"h0","nic":1,"nic_name":"nic1","ip":"10.0.1.1","rail":1},)"
      R"("confidence":0.9,"open":true,"first_seen_ns":20000000000,)"
      R"("last_seen_ns":40000000000,"resolved_ns":0,"windows":1,)"
      R"("evidence":{"failures":50,"good":0,"votes":0,"loss":0,"processing_p90_ns":0,)"
      R"("fleet_median_p90_ns":0,"example_paths":[],"links":[]},)"
      R"("diagnosis":{"type":"flapping","rule":"flapping: probes lost in bursts, or link_downed, )"
      R"(carrier changes or PHY link-down events rose with probe loss and the link came back",)"
      R"("evidence":"RNIC h0 nic1 losing 100.0% of probes; link_downed +2 in the window",)"
      R"("counters":{"carrier_changes":4,"link_downed":2},"window_start_ns":20000000000}}],)"
      R"("resolved":[]})");
}

TEST(Render, StatusLagAndAgents) {
  EXPECT_EQ(RenderStatus(*Snapshot(), 45'000'000'000),
            R"({"version":"0.1.0","uptime_seconds":44,"window_seconds":20,"grace_seconds":10,)"
            R"("inventory_loaded":true,"topology_source":"inventory","topology_version":0,)"
            R"("agents_known":1,"agents_present":1,"hosts_shedding":[],)"
            R"("window":{"start_ns":20000000000,"end_ns":40000000000,"results":100},)"
            R"("window_lag_seconds":5,"open_incidents":1})");
}

// A host whose agent sheds load is named with its rate and the agent's reason,
// in the status and beside the coverage (what it did not probe is no hole).
TEST(Render, HostsSheddingLoadInStatusAndCoverage) {
  auto s = Snapshot();
  auto r = std::make_shared<WindowReport>(*s->report);
  analysis::SheddingHost h;
  h.host = 0;
  h.rate_fraction = 0.25;
  h.lowest_fraction = 0.1;
  h.since_ns = 35'000'000'000;
  h.cause = "cgroup cpu throttled 97%";
  r->shedding = {h};
  s->report = r;
  constexpr const char* kShedding =
      R"("hosts_shedding":[{"host":"h0","rate_fraction":0.25,"lowest_fraction":0.1,)"
      R"("since_ns":35000000000,"cause":"cgroup cpu throttled 97%"}])";
  EXPECT_NE(RenderStatus(*s, 45'000'000'000).find(kShedding), std::string::npos);
  EXPECT_NE(RenderCoverage(*s).find(kShedding), std::string::npos);
}

constexpr const char* kWindow =
    R"({"window":{"start_ns":20000000000,"end_ns":40000000000,"results":100},)";
constexpr const char* kLink1 =
    R"("link":1,"name":"r0:up0 - s0:p0","ends":[{"ip":"10.9.0.1","device":"r0","port":"up0"},)"
    R"({"ip":"10.9.0.0","device":"s0","port":"p0"}])";

TEST(Render, LatencyHotspotsRankTheSlowProbeLocalization) {
  auto s = Snapshot();
  auto r = std::make_shared<WindowReport>(*s->report);
  r->slow_threshold_ns = 50'000;
  r->latency.links = {analysis::LinkRank{1, 30, 10, 0.75, 4.5, 0, true},
                      analysis::LinkRank{0, 2, 38, 0.05, 0.1, 0, false}};
  r->latency.baseline = {analysis::LinkRank{1, 30, 10, 0, 0, 32, true},
                         analysis::LinkRank{0, 2, 38, 0, 0, 32, false}};
  s->report = r;
  EXPECT_EQ(RenderLinks(*s, true, LinkRanking::kLatency),
            std::string(kWindow) +
                R"("kind":"latency","method":"greedy inference over slow probes (latency above )"
                R"(slow_threshold_ns); votes: paper Algorithm 1 over slow probes",)"
                R"("slow_threshold_ns":50000,"links":[{"rank":1,)" +
                kLink1 +
                R"(,"culprit":true,"loss":0.75,"score":4.5,"failures":30,"good":10,"votes":32}]})");
  // The loss ranking of the same snapshot is untouched by the slow probes.
  EXPECT_NE(RenderLinks(*s, true).find(R"("failures":8,"good":24,"votes":8)"), std::string::npos);
  // Without the filter, the healthy link follows with its own paper votes.
  EXPECT_NE(
      RenderLinks(*s, false, LinkRanking::kLatency)
          .find(R"("culprit":false,"loss":0.05,"score":0.1,"failures":2,"good":38,"votes":32})"),
      std::string::npos);
}

// Rail switch r0 with both spine uplinks blamed is the suspect; r1 has the
// most paper votes (it carried the failed paths) but no blamed link.
std::shared_ptr<ApiSnapshot> SwitchSnapshot() {
  auto s = Snapshot();
  InventoryView inventory = *s->inventory;
  inventory.devices.push_back({"s1", "spine", -1, -1});
  inventory.devices.push_back({"r1", "rail", 0, 1});
  inventory.links.push_back(
      {"r0:up1 - s1:p0", {"r0", "up1", "10.9.1.1", 1}, {"s1", "p0", "10.9.1.0", 3}, "fabric"});
  s->inventory = std::make_shared<const InventoryView>(std::move(inventory));
  auto r = std::make_shared<WindowReport>(*s->report);
  r->loss.links = {analysis::LinkRank{1, 8, 24, 0.25, 2, 8, true},
                   analysis::LinkRank{2, 4, 28, 0.125, 1, 4, true},
                   analysis::LinkRank{0, 1, 9, 0.1, 0.1, 1, false}};
  r->loss.switches = {{1, 12, 2}, {2, 8, 1}, {3, 4, 1}, {4, 20, 0}};
  r->loss.culprit_switches = {1};
  s->report = r;
  return s;
}

TEST(Render, SwitchesByBlamedLinksWithEvidenceAndPaperRankBeside) {
  const std::string method =
      R"("method":"links blamed by the greedy loss-weighted inference per switch (two or more: )"
      R"(the switch is the suspect); votes: paper Algorithm 1",)";
  const std::string link2 =
      R"({"link":2,"name":"r0:up1 - s1:p0","ends":[{"ip":"10.9.1.1","device":"r0","port":"up1"},)"
      R"({"ip":"10.9.1.0","device":"s1","port":"p0"}],"loss":0.125,"failures":4,"good":28,)"
      R"("votes":4})";
  const std::string link1 =
      std::string("{") + kLink1 + R"(,"loss":0.25,"failures":8,"good":24,"votes":8})";
  const std::string r0 =
      R"({"rank":1,"switch":1,"name":"r0","tier":"rail","pod":0,"rail":0,"culprit":true,)"
      R"("routed_around":false,"culprit_links":2,"votes":12,"paper_rank":2,"links":[)" +
      link1 + "," + link2 + "]}";
  EXPECT_EQ(
      RenderSwitches(*SwitchSnapshot(), false),
      std::string(kWindow) + method + R"("switches":[)" + r0 +
          R"(,{"rank":2,"switch":2,"name":"s0","tier":"spine","pod":-1,"rail":-1,)"
          R"("culprit":false,"routed_around":false,"culprit_links":1,"votes":8,"paper_rank":3,"links":[)" +
          link1 +
          R"(]},{"rank":3,"switch":3,"name":"s1","tier":"spine","pod":-1,"rail":-1,)"
          R"("culprit":false,"routed_around":false,"culprit_links":1,"votes":4,"paper_rank":4,"links":[)" +
          link2 +
          R"(]},{"rank":4,"switch":4,"name":"r1","tier":"rail","pod":0,"rail":1,)"
          R"("culprit":false,"routed_around":false,"culprit_links":0,"votes":20,"paper_rank":1,"links":[]}]})");
  EXPECT_EQ(RenderSwitches(*SwitchSnapshot(), true),
            std::string(kWindow) + method + R"("switches":[)" + r0 + "]}");
}

TEST(Render, SwitchesWithoutVotesHaveNoPaperRankAndUnknownIdsStillRender) {
  auto s = SwitchSnapshot();
  auto r = std::make_shared<WindowReport>(*s->report);
  r->loss.switches = {{9, 0, 1}};
  r->loss.culprit_switches = {};
  s->report = r;
  EXPECT_EQ(
      RenderSwitches(*s, false).substr(std::string(kWindow).size()),
      R"("method":"links blamed by the greedy loss-weighted inference per switch (two or )"
      R"(more: the switch is the suspect); votes: paper Algorithm 1",)"
      R"("switches":[{"rank":1,"switch":9,"name":"switch 9","tier":"","pod":-1,"rail":-1,)"
      R"("culprit":false,"routed_around":false,"culprit_links":1,"votes":0,"paper_rank":null,"links":[]}]})");
  EXPECT_EQ(RenderSwitches(ApiSnapshot{}, false),
            R"({"window":null,"method":"links blamed by the greedy loss-weighted inference per )"
            R"(switch (two or more: the switch is the suspect); votes: paper Algorithm 1",)"
            R"("switches":[]})");
}

TEST(Render, CoverageCountsAndNamesTheNeverCrossedLinks) {
  auto s = Snapshot();
  auto r = std::make_shared<WindowReport>(*s->report);
  r->coverage.crossed = {0};
  r->coverage.never_crossed = {1};
  r->coverage.fraction = 0.5;
  r->coverage.traced_probes = 40;
  r->coverage.untraced_probes = 60;
  s->report = r;
  EXPECT_EQ(
      RenderCoverage(*s),
      std::string(kWindow) +
          R"("links_total":2,"crossed_count":1,"never_crossed_count":1,"fraction":0.5,)"
          R"("traced_probes":40,"untraced_probes":60,"hosts_shedding":[],"never_crossed":[{)" +
          kLink1 + R"(}],"crossed":[{"link":0,"name":"h0:nic0 - r0:p1"}]})");
  // Without an inventory: ids only, no ends.
  InventoryView no_links = *s->inventory;
  no_links.links.clear();
  s->inventory = std::make_shared<const InventoryView>(std::move(no_links));
  EXPECT_NE(RenderCoverage(*s).find(R"("never_crossed":[{"link":1,"name":"link 1","ends":null}],)"
                                    R"("crossed":[{"link":0,"name":"link 0"}]})"),
            std::string::npos);
  EXPECT_EQ(RenderCoverage(ApiSnapshot{}),
            R"({"window":null,"links_total":0,"crossed_count":0,"never_crossed_count":0,)"
            R"("fraction":0,"traced_probes":0,"untraced_probes":0,"hosts_shedding":[],)"
            R"("never_crossed":[],"crossed":[]})");
}

TEST(Render, TopologyDevicesWithTierRailPodAndLinksWithBothEnds) {
  EXPECT_EQ(RenderTopology(*Snapshot()),
            R"({"source":"inventory","version":0,"device_count":3,"link_count":2,"devices":[)"
            R"({"id":0,"name":"h0","tier":"host","pod":0,"rail":-1},)"
            R"({"id":1,"name":"r0","tier":"rail","pod":0,"rail":0},)"
            R"({"id":2,"name":"s0","tier":"spine","pod":-1,"rail":-1}],"links":[)"
            R"({"link":0,"name":"h0:nic0 - r0:p1","ends":[)"
            R"({"ip":"10.0.0.1","device":"h0","port":"nic0"},)"
            R"({"ip":"10.0.0.0","device":"r0","port":"p1"}],"kind":"nic"},{)" +
                std::string(kLink1) + R"(,"kind":"fabric"}]})");
  EXPECT_EQ(RenderError("no \"inventory\""), R"({"error":"no \"inventory\""})");
}

TEST(Render, ProcessingIncidentCarriesItsDelayAgainstTheFleet) {
  auto s = Snapshot();
  analysis::Incident inc;
  inc.id = 3;
  inc.kind = analysis::IncidentKind::kHostProcessing;
  inc.suspect.host = 0;
  inc.summary = "host 0";
  inc.confidence = 1;
  inc.evidence.processing_p90_ns = 400'000;
  inc.evidence.fleet_median_p90_ns = 5000;
  s->incidents = {inc};
  EXPECT_EQ(RenderIncidents(*s),
            R"({"open":[{"id":3,"kind":"host_processing_delay",)"
            R"j("summary":"host h0 processing delay p90 400 us (fleet median 5 us)",)j"
            R"("suspect":{"host":"h0"},"confidence":1,"open":true,"first_seen_ns":0,)"
            R"("last_seen_ns":0,"resolved_ns":0,"windows":0,"evidence":{"failures":0,)"
            R"("good":0,"votes":0,"loss":0,"processing_p90_ns":400000,)"
            R"("fleet_median_p90_ns":5000,"example_paths":[],"links":[]},)"
            R"("diagnosis":{"type":"unclassified","rule":"","evidence":"","counters":{},)"
            R"("window_start_ns":0}}],"resolved":[]})");
}

TEST(Render, SwitchIncidentNamesTheSwitch) {
  auto s = SwitchSnapshot();
  analysis::Incident inc;
  inc.id = 2;
  inc.kind = analysis::IncidentKind::kSwitch;
  inc.suspect = {analysis::Component::Kind::kLink, 1, 0, 0};
  inc.summary = "switch r0";
  inc.confidence = 0.5;
  inc.open = false;
  inc.resolved_ns = 60'000'000'000;
  inc.evidence.links = {1, 2};
  inc.evidence.example_paths = {{0, 1}};
  s->incidents = {inc};
  EXPECT_EQ(RenderIncidents(*s),
            R"({"open":[],"resolved":[{"id":2,"kind":"switch",)"
            R"("summary":"switch r0 losing 0.0% of the probes through it",)"
            R"("suspect":{"switch":1,"name":"r0","tier":"rail","pod":0,"rail":0},)"
            R"("confidence":0.5,"open":false,"first_seen_ns":0,"last_seen_ns":0,)"
            R"("resolved_ns":60000000000,"windows":0,"evidence":{"failures":0,"good":0,)"
            R"("votes":0,"loss":0,"processing_p90_ns":0,"fleet_median_p90_ns":0,)"
            R"("example_paths":[[0,1]],"links":[{"link":1,"name":"r0:up0 - s0:p0"},)"
            R"({"link":2,"name":"r0:up1 - s1:p0"}]},)"
            R"("diagnosis":{"type":"unclassified","rule":"","evidence":"","counters":{},)"
            R"("window_start_ns":0}}]})");
}

TEST(Render, ALinkRoutingAvoidsIsSaidToBeDownNotLossy) {
  auto s = SwitchSnapshot();
  analysis::Incident inc;
  inc.kind = analysis::IncidentKind::kLinkLoss;
  inc.suspect = {analysis::Component::Kind::kLink, 1, 0, 0};
  inc.evidence.loss = 1.0;
  inc.evidence.routed_around = true;
  inc.open = true;
  s->incidents = {inc};
  EXPECT_NE(
      RenderIncidents(*s).find(
          R"x("summary":"link r0:up0 - s0:p0 down: routing avoids it (no new path crosses it)")x"),
      std::string::npos)
      << RenderIncidents(*s);
}

TEST(Render, ASwitchRoutingAvoidsIsDownAndItsMergedLinkSaysWhereItWent) {
  auto s = SwitchSnapshot();
  analysis::Incident spine;
  spine.id = 7;
  spine.kind = analysis::IncidentKind::kSwitch;
  spine.suspect = {analysis::Component::Kind::kLink, 1, 0, 0};  // switch id in link
  spine.evidence.loss = 1.0;
  spine.evidence.routed_around = true;
  analysis::Incident link;
  link.id = 6;
  link.kind = analysis::IncidentKind::kLinkLoss;
  link.suspect = {analysis::Component::Kind::kLink, 1, 0, 0};
  link.open = false;
  link.merged_into = 7;
  s->incidents = {link, spine};
  const std::string out = RenderIncidents(*s);
  EXPECT_NE(out.find(R"x("summary":"switch r0 down: routing avoids it (no new path crosses any )x"
                     R"x(of its links)")x"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"("merged_into":7)"), std::string::npos) << out;
  EXPECT_EQ(out.find(R"("merged_into":0)"), std::string::npos) << "only where merged: " << out;
}

TEST(ApiHandlers, ServeTheSnapshotAsJsonAndEmptyBeforeTheFirst) {
  VirtualClock clock;
  std::shared_ptr<const ApiSnapshot> current;
  http::Router router;
  MountApi(
      router, [&] { return current; }, clock);
  const http::Request rnics{"GET", "/api/v1/rnics", ""};
  http::Response empty = router.Dispatch(rnics);
  EXPECT_EQ(empty.status, 200);
  EXPECT_EQ(empty.content_type, "application/json");
  EXPECT_EQ(empty.body, "{\"window\":null,\"telemetry\":\"not collected\",\"rnics\":[]}\n");

  current = Snapshot();
  EXPECT_NE(router.Dispatch(rnics).body.find(R"("state":"down")"), std::string::npos);
  const http::Response links = router.Dispatch({"GET", "/api/v1/links", "suspicious"});
  EXPECT_EQ(links.body.find(R"("rank":2)"), std::string::npos) << links.body;
  for (const char* path : {"/api/v1/status", "/api/v1/incidents", "/api/v1/sla"}) {
    const http::Response r = router.Dispatch({"GET", path, ""});
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.body.front(), '{') << path;
  }
  EXPECT_EQ(router.Dispatch({"GET", "/api/v1/nope", ""}).status, 404);
}

TEST(ApiHandlers, RnicsReadTheJudgedWindowsTelemetry) {
  VirtualClock clock;
  std::shared_ptr<const ApiSnapshot> current;
  std::vector<TelemetryQuery> seen;
  TelemetryAnswer answer = WindowDeltas();
  http::Router router;
  MountApi(
      router, [&] { return current; }, clock, {},
      [&](const TelemetryQuery& q) {
        seen.push_back(q);
        return answer;
      });
  const http::Request rnics{"GET", "/api/v1/rnics", ""};
  // No window judged yet: nothing to read.
  EXPECT_EQ(router.Dispatch(rnics).body,
            "{\"window\":null,\"telemetry\":\"window\",\"rnics\":[]}\n");
  EXPECT_TRUE(seen.empty());

  current = Snapshot();
  const http::Response r = router.Dispatch(rnics);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, RenderRnics(*current, &answer) + "\n");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].from_ns, 20'000'000'000);  // the report's window
  EXPECT_EQ(seen[0].to_ns, 40'000'000'000);
  EXPECT_TRUE(seen[0].agent_id.empty());
  EXPECT_GE(seen[0].limit, 1u << 20);  // every NIC: a missing row would read "no telemetry"

  answer.error = "IO error: disk";  // the verdicts are still served
  const http::Response failed = router.Dispatch(rnics);
  EXPECT_EQ(failed.status, 200);
  EXPECT_NE(failed.body.find(R"("state":"down")"), std::string::npos);
  EXPECT_NE(failed.body.find(R"("telemetry":"store: IO error: disk")"), std::string::npos);
}

TEST(ApiHandlers, LinksKindSwitchesCoverageAndTopology) {
  VirtualClock clock;
  std::shared_ptr<const ApiSnapshot> current;
  http::Router router;
  MountApi(
      router, [&] { return current; }, clock);
  // No inventory and nothing learned yet: topology is a JSON 404, the rest answers empty.
  const http::Response none = router.Dispatch({"GET", "/api/v1/topology", ""});
  EXPECT_EQ(none.status, 404);
  EXPECT_EQ(none.content_type, "application/json");
  EXPECT_EQ(none.body,
            "{\"error\":\"no topology yet: no inventory loaded and nothing learned from "
            "traceroutes so far\"}\n");
  EXPECT_EQ(router.Dispatch({"GET", "/api/v1/switches", ""}).body,
            RenderSwitches(ApiSnapshot{}, false) + "\n");
  EXPECT_EQ(router.Dispatch({"GET", "/api/v1/coverage", ""}).body,
            RenderCoverage(ApiSnapshot{}) + "\n");

  current = SwitchSnapshot();
  const http::Response topology = router.Dispatch({"GET", "/api/v1/topology", ""});
  EXPECT_EQ(topology.status, 200);
  EXPECT_EQ(topology.body, RenderTopology(*current) + "\n");
  EXPECT_EQ(router.Dispatch({"GET", "/api/v1/switches", "suspicious"}).body,
            RenderSwitches(*current, true) + "\n");
  EXPECT_EQ(router.Dispatch({"GET", "/api/v1/switches", ""}).body,
            RenderSwitches(*current, false) + "\n");
  EXPECT_EQ(router.Dispatch({"GET", "/api/v1/coverage", ""}).body, RenderCoverage(*current) + "\n");
  EXPECT_EQ(router.Dispatch({"GET", "/api/v1/links", "kind=latency&suspicious"}).body,
            RenderLinks(*current, true, LinkRanking::kLatency) + "\n");
  EXPECT_EQ(router.Dispatch({"GET", "/api/v1/links", "kind=loss"}).body,
            RenderLinks(*current, false, LinkRanking::kLoss) + "\n");
  const http::Response bad = router.Dispatch({"GET", "/api/v1/links", "kind=jitter"});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.content_type, "application/json");
  EXPECT_EQ(bad.body, "{\"error\":\"kind must be loss or latency\"}\n");
}

TEST(ApiHandlers, OnCallPageIsSelfContainedHtmlThatPollsTheApi) {
  VirtualClock clock;
  http::Router router;
  MountApi(
      router, [] { return std::shared_ptr<const ApiSnapshot>(); }, clock);
  const http::Response page = router.Dispatch({"GET", "/", ""});
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(page.body, DashboardHtml());
  EXPECT_EQ(page.body.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.body.find("</html>"), std::string::npos);
  for (const char* path :
       {"\"api/v1/status\"", "\"api/v1/rnics\"", "\"api/v1/links?suspicious\"",
        "\"api/v1/links?kind=latency&suspicious\"", "\"api/v1/incidents\"", "\"api/v1/sla\""}) {
    EXPECT_NE(page.body.find(path), std::string::npos) << path;
  }
  EXPECT_NE(page.body.find("PERIOD_MS = 10000"), std::string::npos);
  EXPECT_NE(page.body.find("analyzer unreachable"), std::string::npos);
  // Self-contained: no external assets, and the policy forbids loading any.
  for (const char* external : {"http://", "https://", "<link", "src=", "@import", "url("}) {
    EXPECT_EQ(page.body.find(external), std::string::npos) << external;
  }
  EXPECT_EQ(page.body.find("innerHTML"), std::string::npos) << "API text must not become HTML";
  const auto csp = std::find_if(page.headers.begin(), page.headers.end(),
                                [](const auto& h) { return h.first == "Content-Security-Policy"; });
  ASSERT_NE(csp, page.headers.end());
  EXPECT_NE(csp->second.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(csp->second.find("connect-src 'self'"), std::string::npos);
  EXPECT_EQ(router.Dispatch({"POST", "/", ""}).status, 405);
}

TEST(ApiHandlers, AnIncidentsPageIsSelfContainedAndReadsItsIncidentAndEvidence) {
  VirtualClock clock;
  http::Router router;
  MountApi(
      router, [] { return std::shared_ptr<const ApiSnapshot>(); }, clock);
  const http::Response page = router.Dispatch({"GET", "/incidents/12", ""});
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(page.body, IncidentPageHtml());
  EXPECT_NE(page.body.find("\"../api/v1/incidents/\""), std::string::npos);
  EXPECT_NE(page.body.find("\"/evidence\""), std::string::npos);
  for (const char* section : {"id=\"timeline\"", "id=\"groups\"", "id=\"paths\"", "id=\"verdicts\"",
                              "id=\"counters\"", "id=\"flight\""}) {
    EXPECT_NE(page.body.find(section), std::string::npos) << section;
  }
  // Self-contained: its one URI is SVG's namespace name, which loads nothing.
  std::string body = page.body;
  for (std::size_t at; (at = body.find("http://www.w3.org/2000/svg")) != std::string::npos;) {
    body.erase(at, 26);
  }
  for (const char* external : {"http://", "https://", "<link", "src=", "@import", "url("}) {
    EXPECT_EQ(body.find(external), std::string::npos) << external;
  }
  EXPECT_EQ(body.find("innerHTML"), std::string::npos) << "API text must not become HTML";
  const auto csp = std::find_if(page.headers.begin(), page.headers.end(),
                                [](const auto& h) { return h.first == "Content-Security-Policy"; });
  ASSERT_NE(csp, page.headers.end());
  EXPECT_EQ(csp->second, kDashboardCsp);
  for (const char* bad :
       {"/incidents/", "/incidents/0", "/incidents/x1", "/incidents/12/evidence"}) {
    EXPECT_EQ(router.Dispatch({"GET", bad, ""}).status, 404) << bad;
  }
  // The on-call page links each incident to it.
  EXPECT_NE(DashboardHtml().find("\"incidents/\" + Number(id)"), std::string::npos);
}

TEST(ApiHandlers, IncidentPathsAreAnIdAndOptionallyItsEvidence) {
  EXPECT_EQ(ParseIncidentPath("12")->id, 12u);
  EXPECT_FALSE(ParseIncidentPath("12")->evidence);
  EXPECT_TRUE(ParseIncidentPath("7/evidence")->evidence);
  for (const char* bad :
       {"", "0", "012", "-1", "1x", "1/", "1/evidence/", "1/paths", "99999999999999999999"}) {
    EXPECT_FALSE(ParseIncidentPath(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace hostmesh::analyzer::api

namespace hostmesh::analyzer::api {
namespace {

TEST(Render, DisagreementsWithTheInventoryByPlaceAndByKind) {
  auto s = Snapshot();
  s->disagreeing_traces = {{"unknown_address", 0}, {"miscabled_link", 3}};
  TopologyDisagreement d;
  d.kind = "miscabled_link";
  d.description = "traffic that reached r0 (hop 1) next entered s0:p0 (10.9.0.0), ...";
  d.traces = 3;
  d.first_seen_ns = 5;
  d.last_seen_ns = 9;
  d.agent_id = "h0";
  d.src_ip = "10.0.0.1";
  d.dst_ip = "10.0.1.1";
  d.src_port = 49152;
  s->disagreements = std::make_shared<const std::vector<TopologyDisagreement>>(
      std::vector<TopologyDisagreement>{d});
  EXPECT_EQ(RenderDisagreements(*s),
            R"({"traces_by_kind":{"unknown_address":0,"miscabled_link":3},"disagreements":[)"
            R"({"kind":"miscabled_link","description":"traffic that reached r0 (hop 1) next )"
            R"(entered s0:p0 (10.9.0.0), ...","traces":3,"agreeing_traces":0,"first_seen_ns":5,)"
            R"("last_seen_ns":9,)"
            R"("last_trace":{"agent_id":"h0","src_ip":"10.0.0.1","dst_ip":"10.0.1.1",)"
            R"("src_port":49152}}]})");
}

TEST(ApiHandlers, LearnedTopologyIsServedAndHasNoDisagreements) {
  VirtualClock clock;
  std::shared_ptr<const ApiSnapshot> current;
  http::Router router;
  MountApi(
      router, [&] { return current; }, clock);
  auto s = Snapshot();
  s->inventory_loaded = false;
  s->topology_source = "learned";
  s->topology_version = 7;
  current = s;
  const http::Response topology = router.Dispatch({"GET", "/api/v1/topology", ""});
  EXPECT_EQ(topology.status, 200);
  EXPECT_TRUE(topology.body.starts_with(R"({"source":"learned","version":7,"device_count":3,)"))
      << topology.body;
  const http::Response none = router.Dispatch({"GET", "/api/v1/topology/disagreements", ""});
  EXPECT_EQ(none.status, 404);
  EXPECT_NE(none.body.find("no inventory loaded"), std::string::npos) << none.body;

  s = Snapshot();
  current = s;
  const http::Response places = router.Dispatch({"GET", "/api/v1/topology/disagreements", ""});
  EXPECT_EQ(places.status, 200);
  EXPECT_EQ(places.body, RenderDisagreements(*s) + "\n");
}

}  // namespace
}  // namespace hostmesh::analyzer::api
