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
  AgentQuota quota({.bytes_per_second = 100, .burst_bytes = 1000, .max_agents = 10});
  const MonoTime t0{};
  EXPECT_TRUE(quota.Take("h1", 1000, t0));
  EXPECT_FALSE(quota.Take("h1", 1, t0));
  EXPECT_TRUE(quota.Take("h2", 600, t0));                             // h1's use is not h2's
  EXPECT_FALSE(quota.Take("h1", 300, t0 + std::chrono::seconds{2}));  // 200 refilled
  EXPECT_TRUE(quota.Take("h1", 300, t0 + std::chrono::seconds{3}));
  EXPECT_TRUE(quota.Take("h1", 1000, t0 + std::chrono::hours{1}));  // never past the burst
  EXPECT_FALSE(quota.Take("h1", 1, t0 + std::chrono::hours{1}));
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
