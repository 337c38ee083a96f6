// JSON of a hand-built window report, field by field, and the handlers over
// a fake snapshot through the router (no sockets).
#include "analyzer/api/render.h"

#include <gtest/gtest.h>

#include "analyzer/api/api_handlers.h"
#include "analyzer/api/json_writer.h"
#include "common/base/clock.h"

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
  s->hosts = {{"h0", "h0", {{"nic0", "10.0.0.1", 0}, {"nic1", "10.0.1.1", 1}}}};
  s->links = {{"h0:nic0 - r0:p1", {"h0", "nic0", "10.0.0.1"}, {"r0", "p1", "10.0.0.0"}},
              {"r0:up0 - s0:p0", {"r0", "up0", "10.9.0.1"}, {"s0", "p0", "10.9.0.0"}}};
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
  s->incidents = {inc};
  return s;
}

TEST(JsonWriter, EscapesAndPlacesCommas) {
  JsonWriter w;
  w.BeginObject().Key("a\"b").String("x\n\x01").Key("n").BeginArray().Int(-1).Double(0.5);
  w.Double(std::numeric_limits<double>::quiet_NaN()).EndArray().EndObject();
  EXPECT_EQ(w.str(), R"({"a\"b":"x\n\u0001","n":[-1,0.5,null]})");
}

TEST(Render, RnicsHaveEveryFieldAndThePaperVerdictBesideOurs) {
  EXPECT_EQ(RenderRnics(*Snapshot()),
            R"({"window":{"start_ns":20000000000,"end_ns":40000000000,"results":100},)"
            R"("rnics":[{"host":"h0","nic":1,"nic_name":"nic1","ip":"10.0.1.1","rail":1,)"
            R"("state":"down","anomalous":true,"paper_anomalous":true,)"
            R"("anomalous_until_ns":100000000000,"loss":1,"probes":50,"timeouts":50,)"
            R"("probes_to":25,"timeouts_to":25}]})");
}

TEST(Render, LinksRankedWithVotesEndsAndNames) {
  EXPECT_EQ(RenderLinks(*Snapshot(), true),
            R"({"window":{"start_ns":20000000000,"end_ns":40000000000,"results":100},)"
            R"("method":"greedy loss-weighted inference; votes: paper Algorithm 1",)"
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
  EXPECT_EQ(RenderIncidents(*Snapshot()),
            R"({"open":[{"id":1,"kind":"rnic_down","summary":"host 0 nic 1",)"
            R"("suspect":{"host":"h0","nic":1,"nic_name":"nic1","ip":"10.0.1.1","rail":1},)"
            R"("confidence":0.9,"open":true,"first_seen_ns":20000000000,)"
            R"("last_seen_ns":40000000000,"resolved_ns":0,"windows":1,)"
            R"("evidence":{"failures":50,"good":0,"votes":0,"loss":0,"example_paths":[]}}],)"
            R"("resolved":[]})");
}

TEST(Render, StatusLagAndAgents) {
  EXPECT_EQ(RenderStatus(*Snapshot(), 45'000'000'000),
            R"({"version":"0.1.0","uptime_seconds":44,"window_seconds":20,"grace_seconds":10,)"
            R"("inventory_loaded":true,"agents_known":1,"agents_present":1,)"
            R"("window":{"start_ns":20000000000,"end_ns":40000000000,"results":100},)"
            R"("window_lag_seconds":5,"open_incidents":1})");
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
  EXPECT_EQ(empty.body, "{\"window\":null,\"rnics\":[]}\n");

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

}  // namespace
}  // namespace hostmesh::analyzer::api
