// Who a certificate lets speak: its DNS SANs, and SPIFFE URIs of the
// configured trust domain; and the in-flight byte budget.
#include "analyzer/ingest/peer_identity.h"

#include <gtest/gtest.h>

#include "analyzer/ingest/agent_quota.h"
#include "analyzer/ingest/in_flight_budget.h"

namespace hostmesh::analyzer::ingest {
namespace {

TEST(peer_identity, DnsSansNameWhatACertificateMaySpeakFor) {
  const PeerIdentity peer = PeerIdentity::FromSans({"h003", "h003.rack7.example"}, {}, "");
  EXPECT_TRUE(peer.MaySpeakFor("h003"));
  EXPECT_TRUE(peer.MaySpeakFor("h003.rack7.example"));
  EXPECT_FALSE(peer.MaySpeakFor("h004"));
  EXPECT_FALSE(peer.MaySpeakFor("h00"));
  EXPECT_FALSE(peer.MaySpeakFor(""));
  EXPECT_EQ(peer.Describe(), "a certificate for 'h003', 'h003.rack7.example'");
}

TEST(peer_identity, SpiffeUrisCountOnlyInTheConfiguredTrustDomain) {
  const std::vector<std::string> uris = {
      "spiffe://gpu.example/host/h007", "spiffe://other.example/host/h008",
      "spiffe://gpu.example/host/h009/extra", "spiffe://gpu.example/workload/h010", "https://h011"};
  const PeerIdentity peer = PeerIdentity::FromSans({}, uris, "gpu.example");
  EXPECT_EQ(peer.names(), (std::vector<std::string>{"h007"}));
  EXPECT_TRUE(PeerIdentity::FromSans({}, uris, "").names().empty());  // no domain: no URIs
}

TEST(peer_identity, NoNamesMayNothingAndInsecureMayAnything) {
  const PeerIdentity none = PeerIdentity::FromSans({}, {}, "");
  EXPECT_FALSE(none.MaySpeakFor("h1"));
  EXPECT_EQ(none.Describe(), "a certificate that names no host");
  EXPECT_TRUE(PeerIdentity::Anyone().MaySpeakFor("anything"));
}

TEST(peer_identity, AHostileCertificateIsDescribedInBrief) {
  std::vector<std::string> sans;
  for (int i = 0; i < 1000; ++i) sans.push_back("h" + std::to_string(i) + std::string(500, 'x'));
  const std::string text = PeerIdentity::FromSans(sans, {}, "").Describe();
  EXPECT_LT(text.size(), 400u);
  EXPECT_NE(text.find("and 996 more"), std::string::npos) << text;
}

TEST(in_flight_budget, TakesWhatFitsAndGivesItBack) {
  InFlightBudget budget(100);
  EXPECT_TRUE(budget.TryTake(60));
  EXPECT_FALSE(budget.TryTake(41));
  EXPECT_TRUE(budget.TryTake(40));
  EXPECT_EQ(budget.held(), 100u);
  EXPECT_FALSE(budget.TryTake(1));
  budget.Give(60);
  EXPECT_TRUE(budget.TryTake(60));
  EXPECT_FALSE(budget.TryTake(SIZE_MAX));  // no wrap-around
}

TEST(agent_quota, EachAgentHasItsBurstAndRefillsAtItsRate) {
  using std::chrono::seconds;
  AgentQuota quota({.bytes_per_second = 100, .burst_bytes = 1000, .max_agents = 10});
  const MonoTime t0{};
  EXPECT_TRUE(quota.Take("h1", 1000, t0));
  EXPECT_TRUE(quota.Take("h2", 600, t0));  // h1's use is not h2's
  EXPECT_FALSE(quota.InDebt("h1", t0));    // empty, not owing
  EXPECT_TRUE(quota.Take("h1", 300, t0 + seconds{3}));
  EXPECT_TRUE(quota.Take("h1", 1000, t0 + std::chrono::hours{1}));  // never past the burst
  EXPECT_FALSE(quota.Take("h1", 1, t0 + std::chrono::hours{1}));
}

// What was read was read: a batch over the bucket is refused and charged, and
// the agent's next streams wait (InDebt) until the refill has paid for it.
TEST(agent_quota, EveryByteReadIsPaidForAndAnAgentInDebtWaitsUntilItHasPaid) {
  using std::chrono::seconds;
  AgentQuota quota({.bytes_per_second = 100, .burst_bytes = 1000, .max_agents = 10});
  const MonoTime t0{};
  EXPECT_FALSE(quota.InDebt("h1", t0));  // never seen
  EXPECT_TRUE(quota.Take("h1", 900, t0));
  EXPECT_FALSE(quota.Take("h1", 300, t0));  // 100 there: refused, 200 owed
  EXPECT_TRUE(quota.InDebt("h1", t0));
  EXPECT_TRUE(quota.InDebt("h1", t0 + seconds{1}));
  EXPECT_FALSE(quota.InDebt("h1", t0 + seconds{2}));     // paid
  EXPECT_FALSE(quota.Take("h1", 300, t0 + seconds{3}));  // 100 there again: 200 owed
  EXPECT_TRUE(quota.InDebt("h1", t0 + seconds{3}));
  EXPECT_TRUE(quota.Take("h1", 100, t0 + seconds{6}));  // paid, and 100 more refilled
  EXPECT_FALSE(quota.InDebt("h2", t0));                 // h1's debt is not h2's
}

// A charge says whether it found the bucket clear: the refused-bytes
// allowance acks a refused batch that put it in debt (however large), and
// only one sent while already owing goes unanswered.
TEST(agent_quota, AChargeSaysWhetherItFoundTheBucketClearOrAlreadyOwing) {
  using Taken = AgentQuota::Taken;
  AgentQuota quota({.bytes_per_second = 100, .burst_bytes = 1000, .max_agents = 10});
  const MonoTime t0{};
  EXPECT_EQ(quota.Charge("h1", 400, t0), Taken::kHeld);
  EXPECT_EQ(quota.Charge("h1", 8000, t0), Taken::kIntoDebt);  // far past the burst
  EXPECT_EQ(quota.Charge("h1", 1, t0), Taken::kAlreadyOwed);
  EXPECT_EQ(quota.Charge("h1", 1, t0 + std::chrono::seconds{70}), Taken::kAlreadyOwed);
  EXPECT_EQ(quota.Charge("h1", 1, t0 + std::chrono::seconds{75}), Taken::kHeld);  // paid
  EXPECT_EQ(quota.Charge("h2", 2000, t0), Taken::kIntoDebt);  // a first charge past the burst
}

TEST(agent_quota, MadeUpAgentIdsCannotGrowItPastItsBound) {
  AgentQuota quota({.bytes_per_second = 100, .burst_bytes = 1000, .max_agents = 50});
  for (int i = 0; i < 10'000; ++i) {
    EXPECT_TRUE(
        quota.Take("forged-" + std::to_string(i), 10, MonoTime{} + std::chrono::seconds{i}));
  }
  EXPECT_LE(quota.agents(), 50u);
}

}  // namespace
}  // namespace hostmesh::analyzer::ingest
