// The fabric half of the diagnosis context built from a fabric learned from
// traceroutes (no inventory): the rail switches' NICs, the NIC at the end of
// each access link, rail uplinks, so the rules that need the fabric (ECMP
// collision on a rail uplink, counters of an access link's NIC) work as they
// do with an inventory.
#include "analyzer/diagnosis/fabric_context.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "tests/analyzer/telemetry/telemetry_sample.h"
#include "topology/ecmp.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"
#include "topology/learned_graph.h"
#include "topology/path_resolver.h"

namespace hostmesh::analyzer::diagnosis {
namespace {

using analysis::Component;
using analysis::IncidentKind;
using topology::Ipv4;

constexpr int kHosts = 2;
constexpr int kRails = 2;

topology::Topology Truth() {
  return topology::BuildTopology(
      topology::GenerateInventory({.hosts = kHosts, .rails = kRails, .spines = 2}));
}

// The learner given what agents on every host of a 2x2x2 fabric report:
// their Hellos (NICs "mlx5_<rail>") and every ECMP path between their NICs.
std::shared_ptr<const topology::Topology> Learned() {
  const topology::Topology truth = Truth();
  const auto nic_ip = [&](int host, int rail) {
    const topology::Device& d = truth.device(static_cast<topology::DeviceId>(host));
    return truth.interface(d.interfaces[static_cast<std::size_t>(rail)]).ip;
  };
  topology::FabricLearner learner;
  for (int h = 0; h < kHosts; ++h) {
    for (int r = 0; r < kRails; ++r) {
      learner.AddNic(truth.device(static_cast<topology::DeviceId>(h)).name,
                     "mlx5_" + std::to_string(r), nic_ip(h, r), r);
    }
  }
  topology::ResolvedPath out;
  for (int round = 0; round < 2; ++round) {
    for (int h = 0; h < kHosts; ++h) {
      const std::string host = truth.device(static_cast<topology::DeviceId>(h)).name;
      for (int a = 0; a < kRails; ++a) {
        for (int b = 0; b < kRails; ++b) {
          if (a == b) continue;
          for (const auto& path : topology::EnumerateEcmpPaths(truth, nic_ip(h, a), nic_ip(h, b))) {
            std::vector<topology::Hop> hops = topology::ExpectedHops(truth, path, nic_ip(h, a));
            hops.emplace_back(nic_ip(h, b));
            learner.Add(host, nic_ip(h, a), nic_ip(h, b), hops, nullptr, &out);
          }
        }
      }
    }
  }
  return std::make_shared<const topology::Topology>(learner.Build());
}

std::string AgentOf(const std::string& host) {
  return "agent-" + host;
}

// A window that blames `link` (`suspect` as loss or latency culprit) and the
// open incident of that kind on it.
struct LinkWindow {
  analysis::WindowReport report;
  analysis::Incident incident;
};
LinkWindow Blamed(topology::LinkId link, IncidentKind kind, analysis::Suspect suspect) {
  LinkWindow w;
  w.report.end_ns = 20'000'000'000;
  w.report.sla.cluster.latency.p50 = 5000;
  suspect.component.link = link;
  (kind == IncidentKind::kLatencyHotspot ? w.report.latency : w.report.loss).culprits = {suspect};
  w.incident.id = 3;
  w.incident.kind = kind;
  w.incident.suspect.link = link;
  w.incident.evidence.last_seen_ns = w.report.end_ns;
  return w;
}

DiagnosisContext ContextOf(const FabricContext& fabric) {
  return fabric.Context(
      AgentOf, [](analysis::HostId, analysis::NicId) { return std::nullopt; },
      [](analysis::HostId h) { return "host" + std::to_string(h); });
}

class LearnedFabricContext : public ::testing::Test {
 protected:
  std::shared_ptr<const topology::Topology> learned_ = Learned();
  // The context keeps the learned graph alive: the feed replaces its own.
  FabricContext fabric_{std::shared_ptr<const topology::Topology>(learned_)};
  DiagnosisContext ctx_ = ContextOf(fabric_);

