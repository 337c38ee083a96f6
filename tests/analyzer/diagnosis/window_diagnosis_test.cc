// A window's findings diagnosed together: telemetry found by agent and NIC
// name, the rail's pause frames summed over its NICs, and NICs that did not
// report leaving their findings unclassified.
#include "analyzer/diagnosis/window_diagnosis.h"

#include <gtest/gtest.h>

#include "tests/analyzer/telemetry/telemetry_sample.h"

namespace hostmesh::analyzer::diagnosis {
namespace {

using telemetry::testing::Delta;
using telemetry::testing::Sample;

constexpr std::int64_t kS = 1'000'000'000;

telemetry::NicTelemetryRow Row(std::string agent, std::string nic,
                               std::initializer_list<Delta> deltas) {
  telemetry::NicTelemetryRow row{std::move(agent), std::move(nic), {}};
  row.totals.Add(Sample(0, 0, 10 * kS, deltas));
  return row;
}

ProbeEvidence Loss(std::string name, Subject subject, std::uint64_t probes,
                   std::uint64_t failures) {
  ProbeEvidence p;
  p.subject = subject;
  p.symptom = Symptom::kLoss;
  p.name = std::move(name);
  p.probes = probes;
  p.failures = failures;
  return p;
}

TEST(window_diagnosis, FindsEachFindingsTelemetryAndTheRailsPause) {
  const TelemetryByNic telemetry = IndexTelemetry({
      Row("h003", "nic1", {{v1::NIC_COUNTER_SYMBOL_ERROR, 4210}}),
      Row("h004", "nic1", {{v1::NIC_COUNTER_RX_PAUSE, 0, 3}}),
      Row("h005", "nic1", {{v1::NIC_COUNTER_RX_PAUSE, 0, 3}}),
      Row("h006", "nic2", {{v1::NIC_COUNTER_RX_PAUSE, 800, 3}}),
  });
  WindowEvidence w;
  w.rnics.push_back({{"h003", "nic1"}, Loss("RNIC h003 nic1", Subject::kRnic, 1000, 21)});
  w.rnics.push_back({{"h009", "nic1"}, Loss("RNIC h009 nic1", Subject::kRnic, 1000, 21)});
  ProbeEvidence congested = Loss("link p0r1-s02", Subject::kLink, 2000, 60);
  congested.latency_ratio = 3;
  w.links.push_back({7, congested, std::nullopt, {{"h004", "nic1"}, {"h005", "nic1"}}});
  w.links.push_back({8, congested, std::nullopt, {{"h006", "nic2"}}});
  w.links.push_back({9, congested, std::nullopt, {{"h010", "nic2"}}});  // never reported
  ProbeEvidence access = Loss("link h003.nic1-p0r1", Subject::kLink, 500, 9);
  w.links.push_back({10, access, NicRef{"h003", "nic1"}, {}});
  ProbeEvidence host;
  host.subject = Subject::kHost;
  host.symptom = Symptom::kProcessingDelay;
  host.name = "host h005";
  host.processing_ratio = 5;
  host.network_fine = true;
  w.hosts.push_back({"h005", host});

  const WindowDiagnosis d = DiagnoseWindow(w, telemetry);
  ASSERT_EQ(d.rnics.size(), 2U);
  EXPECT_EQ(d.rnics[0].type, ProblemType::kCorruption);
  EXPECT_EQ(d.rnics[1].type, ProblemType::kUnclassified);
  EXPECT_EQ(d.rnics[1].evidence, "RNIC h009 nic1 losing 2.1% of probes; no NIC counters reported");
  ASSERT_EQ(d.links.size(), 4U);
  EXPECT_EQ(d.links[0].type, ProblemType::kPfcMisconfiguration) << d.links[0].evidence;
  EXPECT_EQ(d.links[1].type, ProblemType::kUnclassified) << "pause frames flowed";
  EXPECT_EQ(d.links[2].type, ProblemType::kUnclassified) << "pause unknown";
  EXPECT_EQ(d.links[3].type, ProblemType::kCorruption) << "the access link's NIC counts errors";
  ASSERT_EQ(d.hosts.size(), 1U);
  EXPECT_EQ(d.hosts[0].type, ProblemType::kCpuOverload);
}

}  // namespace
}  // namespace hostmesh::analyzer::diagnosis
