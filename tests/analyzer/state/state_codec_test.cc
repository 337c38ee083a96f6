// Stored summaries and incidents read back as written; damaged bytes are refused.
#include "analyzer/state/state_codec.h"

#include <gtest/gtest.h>

namespace hostmesh::analyzer::state {
namespace {

analysis::Incident SampleIncident() {
  analysis::Incident inc;
  inc.id = 42;
  inc.kind = analysis::IncidentKind::kLatencyHotspot;
  inc.suspect.kind = analysis::Component::Kind::kRnic;
  inc.suspect.host = 3;
  inc.suspect.nic = 1;
  inc.summary = "host 3 nic 1";
  inc.confidence = 0.75;
  inc.open = false;
  inc.resolved_ns = 1'700'000'100'000'000'000;
  inc.merged_into = 9;
  inc.clean_windows = 2;
  inc.unobserved_windows = 1;
  auto& e = inc.evidence;
  e.failures = 120;
  e.good = 3000;
  e.votes = 77;
  e.loss = 0.04;
  e.processing_p90_ns = 1.5e6;
  e.fleet_median_p90_ns = 2e4;
  e.example_paths = {{1, 9, 14, 2}, {1, 10, 15, 2}};
  e.links = {9, 10};
  e.first_seen_ns = 1'700'000'000'000'000'000;
  e.last_seen_ns = 1'700'000'080'000'000'000;
  e.windows = 4;
  e.routed_around = true;
  inc.diagnosis = {"pcie_downgrade",
                   "pcie_downgrade: ...",
                   "RNIC h003 nic1 latency 3.0x",
                   {{"tx_pause", 9000}, {"rx_discards_phy", 12}},
                   1'700'000'060'000'000'000};
  return inc;
}

TEST(StateCodec, IncidentRoundTrips) {
  const analysis::Incident in = SampleIncident();
  const auto out = DecodeIncident(EncodeIncident(in));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->id, in.id);
  EXPECT_EQ(out->kind, in.kind);
  EXPECT_EQ(out->suspect, in.suspect);
  EXPECT_EQ(out->summary, in.summary);
  EXPECT_EQ(out->confidence, in.confidence);
  EXPECT_EQ(out->open, in.open);
  EXPECT_EQ(out->resolved_ns, in.resolved_ns);
  EXPECT_EQ(out->merged_into, 9u);
  EXPECT_EQ(out->clean_windows, in.clean_windows);
  EXPECT_EQ(out->unobserved_windows, in.unobserved_windows);
  const auto &a = out->evidence, &b = in.evidence;
  EXPECT_EQ(a.failures, b.failures);
  EXPECT_EQ(a.good, b.good);
  EXPECT_EQ(a.votes, b.votes);
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_EQ(a.processing_p90_ns, b.processing_p90_ns);
  EXPECT_EQ(a.fleet_median_p90_ns, b.fleet_median_p90_ns);
  EXPECT_EQ(a.example_paths, b.example_paths);
  EXPECT_EQ(a.links, b.links);
  EXPECT_EQ(a.first_seen_ns, b.first_seen_ns);
  EXPECT_EQ(a.last_seen_ns, b.last_seen_ns);
  EXPECT_EQ(a.windows, b.windows);
  EXPECT_TRUE(a.routed_around);
  EXPECT_EQ(out->diagnosis.type, in.diagnosis.type);
  EXPECT_EQ(out->diagnosis.rule, in.diagnosis.rule);
  EXPECT_EQ(out->diagnosis.evidence, in.diagnosis.evidence);
  EXPECT_EQ(out->diagnosis.counters, in.diagnosis.counters);
  EXPECT_EQ(out->diagnosis.window_start_ns, in.diagnosis.window_start_ns);
}

TEST(StateCodec, IncidentNeverDiagnosedStaysUnclassifiedWithoutRule) {
  analysis::Incident in = SampleIncident();
  in.diagnosis = {};
  const auto out = DecodeIncident(EncodeIncident(in));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->diagnosis.type, "unclassified");
  EXPECT_EQ(out->diagnosis.rule, "");
  EXPECT_TRUE(out->diagnosis.counters.empty());
}