  topology::LinkId NicLink(const std::string& host, const std::string& nic) const {
    for (topology::LinkId l = 0; l < learned_->links().size(); ++l) {
      const topology::Link& link = learned_->link(l);
      if (link.kind != topology::LinkKind::kNic) continue;
      const topology::Interface& i = learned_->interface(link.lower);
      if (learned_->device(i.device).name == host && i.name == nic) return l;
    }
    ADD_FAILURE() << "no learned NIC link of " << host << " " << nic;
    return 0;
  }
  std::string HostName(int h) const {
    return truth_.device(static_cast<topology::DeviceId>(h)).name;
  }
  topology::Topology truth_ = Truth();
};

TEST_F(LearnedFabricContext, RailSwitchesKnowTheirNicsAndAccessLinksTheirNic) {
  ASSERT_EQ(ctx_.links.size(), learned_->links().size());
  const topology::LinkId link = NicLink(HostName(1), "mlx5_0");
  const std::optional<NicRef> nic = ctx_.link_nic(link);
  ASSERT_TRUE(nic);
  EXPECT_EQ(nic->agent_id, AgentOf(HostName(1)));
  EXPECT_EQ(nic->nic, "mlx5_0");
  const analysis::SwitchId rail0 = learned_->DeviceOf(learned_->link(link).upper);
  std::vector<std::string> below;
  for (const NicRef& n : ctx_.switch_nics(rail0)) below.push_back(n.agent_id + "/" + n.nic);
  std::sort(below.begin(), below.end());
  EXPECT_EQ(below, (std::vector<std::string>{AgentOf(HostName(0)) + "/mlx5_0",
                                             AgentOf(HostName(1)) + "/mlx5_0"}));
  // A fabric link has no NIC at its end.
  for (topology::LinkId l = 0; l < learned_->links().size(); ++l) {
    if (learned_->link(l).kind != topology::LinkKind::kNic) {
      EXPECT_FALSE(ctx_.link_nic(l));
    }
  }
}

TEST_F(LearnedFabricContext, AccessLinkLossWithSymbolErrorsOnItsNicIsCorruption) {
  analysis::Suspect lossy;
  lossy.failures = 30;
  lossy.good = 970;
  const auto [r, inc] =
      Blamed(NicLink(HostName(0), "mlx5_1"), IncidentKind::kLinkLoss, std::move(lossy));

  IncidentDiagnoser diagnoser;
  const WindowFindings findings = diagnoser.Find(r, {&inc}, ctx_);
  ASSERT_FALSE(findings.Agents().empty());
  EXPECT_EQ(findings.Agents().front(), AgentOf(HostName(0))) << "the NIC's host is read first";
  telemetry::NicCounterTotals totals;
  totals.Add(
      telemetry::testing::Sample(1, 0, 10'000'000'000, {{v1::NIC_COUNTER_SYMBOL_ERROR, 500}}));
  TelemetryByNic telemetry;
  telemetry[{AgentOf(HostName(0)), "mlx5_1"}] = totals;
  const auto out = diagnoser.Diagnose(findings, telemetry, r.start_ns);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second.type, "corruption") << out[0].second.evidence;

  // Without the fabric the link's NIC is unknown: its counters are not read.
  IncidentDiagnoser bare;
  EXPECT_EQ(bare.Diagnose(r, {&inc}, telemetry, {}).at(0).second.type, "unclassified");
}

TEST_F(LearnedFabricContext, OneHotLearnedRailUplinkIsAnEcmpCollision) {
  topology::LinkId uplink = topology::kNone;
  for (topology::LinkId l = 0; l < learned_->links().size(); ++l) {
    const auto& ends = ctx_.links[l];
    if (ends.lower != analysis::kUnknown && ends.upper != analysis::kUnknown &&
        !ctx_.switch_nics(ends.lower).empty()) {
      uplink = l;
      break;
    }
  }
  ASSERT_NE(uplink, topology::kNone) << "a rail switch's uplink was learned";
  analysis::Suspect hot;
  hot.added_latency_ns = 20'000;
  hot.good = 300;
  const auto [r, inc] = Blamed(uplink, IncidentKind::kLatencyHotspot, std::move(hot));

  // A NIC below the uplink's rail switch was paused.
  const std::vector<NicRef> below = ctx_.switch_nics(ctx_.links[uplink].lower);
  ASSERT_FALSE(below.empty());
  telemetry::NicCounterTotals paused;
  paused.Add(
      telemetry::testing::Sample(1, 0, 10'000'000'000, {{v1::NIC_COUNTER_RX_PAUSE, 900, 3}}));
  TelemetryByNic telemetry;
  telemetry[{below.front().agent_id, below.front().nic}] = paused;

  IncidentDiagnoser diagnoser;
  const auto out = diagnoser.Diagnose(r, {&inc}, telemetry, ctx_);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second.type, "ecmp_hash_collision") << out[0].second.evidence;
  IncidentDiagnoser bare;
  EXPECT_EQ(bare.Diagnose(r, {&inc}, telemetry, {}).at(0).second.type, "unclassified")
      << "without fabric context no rule can tell a rail uplink";
}

}  // namespace
}  // namespace hostmesh::analyzer::diagnosis
