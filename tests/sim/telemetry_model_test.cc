// The NIC counter models: what each fault moves on which NIC, only while it
// lasts, read through the agent's Diff as the sampler would; the new fault
// kinds' effect on packets; the per-kind diagnosis score.
#include "sim/telemetry_model.h"

#include <gtest/gtest.h>

#include <sstream>

#include "agent/telemetry/telemetry_proto.h"
#include "sim/diagnosis_score.h"
#include "sim/faults.h"
#include "sim/verdicts.h"
#include "tests/sim/sim_test_util.h"

namespace hostmesh::sim {
namespace {

using agent::telemetry::NicCounter;
using agent::telemetry::NicDelta;
using testing::kSecond;
using testing::LinkNamed;

constexpr std::int64_t kStart = 10 * kSecond;
constexpr std::int64_t kEnd = 50 * kSecond;
constexpr std::size_t kPfc = 3;

class TelemetryModelTest : public ::testing::Test {
 protected:
  Fault OnNic(FaultKind kind, std::uint32_t host = 2, std::uint32_t nic = 1) {
    Fault f;
    f.kind = kind;
    f.host = host;
    f.nic = nic;
    f.start_ns = kStart;
    f.end_ns = kEnd;
    return f;
  }
  // What the sampler uploads for [from, to) under `faults`.
  NicDelta Delta(const std::vector<Fault>& faults, std::uint32_t host, std::uint32_t nic,
                 std::int64_t from, std::int64_t to) {
    const FaultSet set(fleet_, faults, {}, 1);
    const TelemetryModel model(fleet_, set);
    return agent::telemetry::Diff(model.Read(host, nic, from, 0), model.Read(host, nic, to, 0));
  }
  static std::uint64_t Get(const NicDelta& d, NicCounter c) { return d[c].value_or(~0ULL); }

