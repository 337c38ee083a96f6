// Incidents of a judged window diagnosed beside the window's NIC counters:
// which evidence each incident kind reads, flapping incidents staying
// flapping, a named type surviving quiet windows, unreachable_rnic only for
// RNICs no probe ever reached.
#include "analyzer/diagnosis/incident_diagnosis.h"

#include <gtest/gtest.h>

#include "tests/analyzer/telemetry/telemetry_sample.h"

namespace hostmesh::analyzer::diagnosis {
namespace {

using analysis::Component;
using analysis::IncidentKind;
using telemetry::testing::Sample;

constexpr std::int64_t kS = 1'000'000'000;

analysis::WindowReport Report(std::int64_t start_s) {
  analysis::WindowReport r;
  r.start_ns = start_s * kS;
  r.end_ns = (start_s + 20) * kS;
  r.sla.cluster.latency.p50 = 5000;
  return r;
}

analysis::Incident RnicIncident(IncidentKind kind, const analysis::WindowReport& r) {
  analysis::Incident inc;
  inc.id = 7;
  inc.kind = kind;
  inc.suspect = {Component::Kind::kRnic, analysis::kUnknown, 3, 1};
  inc.summary = "host 3 nic 1";
  inc.evidence.last_seen_ns = r.end_ns;
  return inc;
}

analysis::Suspect RnicSuspect(std::uint64_t failures, std::uint64_t good) {
  analysis::Suspect s;
  s.component = {Component::Kind::kRnic, analysis::kUnknown, 3, 1};
  s.failures = failures;
  s.good = good;
  return s;
}

analysis::RnicStatus Status(std::uint64_t probes, std::uint64_t timeouts) {
  analysis::RnicStatus st;
  st.host = 3;
  st.nic = 1;
  st.probes = st.probes_to = probes;
  st.timeouts = st.timeouts_to = timeouts;
  return st;
}

DiagnosisContext Context() {
  DiagnosisContext ctx;
  ctx.nic_of = [](analysis::HostId host, analysis::NicId nic) -> std::optional<NicRef> {
    return NicRef{"h00" + std::to_string(host), "mlx5_" + std::to_string(nic)};
  };
  ctx.describe = [](const analysis::Incident&) -> std::string { return "RNIC h003 mlx5_1"; };
  return ctx;
}

TelemetryByNic Counters(std::initializer_list<telemetry::testing::Delta> deltas,
                        std::uint32_t port_state = 4) {
  telemetry::NicCounterTotals totals;
  v1::NicTelemetry t = Sample(1, 0, 10 * kS, deltas);
  t.set_port_state(port_state);
  totals.Add(t);
  TelemetryByNic out;
  out[{"h003", "mlx5_1"}] = totals;
  return out;
}

TEST(IncidentDiagnosis, LossyRnicWithSymbolErrorsIsCorruptionAndKeepsItsCounters) {
  IncidentDiagnoser diagnoser;
  analysis::WindowReport r = Report(0);
  r.rnics = {Status(400, 12)};
  r.loss.culprits = {RnicSuspect(12, 388)};
  const analysis::Incident inc = RnicIncident(IncidentKind::kRnicLossy, r);
  const auto out = diagnoser.Diagnose(
      r, {&inc},
      Counters({{v1::NIC_COUNTER_SYMBOL_ERROR, 4210}, {v1::NIC_COUNTER_RX_FCS_ERRORS, 3980}}),
      Context());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, 7u);
  const analysis::IncidentDiagnosis& d = out[0].second;
  EXPECT_EQ(d.type, "corruption");
  EXPECT_EQ(d.evidence,
            "RNIC h003 mlx5_1 losing 3.0% of probes; symbol errors +4,210 and FCS errors +3,980 "
            "in the window: likely a dirty optic or bad cable");
  EXPECT_EQ(d.window_start_ns, 0);
  const std::vector<std::pair<std::string, std::uint64_t>> want = {{"symbol_error", 4210},
                                                                   {"rx_fcs_errors", 3980}};
  EXPECT_EQ(d.counters, want);
}

TEST(IncidentDiagnosis, ANamedTypeSurvivesAQuietWindowAndAnotherTypeReplacesIt) {
  IncidentDiagnoser diagnoser;
  analysis::WindowReport r = Report(20);
  r.rnics = {Status(400, 12)};
  r.loss.culprits = {RnicSuspect(12, 388)};
  analysis::Incident inc = RnicIncident(IncidentKind::kRnicLossy, r);
  inc.diagnosis = {"corruption", "corruption: ...", "earlier", {{"symbol_error", 9}}, 0};
  auto out =
      diagnoser.Diagnose(r, {&inc}, Counters({{v1::NIC_COUNTER_SYMBOL_ERROR, 0}}), Context());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second.type, "corruption");
  EXPECT_EQ(out[0].second.evidence, "earlier");

