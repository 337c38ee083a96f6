// The classifier as a table of hand-made incidents: one row per problem type,
// and look-alikes that must not be classified as the type they resemble.
#include "analyzer/diagnosis/diagnose.h"

#include <gtest/gtest.h>

#include <functional>

#include "tests/analyzer/telemetry/telemetry_sample.h"

namespace hostmesh::analyzer::diagnosis {
namespace {

using telemetry::NicCounterTotals;
using telemetry::testing::Delta;
using telemetry::testing::Sample;

constexpr std::int64_t kS = 1'000'000'000;

// Two 10 s samples of one NIC: the deltas in the second, every counter read.
NicCounterTotals Counters(std::initializer_list<Delta> deltas,
                          const std::function<void(v1::NicTelemetry&)>& edit = {}) {
  NicCounterTotals totals;
  totals.Add(Sample(1, 0, 10 * kS,
                    {{v1::NIC_COUNTER_LINK_DOWNED, 0},
                     {v1::NIC_COUNTER_SYMBOL_ERROR, 0},
                     {v1::NIC_COUNTER_RX_FCS_ERRORS, 0},
                     {v1::NIC_COUNTER_CARRIER_CHANGES, 0},
                     {v1::NIC_COUNTER_TX_PAUSE, 0, 3}}));
  v1::NicTelemetry second = Sample(1, 10 * kS, 20 * kS, deltas);
  if (edit) edit(second);
  totals.Add(second);
  return totals;
}

void Pcie(v1::NicTelemetry& t, std::uint32_t width, std::uint32_t speed_mts) {
  t.mutable_pcie()->set_current_width(width);
  t.mutable_pcie()->set_max_width(16);
  t.mutable_pcie()->set_current_speed_mts(speed_mts);
  t.mutable_pcie()->set_max_speed_mts(16000);
}

ProbeEvidence RnicLoss(std::uint64_t probes, std::uint64_t failures) {
  ProbeEvidence p;
  p.subject = Subject::kRnic;
  p.symptom = Symptom::kLoss;
  p.name = "RNIC h003 nic1";
  p.probes = probes;
  p.failures = failures;
  return p;
}

ProbeEvidence LinkLoss(std::uint64_t probes, std::uint64_t failures) {
  ProbeEvidence p = RnicLoss(probes, failures);
  p.subject = Subject::kLink;
  p.name = "link p0r1-s02";
  return p;
}

ProbeEvidence UplinkLatency(double ratio, std::uint32_t siblings, std::uint32_t hot) {
  ProbeEvidence p;
  p.subject = Subject::kLink;
  p.symptom = Symptom::kLatency;
  p.name = "link p0r1-s02";
  p.probes = 400;
  p.latency_ratio = ratio;
  p.rail_uplink = true;
  p.sibling_uplinks = siblings;
  p.sibling_uplinks_hot = hot;
  return p;
}

ProbeEvidence HostDelay(double ratio, bool network_fine) {
  ProbeEvidence p;
  p.subject = Subject::kHost;
  p.symptom = Symptom::kProcessingDelay;
  p.name = "host h005";
  p.probes = 1200;
  p.processing_ratio = ratio;
  p.network_fine = network_fine;
  return p;
}

std::vector<PortOutcome> Ports(std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> pf) {
  std::vector<PortOutcome> out;
  std::uint16_t port = 49152;
  for (const auto& [probes, failures] : pf) out.push_back({port++, probes, failures});
  return out;
}

struct Row {
  const char* name;
  ProbeEvidence probes;
  std::optional<NicCounterTotals> nic;
  std::optional<std::uint64_t> rail_pause;
  ProblemType want;
};

std::vector<Row> Table() {
  std::vector<Row> rows;
  // --- one per type ---
  rows.push_back(
      {"flapping: link_downed with loss",
       RnicLoss(400, 48),
       Counters({{v1::NIC_COUNTER_LINK_DOWNED, 2}, {v1::NIC_COUNTER_CARRIER_CHANGES, 4}}),
       {},
       ProblemType::kFlapping});
  rows.push_back({"flapping: carrier changes alone (a UDP NIC, no RDMA counters)",
                  RnicLoss(400, 30),
                  Counters({{v1::NIC_COUNTER_CARRIER_CHANGES, 2}}),
                  {},
                  ProblemType::kFlapping});
  rows.push_back(
      {"corruption: symbol and FCS errors with loss",
       RnicLoss(1000, 21),
       Counters({{v1::NIC_COUNTER_SYMBOL_ERROR, 4210}, {v1::NIC_COUNTER_RX_FCS_ERRORS, 3980}}),
       {},
       ProblemType::kCorruption});
  {
    ProbeEvidence p = RnicLoss(400, 400);
    p.failed_from_start = true;
    rows.push_back({"unreachable RNIC: all failed from the start, port active, clean",
                    p,
                    Counters({}),
                    {},
                    ProblemType::kUnreachableRnic});
  }
  {
    ProbeEvidence p = LinkLoss(80, 39);
    p.ports = Ports({{20, 20}, {20, 0}, {20, 0}, {19, 19}, {1, 0}});
    rows.push_back(
        {"acl: two ports lose everything, two nothing", p, std::nullopt, {}, ProblemType::kAcl});
  }
  {
    ProbeEvidence p = LinkLoss(2000, 60);
    p.latency_ratio = 3.5;
    rows.push_back({"pfc misconfiguration: congested drops, no pause on the rail", p, std::nullopt,
                    0, ProblemType::kPfcMisconfiguration});
  }
  rows.push_back({"ecmp hash collision: one hot uplink among cool siblings, the rail paused",
                  UplinkLatency(3, 7, 0), std::nullopt, 12000, ProblemType::kEcmpHashCollision});
  rows.push_back({"cpu overload: processing delay, network fine",
                  HostDelay(6, true),
                  std::nullopt,
                  {},
                  ProblemType::kCpuOverload});
  {
    ProbeEvidence p = RnicLoss(400, 0);
    p.symptom = Symptom::kLatency;
    p.latency_ratio = 4;
    p.cluster_tail_latency_ratio = 1.8;
    rows.push_back({"pcie downgrade: x8 of x16 and pause frames sent",
                    p,
                    Counters({{v1::NIC_COUNTER_TX_PAUSE, 52000, 3}},
                             [](v1::NicTelemetry& t) { Pcie(t, 8, 16000); }),
                    {},
                    ProblemType::kPcieDowngrade});
  }
  {
    ProbeEvidence p = RnicLoss(400, 12);
    rows.push_back({"pcie downgrade by speed, with loss",
                    p,
                    Counters({{v1::NIC_COUNTER_TX_PAUSE, 900, 3}},
                             [](v1::NicTelemetry& t) { Pcie(t, 16, 8000); }),
                    {},
                    ProblemType::kPcieDowngrade});
  }
  // --- look-alikes ---
  rows.push_back({"loss with no counter movement stays link loss",
                  RnicLoss(1000, 21),
                  Counters({}),
                  {},
                  ProblemType::kUnclassified});
  rows.push_back({"loss without any telemetry",
                  RnicLoss(1000, 21),
                  std::nullopt,
                  {},
                  ProblemType::kUnclassified});
  {
    ProbeEvidence p = RnicLoss(400, 0);
    p.symptom = Symptom::kLatency;
    p.latency_ratio = 3;
    rows.push_back({"symbol errors without loss are not corruption of probes",
                    p,
                    Counters({{v1::NIC_COUNTER_SYMBOL_ERROR, 50}}),
                    {},
                    ProblemType::kUnclassified});
  }
  {
    ProbeEvidence p = RnicLoss(400, 400);
    p.failed_from_start = true;
    rows.push_back({"all failed from the start but the port is down: not a route",
                    p,
                    Counters({}, [](v1::NicTelemetry& t) { t.set_port_state(1); }),
                    {},
                    ProblemType::kUnclassified});
    rows.push_back({"all failed from the start, no telemetry: port state unknown",
                    p,
                    std::nullopt,
                    {},
                    ProblemType::kUnclassified});
  }
  {
    ProbeEvidence p = RnicLoss(400, 400);  // worked before, fails now: RNIC down
    rows.push_back({"all failing now after working: not unreachable from the start",
                    p,
                    Counters({}),
                    {},
                    ProblemType::kUnclassified});
  }
  {
    ProbeEvidence p = LinkLoss(80, 4);
    p.ports = Ports({{20, 1}, {20, 1}, {20, 1}, {20, 1}});
    rows.push_back({"random loss spread over all ports is not an acl",
                    p,
                    std::nullopt,
                    {},
                    ProblemType::kUnclassified});
  }
  {
    ProbeEvidence p = LinkLoss(80, 40);
    p.ports = Ports({{20, 20}, {20, 20}, {20, 0}, {20, 0}});
    p.ports[2].failures = 5;  // one port losing a quarter: a lossy link, not a filter
    rows.push_back({"a port with partial loss breaks the acl pattern",
                    p,
                    std::nullopt,
                    {},
                    ProblemType::kUnclassified});
  }
  {
    ProbeEvidence p = LinkLoss(2000, 60);
    p.latency_ratio = 3.5;
    rows.push_back({"congested drops while pause frames flow: PFC is working", p, std::nullopt,
                    5000, ProblemType::kUnclassified});
    rows.push_back({"congested drops, rail pause unknown", p, std::nullopt, std::nullopt,
                    ProblemType::kUnclassified});
    p.latency_ratio = 1.1;
    rows.push_back({"drops without congestion and no pause: not PFC", p, std::nullopt, 0,
                    ProblemType::kUnclassified});
  }
  rows.push_back({"every uplink of the rail hot: congestion, not one collision",
                  UplinkLatency(3, 7, 7), std::nullopt, 12000, ProblemType::kUnclassified});
  rows.push_back({"one hot uplink but no pause frames on the rail: a delay, not flows",
                  UplinkLatency(3, 7, 0), std::nullopt, 0, ProblemType::kUnclassified});
  rows.push_back({"one hot uplink, rail pause unknown", UplinkLatency(3, 7, 0), std::nullopt,
                  std::nullopt, ProblemType::kUnclassified});
  {
    ProbeEvidence p = UplinkLatency(3, 7, 0);
    p.rail_uplink = false;  // a spine-to-rail downlink
    rows.push_back({"a hot downlink is not an uplink hash collision", p, std::nullopt, 12000,
                    ProblemType::kUnclassified});
  }
  rows.push_back({"processing delay with network trouble is not cpu overload",
                  HostDelay(6, false),
                  std::nullopt,
                  {},
                  ProblemType::kUnclassified});
  rows.push_back({"processing delay barely above the fleet",
                  HostDelay(1.3, true),
                  std::nullopt,
                  {},
                  ProblemType::kUnclassified});
  {
    ProbeEvidence p = RnicLoss(400, 0);
    p.symptom = Symptom::kLatency;
    p.latency_ratio = 2;
    rows.push_back({"pcie downgraded but no pause frames sent: harmless",
                    p,
                    Counters({}, [](v1::NicTelemetry& t) { Pcie(t, 8, 16000); }),
                    {},
                    ProblemType::kUnclassified});
  }
  {
    ProbeEvidence p = RnicLoss(400, 120);
    p.bursts = true;
    p.bursts_seen = 3;
    rows.push_back({"flapping: the flap watch's bursts, no telemetry (a flapping incident)",
                    p,
                    std::nullopt,
                    {},
                    ProblemType::kFlapping});
  }
  {
    const auto down = [](v1::NicTelemetry& t) {
      t.set_port_state(1);
      t.set_carrier(v1::CARRIER_DOWN);
    };
    rows.push_back(
        {"went down once and stayed down: down, not flapping",
         RnicLoss(400, 400),
         Counters({{v1::NIC_COUNTER_LINK_DOWNED, 1}, {v1::NIC_COUNTER_CARRIER_CHANGES, 1}}, down),
         {},
         ProblemType::kUnclassified});
    rows.push_back({"came back up (one carrier change, no down): a recovery, not flapping",
                    RnicLoss(400, 120),
                    Counters({{v1::NIC_COUNTER_CARRIER_CHANGES, 1}}),
                    {},
                    ProblemType::kUnclassified});
    rows.push_back(
        {"down twice, down at the end: flapping",
         RnicLoss(400, 300),
         Counters({{v1::NIC_COUNTER_LINK_DOWNED, 2}, {v1::NIC_COUNTER_CARRIER_CHANGES, 3}}, down),
         {},
         ProblemType::kFlapping});
  }
  {
    // A down RNIC: its own probes fail to leave it (send failures, not loss).
    ProbeEvidence p = RnicLoss(420, 400);
    p.send_failures = 380;
    p.sent = 20;
    rows.push_back(
        {"unreachable RNIC: down, it cannot send, port down",
         p,
         Counters({{v1::NIC_COUNTER_LINK_DOWNED, 1}, {v1::NIC_COUNTER_CARRIER_CHANGES, 1}},
                  [](v1::NicTelemetry& t) {
                    t.set_port_state(1);
                    t.set_carrier(v1::CARRIER_DOWN);
                  }),
         {},
         ProblemType::kUnreachableRnic});
    rows.push_back({"unreachable RNIC: down, send failures alone (no telemetry)",
                    p,
                    std::nullopt,
                    {},
                    ProblemType::kUnreachableRnic});
    p.send_failures = 3;  // a QP reset: a working RNIC fails a few sends
    p.sent = 397;
    p.failures = 21;
    rows.push_back({"a few send failures with loss: not down",
                    p,
                    Counters({}),
                    {},
                    ProblemType::kUnclassified});
  }
  {
    ProbeEvidence p = RnicLoss(400, 0);
    p.symptom = Symptom::kLatency;
    p.latency_ratio = 3;
    p.send_failures = 400;
    rows.push_back({"send failures without loss to it: not down (they are no loss)",
                    p,
                    Counters({}),
                    {},
                    ProblemType::kUnclassified});
  }
  {
    ProbeEvidence p = RnicLoss(400, 0);
    p.symptom = Symptom::kLatency;
    p.latency_ratio = 3;
    rows.push_back({"pause frames sent at full PCIe width: not a downgrade",
                    p,
                    Counters({{v1::NIC_COUNTER_TX_PAUSE, 52000, 3}},
                             [](v1::NicTelemetry& t) { Pcie(t, 16, 16000); }),
                    {},
                    ProblemType::kUnclassified});
  }
  {
    ProbeEvidence p = LinkLoss(16, 8);
    p.ports = Ports({{4, 4}, {4, 0}, {4, 4}, {4, 0}});
    rows.push_back({"ports with too few probes each say nothing of an acl",
                    p,
                    std::nullopt,
                    {},
                    ProblemType::kUnclassified});
  }
  {
    ProbeEvidence p = UplinkLatency(3, 0, 0);
    rows.push_back({"a rail switch's only uplink hot: nothing to collide with", p, std::nullopt,
                    12000, ProblemType::kUnclassified});
  }
  // --- precedence ---
  {
    ProbeEvidence p = RnicLoss(400, 200);
    p.send_failures = 200;
    p.sent = 100;
    rows.push_back(
        {"down and up again while it could not send: flapping first",
         p,
         Counters({{v1::NIC_COUNTER_LINK_DOWNED, 2}, {v1::NIC_COUNTER_CARRIER_CHANGES, 4}}),
         {},
         ProblemType::kFlapping});
  }
  rows.push_back({"flaps and errors together: flapping first",
                  RnicLoss(400, 40),
                  Counters({{v1::NIC_COUNTER_LINK_DOWNED, 1}, {v1::NIC_COUNTER_SYMBOL_ERROR, 90}}),
                  {},
                  ProblemType::kFlapping});
  return rows;
}

TEST(diagnose, EachRowGetsItsType) {
  for (const Row& row : Table()) {
    TelemetryEvidence t;
    t.nic = row.nic ? &*row.nic : nullptr;
    t.rail_pause_received = row.rail_pause;
    const Diagnosis d = Diagnose(row.probes, t);
    EXPECT_EQ(ProblemTypeName(d.type), ProblemTypeName(row.want))
        << row.name << "\n  rule: " << d.rule << "\n  evidence: " << d.evidence;
    EXPECT_TRUE(d.rule.starts_with(std::string(ProblemTypeName(d.type)) + ":")) << d.rule;
    EXPECT_TRUE(d.evidence.starts_with(row.probes.name)) << d.evidence;
  }
}

TEST(diagnose, EvidenceSentencesNameTheCountersAndTheirRise) {
  const NicCounterTotals nic =
      Counters({{v1::NIC_COUNTER_SYMBOL_ERROR, 4210}, {v1::NIC_COUNTER_RX_FCS_ERRORS, 3980}});
  EXPECT_EQ(Diagnose(RnicLoss(1000, 21), {&nic, std::nullopt}).evidence,
            "RNIC h003 nic1 losing 2.1% of probes; symbol errors +4,210 and FCS errors +3,980 "
            "in the window: likely a dirty optic or bad cable");

  const NicCounterTotals pcie = Counters({{v1::NIC_COUNTER_TX_PAUSE, 52000, 3}},
                                         [](v1::NicTelemetry& t) { Pcie(t, 8, 16000); });
  ProbeEvidence p = RnicLoss(400, 0);
  p.symptom = Symptom::kLatency;
  p.latency_ratio = 4;
  p.cluster_tail_latency_ratio = 1.8;
  EXPECT_EQ(Diagnose(p, {&pcie, std::nullopt}).evidence,
            "RNIC h003 nic1 latency 4.0x its baseline; PCIe link x8 of x16 at 16 GT/s of 16 GT/s, "
            "pause frames sent +52,000, cluster tail latency 1.8x: the NIC cannot drain into host "
            "memory and pauses the fabric (reseat the card, check the slot)");

  // A downgraded PCIe link is named whatever the type.
  const NicCounterTotals narrow = Counters({}, [](v1::NicTelemetry& t) { Pcie(t, 8, 16000); });
  EXPECT_EQ(Diagnose(RnicLoss(1000, 21), {&narrow, std::nullopt}).evidence,
            "RNIC h003 nic1 losing 2.1% of probes; no NIC counter moved; its PCIe link runs x8 of "
            "x16 at 16 GT/s of 16 GT/s");

  const NicCounterTotals clean = Counters({});
  EXPECT_EQ(Diagnose(RnicLoss(1000, 21), {&clean, std::nullopt}).evidence,
            "RNIC h003 nic1 losing 2.1% of probes; no NIC counter moved");

  const NicCounterTotals down = Counters({{v1::NIC_COUNTER_LINK_DOWNED, 1}},
                                         [](v1::NicTelemetry& t) { t.set_port_state(1); });
  ProbeEvidence cannot = RnicLoss(420, 400);
  cannot.send_failures = 1380;
  cannot.sent = 20;
  EXPECT_EQ(Diagnose(cannot, {&down, std::nullopt}).evidence,
            "RNIC h003 nic1 losing 95.2% of probes; it could not send 1,380 of its 1,400 own "
            "probes and its port is down (link_downed +1): the RNIC is down (check the NIC, its "
            "cable and its driver)");
  EXPECT_EQ(Diagnose(cannot, {nullptr, std::nullopt}).evidence,
            "RNIC h003 nic1 losing 95.2% of probes; it could not send 1,380 of its 1,400 own "
            "probes (no NIC counters reported): the RNIC is down (check the NIC, its cable and "
            "its driver)");
}

TEST(diagnose, GroupThousands) {
  EXPECT_EQ(GroupThousands(0), "0");
  EXPECT_EQ(GroupThousands(999), "999");
  EXPECT_EQ(GroupThousands(1000), "1,000");
  EXPECT_EQ(GroupThousands(4210), "4,210");
  EXPECT_EQ(GroupThousands(1234567), "1,234,567");
}

}  // namespace
}  // namespace hostmesh::analyzer::diagnosis