  const Fleet fleet_{{4, 2, 2, 1, 2, 0}};
};

TEST_F(TelemetryModelTest, AHealthyNicMovesOnlyItsDataCountersAndIsUp) {
  const NicDelta d = Delta({}, 2, 1, 0, 10 * kSecond);
  for (std::size_t i = 0; i < agent::telemetry::kNicCounterCount; ++i) {
    const auto c = static_cast<NicCounter>(i);
    ASSERT_TRUE(d[c].has_value()) << i;  // every counter is read
    if (c == NicCounter::kPortRcvDataBytes || c == NicCounter::kPortXmitDataBytes) {
      EXPECT_GT(*d[c], 0u);
    } else {
      EXPECT_EQ(*d[c], 0u) << i;
    }
  }
  EXPECT_EQ(d.port_state, 4u);
  EXPECT_EQ(d.carrier, agent::telemetry::Carrier::kUp);
  ASSERT_TRUE(d.pcie.has_value());
  EXPECT_FALSE(d.pcie->Downgraded());
  EXPECT_EQ(*d.tx_pfc_pause[kPfc], 0u);
}

TEST_F(TelemetryModelTest, CorruptionRaisesSymbolAndFcsErrorsAtItsRateWhileItLasts) {
  Fault f = OnNic(FaultKind::kRnicLoss);
  f.rate = 0.01;
  const NicDelta during = Delta({f}, 2, 1, 20 * kSecond, 30 * kSecond);
  // 1e6 frames/s for 10 s at 1%.
  EXPECT_EQ(Get(during, NicCounter::kSymbolError), 100'000u);
  EXPECT_EQ(Get(during, NicCounter::kRxFcsErrors), 90'000u);
  EXPECT_EQ(Get(during, NicCounter::kLinkDowned), 0u);
  EXPECT_EQ(Get(Delta({f}, 2, 1, 0, kStart), NicCounter::kSymbolError), 0u);
  EXPECT_EQ(Get(Delta({f}, 2, 1, kEnd, kEnd + 10 * kSecond), NicCounter::kSymbolError), 0u);
  // Half inside: half the errors.
  EXPECT_EQ(Get(Delta({f}, 2, 1, 5 * kSecond, 15 * kSecond), NicCounter::kSymbolError), 50'000u);
  // Another NIC of the host, and the same NIC of another host, stay clean.
  EXPECT_EQ(Get(Delta({f}, 2, 0, 20 * kSecond, 30 * kSecond), NicCounter::kSymbolError), 0u);
  EXPECT_EQ(Get(Delta({f}, 1, 1, 20 * kSecond, 30 * kSecond), NicCounter::kSymbolError), 0u);
}

TEST_F(TelemetryModelTest, FlappingCountsDownsAndCarrierChangesAndThePortStateFollows) {
  Fault f = OnNic(FaultKind::kRnicFlap);
  f.period_ns = 4 * kSecond;  // down 10-12, 14-16, 18-20, ...
  const NicDelta d = Delta({f}, 2, 1, 9 * kSecond, 21 * kSecond);
  EXPECT_EQ(Get(d, NicCounter::kLinkDowned), 3u);  // downs at 10, 14, 18
  EXPECT_EQ(Get(d, NicCounter::kLinkDownEvents), 3u);
  EXPECT_EQ(Get(d, NicCounter::kCarrierChanges), 6u);  // and ups at 12, 16, 20
  EXPECT_EQ(d.port_state, 4u);                         // up at 21
  const NicDelta down = Delta({f}, 2, 1, 9 * kSecond, 23 * kSecond);
  EXPECT_EQ(Get(down, NicCounter::kLinkDowned), 4u);  // and at 22, still down at 23
  EXPECT_EQ(Get(down, NicCounter::kCarrierChanges), 7u);
  EXPECT_NE(down.port_state, 4u);
  EXPECT_EQ(down.carrier, agent::telemetry::Carrier::kDown);
}

TEST_F(TelemetryModelTest, ADownNicGoesDownOnceAndComesBackAtTheEnd) {
  const Fault f = OnNic(FaultKind::kRnicDown);
  const NicDelta first = Delta({f}, 2, 1, 0, 20 * kSecond);
  EXPECT_EQ(Get(first, NicCounter::kLinkDowned), 1u);
  EXPECT_EQ(Get(first, NicCounter::kCarrierChanges), 1u);
  EXPECT_NE(first.port_state, 4u);
  const NicDelta quiet = Delta({f}, 2, 1, 20 * kSecond, 40 * kSecond);
  EXPECT_EQ(Get(quiet, NicCounter::kLinkDowned), 0u);
  EXPECT_EQ(Get(quiet, NicCounter::kPortRcvDataBytes), 0u);  // no traffic while down
  const NicDelta back = Delta({f}, 2, 1, 40 * kSecond, 60 * kSecond);
  EXPECT_EQ(Get(back, NicCounter::kCarrierChanges), 1u);
  EXPECT_EQ(back.port_state, 4u);
}

TEST_F(TelemetryModelTest, PcieDowngradeNarrowsTheLinkAndSendsPauseFrames) {
  Fault f = OnNic(FaultKind::kPcieDowngrade);
  f.rate = 0.02;
  const NicDelta d = Delta({f}, 2, 1, 20 * kSecond, 30 * kSecond);
  ASSERT_TRUE(d.pcie.has_value());
  EXPECT_EQ(d.pcie->current_width, 8u);
  EXPECT_TRUE(d.pcie->Downgraded());
  EXPECT_EQ(*d.tx_pfc_pause[kPfc], 20'000u);
  EXPECT_EQ(*d.rx_pfc_pause[kPfc], 0u);
  EXPECT_EQ(Get(d, NicCounter::kRxDiscardsPhy), 200'000u);
  EXPECT_EQ(Get(d, NicCounter::kSymbolError), 0u);  // not corruption
  EXPECT_FALSE(Delta({f}, 2, 1, kEnd, kEnd + kSecond).pcie->Downgraded());
}

TEST_F(TelemetryModelTest, EcmpCollisionPausesTheNicsBelowTheHotUplinkOnly) {
  Fault f;
  f.kind = FaultKind::kEcmpCollision;
  f.link = LinkNamed(fleet_, "p0r1-s00");
  f.added_ns = 50'000;
  f.start_ns = kStart;
  f.end_ns = kEnd;
  // Rail 1's NICs (nic 1 of every host) are cabled to p0r1; rail 0's are not.
  for (std::uint32_t host = 0; host < 4; ++host) {
    EXPECT_EQ(*Delta({f}, host, 1, 20 * kSecond, 30 * kSecond).rx_pfc_pause[kPfc], 20'000u);
    EXPECT_EQ(*Delta({f}, host, 0, 20 * kSecond, 30 * kSecond).rx_pfc_pause[kPfc], 0u);
  }
}

TEST_F(TelemetryModelTest, FaultsSeenOnlyByProbesMoveNoCounter) {
  Fault route = OnNic(FaultKind::kMissingRoute);
  Fault pfc;
  pfc.kind = FaultKind::kPfcMisconfig;
  pfc.link = LinkNamed(fleet_, "p0r1-s00");
  pfc.rate = 0.05;
  pfc.added_ns = 50'000;
  pfc.start_ns = kStart;
  pfc.end_ns = kEnd;
  for (std::uint32_t nic : {0u, 1u}) {
    const NicDelta d = Delta({route, pfc}, 2, nic, 20 * kSecond, 30 * kSecond);
    for (std::size_t i = 0; i < agent::telemetry::kNicCounterCount; ++i) {
      const auto c = static_cast<NicCounter>(i);
      if (c != NicCounter::kPortRcvDataBytes && c != NicCounter::kPortXmitDataBytes) {
        EXPECT_EQ(*d[c], 0u) << i;
      }
    }
    EXPECT_EQ(d.port_state, 4u);
    EXPECT_EQ(*d.rx_pfc_pause[kPfc], 0u);
  }
  // What the probes meet instead: the RNIC unreachable, the link lossy and slow.
  const FaultSet set(fleet_, {route, pfc}, {}, 1);
  EXPECT_EQ(set.RnicDrop(2, 1, 20 * kSecond), 1.0);
  EXPECT_EQ(set.RnicDrop(2, 0, 20 * kSecond), 0.0);
  EXPECT_NEAR(set.LinkDrop(pfc.link, true, 50000, 20 * kSecond), 0.05, 1e-12);
  EXPECT_EQ(set.LinkLatency(pfc.link, false, 20 * kSecond), 50'000);
  EXPECT_EQ(set.LinkLatency(pfc.link, false, kEnd), 0);
}

TEST_F(TelemetryModelTest, TheSamplesGoThroughTheAgentsWireForm) {
  Fault f = OnNic(FaultKind::kRnicLoss);
  f.rate = 0.01;
  const v1::NicTelemetry t =
      agent::telemetry::ToProto(1, Delta({f}, 2, 1, 20 * kSecond, 30 * kSecond));
  EXPECT_EQ(t.nic(), 1u);
  EXPECT_EQ(t.end_ns() - t.start_ns(), 10 * kSecond);
  bool symbol = false;
  for (const v1::CounterDelta& c : t.deltas()) {
    if (c.counter() == v1::NIC_COUNTER_SYMBOL_ERROR) symbol = c.delta() == 100'000;
  }
  EXPECT_TRUE(symbol);
  EXPECT_EQ(t.port_state(), 4u);
}

TEST(DiagnosisScore, AFaultIsRightOnlyWithItsTypeAndNoOther) {
  const Fleet fleet({4, 2, 2, 1, 2, 0});
  Fault corrupt;
  corrupt.kind = FaultKind::kRnicLoss;
  corrupt.host = 1;
  corrupt.nic = 0;
  corrupt.start_ns = 20 * kSecond;
  corrupt.end_ns = 80 * kSecond;
  Fault gray;
  gray.kind = FaultKind::kLinkLoss;
  gray.link = LinkNamed(fleet, "p0r1-s00");
  gray.start_ns = 20 * kSecond;
  gray.end_ns = 80 * kSecond;
  const ComponentKey rnic = TruthOf(fleet, corrupt).components.at(0);
  const ComponentKey link = TruthOf(fleet, gray).components.at(0);
  DiagnosisScore score;
  ScoreDiagnosis(fleet, {corrupt, gray},
                 {{rnic, 20 * kSecond, 80 * kSecond, "rnic_lossy", "corruption"},
                  {link, 20 * kSecond, 80 * kSecond, "link_loss", "unclassified"}},
                 testing::kWindow, score);
  EXPECT_EQ(score[FaultKind::kRnicLoss].right, 1u);
  EXPECT_EQ(score[FaultKind::kLinkLoss].right, 1u);  // a look-alike left unclassified

  DiagnosisScore wrong;
  ScoreDiagnosis(fleet, {corrupt, gray},
                 {{rnic, 20 * kSecond, 80 * kSecond, "rnic_lossy", "corruption"},
                  {rnic, 40 * kSecond, 80 * kSecond, "rnic_lossy", "flapping"},
                  {link, 20 * kSecond, 80 * kSecond, "link_loss", "acl"}},
                 testing::kWindow, wrong);
  EXPECT_EQ(wrong[FaultKind::kRnicLoss].with_incident, 1u);
  EXPECT_EQ(wrong[FaultKind::kRnicLoss].right, 0u);
  EXPECT_EQ(wrong[FaultKind::kRnicLoss].named_instead["flapping"], 1u);
  EXPECT_EQ(wrong[FaultKind::kLinkLoss].named_instead["acl"], 1u);
  std::ostringstream table;
  PrintDiagnosisScore(table, wrong);
  // The eight types first, then the look-alikes.
  EXPECT_LT(table.str().find("rnic_loss        corruption"),
            table.str().find("link_loss        unclassified"));
}

}  // namespace
}  // namespace hostmesh::sim