  out = diagnoser.Diagnose(
      r, {&inc}, Counters({{v1::NIC_COUNTER_LINK_DOWNED, 2}, {v1::NIC_COUNTER_CARRIER_CHANGES, 4}}),
      Context());
  EXPECT_EQ(out[0].second.type, "flapping");
  EXPECT_EQ(out[0].second.window_start_ns, 20 * kS);
}

TEST(IncidentDiagnosis, AFlappingIncidentIsDiagnosedFlappingWithoutCounters) {
  IncidentDiagnoser diagnoser;
  analysis::WindowReport r = Report(0);
  r.rnics = {Status(400, 200)};
  r.loss.culprits = {RnicSuspect(200, 200)};
  analysis::Incident inc = RnicIncident(IncidentKind::kFlapping, r);
  inc.evidence.flaps = 4;
  const auto out = diagnoser.Diagnose(r, {&inc}, {}, Context());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second.type, "flapping");
  EXPECT_NE(out[0].second.evidence.find("probes lost in 4 bursts"), std::string::npos)
      << out[0].second.evidence;
}

TEST(IncidentDiagnosis, UnreachableOnlyWhenNoProbeEverReachedTheRnic) {
  analysis::WindowReport r = Report(0);
  r.rnics = {Status(400, 400)};
  r.loss.culprits = {RnicSuspect(400, 0)};
  const analysis::Incident inc = RnicIncident(IncidentKind::kRnicDown, r);
  const TelemetryByNic clean = Counters({{v1::NIC_COUNTER_SYMBOL_ERROR, 0}});
  {
    IncidentDiagnoser diagnoser;
    const auto out = diagnoser.Diagnose(r, {&inc}, clean, Context());
    EXPECT_EQ(out.at(0).second.type, "unreachable_rnic");
  }
  {
    // The same RNIC answered in an earlier window: it broke, it was not unrouted.
    IncidentDiagnoser diagnoser;
    analysis::WindowReport before = Report(-20);
    before.rnics = {Status(400, 0)};
    diagnoser.Diagnose(before, {}, {}, Context());
    const auto out = diagnoser.Diagnose(r, {&inc}, clean, Context());
    EXPECT_EQ(out.at(0).second.type, "unclassified");
  }
  {
    // Never reached, but its port is down: a down RNIC, not a missing route.
    IncidentDiagnoser diagnoser;
    const auto out = diagnoser.Diagnose(
        r, {&inc}, Counters({{v1::NIC_COUNTER_LINK_DOWNED, 1}}, /*port_state=*/1), Context());
    EXPECT_EQ(out.at(0).second.type, "unclassified");
    EXPECT_NE(out.at(0).second.evidence.find("its port is down"), std::string::npos);
  }
}