TEST(StateCodec, EveryIncidentKindRoundTrips) {
  for (auto kind :
       {analysis::IncidentKind::kRnicDown, analysis::IncidentKind::kRnicLossy,
        analysis::IncidentKind::kLinkLoss, analysis::IncidentKind::kSwitch,
        analysis::IncidentKind::kLatencyHotspot, analysis::IncidentKind::kHostProcessing}) {
    analysis::Incident in = SampleIncident();
    in.kind = kind;
    const auto out = DecodeIncident(EncodeIncident(in));
    ASSERT_TRUE(out.has_value()) << analysis::IncidentKindName(kind);
    EXPECT_EQ(out->kind, kind);
  }
}

TEST(StateCodec, DamagedOrUnknownIncidentsAreRefused) {
  EXPECT_FALSE(DecodeIncident("\xff\xff\xff").has_value());  // not a protobuf
  v1::state::IncidentRecord unknown;
  unknown.set_id(5);
  unknown.set_kind("meteor_strike");
  EXPECT_FALSE(DecodeIncident(unknown.SerializeAsString()).has_value());
  v1::state::IncidentRecord no_id;
  no_id.set_kind("link_loss");
  EXPECT_FALSE(DecodeIncident(no_id.SerializeAsString()).has_value());
}

TEST(StateCodec, WindowSummaryKeepsTheVerdictAndSla) {
  analysis::WindowReport r;
  r.start_ns = 100;
  r.end_ns = 200;
  r.results = 5000;
  r.present_hosts = {0, 1};
  r.absent_hosts = {2};
  r.sla.cluster.probes = 5000;
  r.sla.cluster.timeouts = 50;
  r.sla.cluster.network_drops = 40;
  r.sla.cluster.rnic_drops = 10;
  r.sla.cluster.latency = {4900, 8e3, 9e3, 1.1e4, 2e4};
  r.sla.rails.push_back({3, r.sla.cluster});
  r.sla.hosts.push_back({1, r.sla.cluster});
  analysis::RnicStatus bad;
  bad.host = 1;
  bad.nic = 2;
  bad.anomalous = true;
  bad.loss = 1.0;
  r.rnics = {analysis::RnicStatus{}, bad};
  analysis::Suspect link;
  link.component.link = 17;
  r.loss.culprits.push_back(link);
  analysis::Suspect rnic;
  rnic.component.kind = analysis::Component::Kind::kRnic;
  r.loss.culprits.push_back(rnic);
  r.loss.culprit_switches = {4};
  r.processing_flags.push_back({0, 1e6, 1e4, 500});
  r.coverage.fraction = 0.9;
  r.coverage.traced_probes = 4800;
  r.coverage.untraced_probes = 200;

  const auto names = [](analysis::HostId h) { return "agent-" + std::to_string(h); };
  const auto s = DecodeWindowSummary(EncodeWindowSummary(r, names));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->start_ns(), 100);
  EXPECT_EQ(s->end_ns(), 200);
  EXPECT_EQ(s->results(), 5000u);
  EXPECT_EQ(s->present_hosts(), 2u);
  ASSERT_EQ(s->absent_agents_size(), 1);
  EXPECT_EQ(s->absent_agents(0), "agent-2");
  EXPECT_EQ(s->cluster().network_drops(), 40u);
  EXPECT_EQ(s->cluster().latency().p999_ns(), 2e4);
  ASSERT_EQ(s->rails_size(), 1);
  EXPECT_EQ(s->rails(0).rail(), 3);
  ASSERT_EQ(s->hosts_size(), 1);
  EXPECT_EQ(s->hosts(0).agent_id(), "agent-1");
  ASSERT_EQ(s->anomalous_rnics_size(), 1);  // the healthy one is not listed
  EXPECT_EQ(s->anomalous_rnics(0).agent_id(), "agent-1");
  EXPECT_EQ(s->anomalous_rnics(0).nic(), 2u);
  ASSERT_EQ(s->culprit_links_size(), 1);  // links only: the RNIC is in anomalous_rnics
  EXPECT_EQ(s->culprit_links(0), 17u);
  EXPECT_EQ(s->culprit_switches(0), 4u);
  EXPECT_EQ(s->overloaded_hosts(0), 0u);
  EXPECT_EQ(s->untraced_probes(), 200u);
}

}  // namespace
}  // namespace hostmesh::analyzer::state