TEST(IncidentDiagnosis, ADownRnicIsUnreachableFromItsSendFailures) {
  analysis::WindowReport r = Report(0);
  // 400 probes to it lost; of its own, 10 went out before it went down and
  // 390 could not be sent (kept out of the window by the analysis).
  analysis::RnicStatus st = Status(400, 400);
  st.probes += 10;
  st.timeouts += 10;
  r.rnics = {st};
  r.loss.culprits = {RnicSuspect(410, 0)};
  const analysis::Incident inc = RnicIncident(IncidentKind::kRnicLossy, r);
  const TelemetryByNic down = Counters({{v1::NIC_COUNTER_LINK_DOWNED, 1}}, /*port_state=*/1);

  IncidentDiagnoser diagnoser;
  analysis::WindowReport before = Report(-20);
  before.rnics = {Status(400, 0)};  // it worked: not a missing route
  diagnoser.Diagnose(before, {}, {}, Context());
  {
    const auto out = diagnoser.Diagnose(r, {&inc}, down, Context());
    EXPECT_EQ(out.at(0).second.type, "unclassified") << "without its send failures";
  }
  const SendFailures failed = {{RnicKey(3, 1), 390}, {RnicKey(3, 2), 5}};
  const auto out = diagnoser.Diagnose(r, {&inc}, down, Context(), &failed);
  EXPECT_EQ(out.at(0).second.type, "unreachable_rnic");
  EXPECT_NE(out.at(0).second.evidence.find("could not send 390 of its 400 own probes and its "
                                           "port is down"),
            std::string::npos)
      << out.at(0).second.evidence;
  // Loss is the probes', not the send failures: 410 of 410 sent and lost.
  EXPECT_NE(out.at(0).second.evidence.find("losing 100.0% of probes"), std::string::npos);
}

TEST(IncidentDiagnosis, APcieDowngradeReadsTheClusterTailAgainstRecentWindows) {
  IncidentDiagnoser diagnoser;
  for (int w = 0; w < 3; ++w) {  // the usual tail, windows without incidents
    analysis::WindowReport quiet = Report(-20 * (3 - w));
    quiet.sla.cluster.latency.count = 1000;
    quiet.sla.cluster.latency.p99 = 10'000;
    diagnoser.Observe(quiet);
  }
  analysis::WindowReport r = Report(0);
  r.sla.cluster.latency.count = 1000;
  r.sla.cluster.latency.p99 = 18'000;
  analysis::Suspect hot = RnicSuspect(0, 400);
  hot.added_latency_ns = 15'000;
  r.latency.culprits = {hot};
  const analysis::Incident inc = RnicIncident(IncidentKind::kLatencyHotspot, r);
  telemetry::NicCounterTotals nic;
  v1::NicTelemetry t = Sample(1, 0, 10 * kS, {{v1::NIC_COUNTER_TX_PAUSE, 900, 3}});
  t.mutable_pcie()->set_current_width(8);
  t.mutable_pcie()->set_max_width(16);
  t.mutable_pcie()->set_current_speed_mts(16000);
  t.mutable_pcie()->set_max_speed_mts(16000);
  nic.Add(t);
  TelemetryByNic telemetry;
  telemetry[{"h003", "mlx5_1"}] = nic;
  const auto out = diagnoser.Diagnose(r, {&inc}, telemetry, Context());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second.type, "pcie_downgrade");
  EXPECT_NE(out[0].second.evidence.find("cluster tail latency 1.8x"), std::string::npos)
      << out[0].second.evidence;
}

TEST(IncidentDiagnosis, AclFromTheSourcePortsThroughALossyLink) {
  IncidentDiagnoser diagnoser;
  analysis::WindowReport r = Report(0);
  analysis::Suspect s;
  s.component.link = 5;
  s.failures = 40;
  s.good = 60;
  s.ports = {{49152, 20, 20}, {49153, 20, 20}, {49154, 30, 0}, {49155, 30, 0}};
  r.loss.culprits = {s};
  analysis::Incident inc;
  inc.id = 9;
  inc.kind = IncidentKind::kLinkLoss;
  inc.suspect.link = 5;
  inc.summary = "link 5";
  inc.evidence.last_seen_ns = r.end_ns;
  const auto out = diagnoser.Diagnose(r, {&inc}, {}, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second.type, "acl");
  EXPECT_NE(out[0].second.evidence.find("2 of 4 source ports"), std::string::npos);
}

TEST(IncidentDiagnosis, EcmpCollisionOnOneHotRailUplinkWithPauseOnTheRail) {
  // Switch 0 is a rail switch (NICs below it) with uplinks 1, 2, 3 to spines 4, 5, 6.
  DiagnosisContext ctx;
  ctx.links = {{analysis::kUnknown, 0}, {0, 4}, {0, 5}, {0, 6}};
  ctx.switch_nics = [](analysis::SwitchId sw) {
    return sw == 0 ? std::vector<NicRef>{{"h003", "mlx5_1"}} : std::vector<NicRef>{};
  };
  analysis::WindowReport r = Report(0);
  analysis::Suspect hot;
  hot.component.link = 2;
  hot.added_latency_ns = 20'000;
  hot.good = 300;
  r.latency.culprits = {hot};
  analysis::Incident inc;
  inc.id = 4;
  inc.kind = IncidentKind::kLatencyHotspot;
  inc.suspect.link = 2;
  inc.summary = "link 2";
  inc.evidence.last_seen_ns = r.end_ns;
  IncidentDiagnoser diagnoser;
  const TelemetryByNic paused = Counters({{v1::NIC_COUNTER_RX_PAUSE, 4000, 3}});
  auto out = diagnoser.Diagnose(r, {&inc}, paused, ctx);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second.type, "ecmp_hash_collision") << out[0].second.evidence;
  EXPECT_NE(out[0].second.evidence.find("its 2 sibling uplinks are not, and the rail's NICs "
                                        "received 4,000 pause frames"),
            std::string::npos)
      << out[0].second.evidence;

  // The rail's NICs not paused: the uplink is slow, no flows queue on it.
  const TelemetryByNic calm = Counters({{v1::NIC_COUNTER_RX_PAUSE, 0, 3}});
  EXPECT_EQ(diagnoser.Diagnose(r, {&inc}, calm, ctx).at(0).second.type, "unclassified");

  // Every uplink of the rail hot: congestion of the rail, not one collision.
  analysis::Suspect other = hot;
  other.component.link = 1;
  analysis::Suspect third = hot;
  third.component.link = 3;
  r.latency.culprits = {hot, other, third};
  out = diagnoser.Diagnose(r, {&inc}, paused, ctx);
  EXPECT_EQ(out.at(0).second.type, "unclassified");
}

TEST(IncidentDiagnosis, IncidentsTheWindowDidNotFindAreLeftAlone) {
  IncidentDiagnoser diagnoser;
  analysis::WindowReport r = Report(0);
  analysis::Incident resolved = RnicIncident(IncidentKind::kRnicLossy, r);
  resolved.open = false;
  analysis::Incident quiet = RnicIncident(IncidentKind::kRnicLossy, r);
  quiet.evidence.last_seen_ns = r.start_ns;  // last found a window earlier
  analysis::Incident missing = RnicIncident(IncidentKind::kRnicLossy, r);  // no culprit entry
  EXPECT_TRUE(diagnoser.Diagnose(r, {&resolved, &quiet, &missing}, {}, Context()).empty());
}

TEST(IncidentDiagnosis, CpuOverloadWhenTheHostsNetworkIsFine) {
  IncidentDiagnoser diagnoser;
  analysis::WindowReport r = Report(0);
  r.processing_flags = {{3, 4e6, 2e5, 900}};
  r.rnics = {Status(400, 0)};
  analysis::Incident inc;
  inc.id = 2;
  inc.kind = IncidentKind::kHostProcessing;
  inc.suspect.host = 3;
  inc.summary = "host 3";
  inc.evidence.last_seen_ns = r.end_ns;
  auto out = diagnoser.Diagnose(r, {&inc}, {}, {});
  EXPECT_EQ(out.at(0).second.type, "cpu_overload");
  // One of its RNICs blamed for loss: the delay may be the network's.
  r.loss.culprits = {RnicSuspect(30, 370)};
  out = diagnoser.Diagnose(r, {&inc}, {}, {});
  EXPECT_EQ(out.at(0).second.type, "unclassified");
}

}  // namespace
}  // namespace hostmesh::analyzer::diagnosis
