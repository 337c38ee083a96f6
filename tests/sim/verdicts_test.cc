// Verdict extraction from hand-made window reports: the analyzer's own and the
// paper's (10% RNIC rule, Algorithm 1's top-voted links).

#include "sim/verdicts.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/sim/sim_test_util.h"

namespace hostmesh::sim {
namespace {

using testing::DeviceNamed;
using testing::LinkNamed;
using Kind = analysis::Component::Kind;

analysis::Suspect LinkSuspect(LinkId link) {
  analysis::Suspect s;
  s.component = {Kind::kLink, link, 0, 0};
  return s;
}
analysis::Suspect RnicSuspect(analysis::HostId host, analysis::NicId nic) {
  analysis::Suspect s;
  s.component = {Kind::kRnic, analysis::kUnknown, host, nic};
  return s;
}
analysis::LinkRank Votes(LinkId link, std::uint64_t votes) {
  analysis::LinkRank r;
  r.link = link;
  r.votes = votes;
  return r;
}
analysis::RnicStatus Rnic(analysis::HostId host, analysis::NicId nic, bool paper, bool ours) {
  analysis::RnicStatus r;
  r.host = host;
  r.nic = nic;
  r.paper_anomalous = paper;
  r.anomalous = ours;
  return r;
}

class VerdictsTest : public ::testing::Test {
 protected:
  const Fleet fleet_{{4, 2, 2, 1, 2, 0}};
  // Analyzer host ids in upload order: 0 is fleet host 3, 1 is 0, 2 is 2, 3 is 1.
  const std::vector<std::uint32_t> host_of_{3, 0, 2, 1};
  const LinkId a_ = LinkNamed(fleet_, "p0r0-s00");
  const LinkId b_ = LinkNamed(fleet_, "p0r1-s01");
  const LinkId c_ = LinkNamed(fleet_, "p0r1-s00");
  const ComponentKey A = LinkKey(Category::kLoss, a_);
  const ComponentKey B = LinkKey(Category::kLoss, b_);
  const ComponentKey C = LinkKey(Category::kLoss, c_);
};

TEST_F(VerdictsTest, OursNamesCulpritsByFleetHostMostEvidentFirst) {
  analysis::WindowReport r;
  r.loss.culprits = {LinkSuspect(a_), RnicSuspect(0, 1), LinkSuspect(a_)};
  const Verdict v = OurVerdict(r, fleet_, host_of_);
  EXPECT_EQ(v.named, (std::vector<ComponentKey>{A, RnicKey(Category::kLoss, 3, 1)}));
  EXPECT_EQ(v.top_loss, A);
}

TEST_F(VerdictsTest, OursTopIsTheLossCulpritWithTheMostEvidence) {
  analysis::WindowReport r;
  r.evidence_threshold = 10;
  auto link = LinkSuspect(a_);
  link.z = 12;
  link.confidence = 0.9;
  link.raw_confidence = 0.7;
  auto other = LinkSuspect(LinkNamed(fleet_, "p0r0-s01"));
  other.z = 11;
  r.loss.culprits = {link, other};
  const DeviceId rail = DeviceNamed(fleet_, "p0r0");
  analysis::SwitchRank sw;
  sw.id = rail;
  sw.culprit = true;
  sw.evidence = 15;  // the switch itself, blamed with more evidence than any link
  sw.raw_confidence = 0.8;
  sw.confidence = 0.85;
  r.loss.switches = {sw};
  r.loss.culprit_switches = {rail};
  Verdict v = OurVerdict(r, fleet_, host_of_);
  ASSERT_EQ(v.named.size(), 3u);
  EXPECT_EQ(v.named.back(), SwitchKey(Category::kLoss, rail));
  EXPECT_EQ(v.top_loss, SwitchKey(Category::kLoss, rail));
  // Each verdict carries the analyzer's calibrated confidence and its raw score.
  EXPECT_DOUBLE_EQ(v.confidence[0], 0.9);
  EXPECT_DOUBLE_EQ(v.raw_confidence[0], 0.7);
  EXPECT_DOUBLE_EQ(v.confidence[2], 0.85);
  EXPECT_DOUBLE_EQ(v.raw_confidence[2], 0.8);

  // Less evidence than the first link: the link is on top.
  r.loss.switches[0].evidence = 5;
  v = OurVerdict(r, fleet_, host_of_);
  EXPECT_EQ(v.top_loss, A);
  // An RNIC with the most evidence is on top.
  auto rnic = RnicSuspect(2, 0);
  rnic.z = 20;
  r.loss.culprits.push_back(rnic);
  v = OurVerdict(r, fleet_, host_of_);
  EXPECT_EQ(v.top_loss, RnicKey(Category::kLoss, 2, 0));
}

TEST_F(VerdictsTest, OursLatencyAndHostsAreNamedButNeverTopForLoss) {
  analysis::WindowReport r;
  r.latency.culprits = {LinkSuspect(b_), RnicSuspect(3, 0)};
  analysis::ProcessingFlag flag;
  flag.host = 1;
  r.processing_flags = {flag};
  r.rnics = {Rnic(2, 0, true, false)};  // the paper's rule is not ours
  r.loss.baseline = {Votes(a_, 9)};
  r.sla.cluster.network_drops = 9;
  const Verdict v = OurVerdict(r, fleet_, host_of_);
  EXPECT_EQ(v.named, (std::vector<ComponentKey>{LinkKey(Category::kLatency, b_),
                                                RnicKey(Category::kLatency, 1, 0), HostKey(0)}));
  EXPECT_EQ(v.top_loss, 0u);
}

TEST_F(VerdictsTest, AnEmptyReportNamesNothing) {
  const analysis::WindowReport r;
  EXPECT_TRUE(OurVerdict(r, fleet_, host_of_).named.empty());
  EXPECT_EQ(OurVerdict(r, fleet_, host_of_).top_loss, 0u);
  EXPECT_TRUE(PaperVerdict(r, fleet_, host_of_).named.empty());
  EXPECT_EQ(PaperVerdict(r, fleet_, host_of_).top_loss, 0u);
}

TEST_F(VerdictsTest, PaperNamesRnicsOverTheTenPercentRuleFirst) {
  analysis::WindowReport r;
  r.rnics = {Rnic(0, 0, false, true), Rnic(1, 1, true, false), Rnic(0, 1, true, true)};
  r.loss.baseline = {Votes(a_, 4)};
  r.sla.cluster.network_drops = 4;
  const Verdict v = PaperVerdict(r, fleet_, host_of_);
  EXPECT_EQ(v.named, (std::vector<ComponentKey>{RnicKey(Category::kLoss, 0, 1),
                                                RnicKey(Category::kLoss, 3, 1), A}));
  EXPECT_EQ(v.top_loss, RnicKey(Category::kLoss, 0, 1));
}

TEST_F(VerdictsTest, PaperNamesEveryLinkWithTheMostVotes) {
  analysis::WindowReport r;
  r.loss.baseline = {Votes(b_, 5), Votes(c_, 3), Votes(a_, 5)};
  r.sla.cluster.network_drops = 12;
  r.latency.baseline = {Votes(c_, 1), Votes(b_, 2), Votes(a_, 2)};
  const Verdict v = PaperVerdict(r, fleet_, host_of_);
  EXPECT_EQ(v.named, (std::vector<ComponentKey>{B, A, LinkKey(Category::kLatency, b_),
                                                LinkKey(Category::kLatency, a_)}));
  EXPECT_EQ(v.top_loss, B);  // the first of the tie, in the ranking's order
}

TEST_F(VerdictsTest, PaperVotesCountOnlyWithNetworkDrops) {
  analysis::WindowReport r;
  r.loss.baseline = {Votes(a_, 5)};
  r.sla.cluster.network_drops = 0;  // every timeout was an RNIC's
  EXPECT_TRUE(PaperVerdict(r, fleet_, host_of_).named.empty());
  r.loss.baseline = {Votes(a_, 0), Votes(b_, 0)};  // nothing voted
  r.sla.cluster.network_drops = 3;
  EXPECT_TRUE(PaperVerdict(r, fleet_, host_of_).named.empty());
}

TEST_F(VerdictsTest, ANicsOwnLinkIsNamedAsItsRnicAsTheTruthNamesIt) {
  // Algorithm 1 votes on whole paths: a NIC's link can top the ranking.
  const LinkId nic_link = LinkNamed(fleet_, "h002.nic1-p0r1");
  analysis::WindowReport r;
  r.loss.baseline = {Votes(nic_link, 7), Votes(a_, 3)};
  r.sla.cluster.network_drops = 7;
  r.latency.baseline = {Votes(nic_link, 2)};
  const Verdict v = PaperVerdict(r, fleet_, host_of_);
  // By fleet host from the topology (no analyzer host id involved).
  EXPECT_EQ(v.named, (std::vector<ComponentKey>{RnicKey(Category::kLoss, 2, 1),
                                                RnicKey(Category::kLatency, 2, 1)}));
  EXPECT_EQ(v.top_loss, RnicKey(Category::kLoss, 2, 1));
  // Ours the same, should the analyzer ever blame a NIC link as a link.
  r.loss.culprits = {LinkSuspect(nic_link)};
  EXPECT_EQ(OurVerdict(r, fleet_, host_of_).named,
            std::vector<ComponentKey>{RnicKey(Category::kLoss, 2, 1)});
}

TEST_F(VerdictsTest, PaperIgnoresOurInference) {
  analysis::WindowReport r;
  r.loss.culprits = {LinkSuspect(a_)};
  r.loss.culprit_switches = {DeviceNamed(fleet_, "p0r0")};
  r.latency.culprits = {LinkSuspect(b_)};
  analysis::ProcessingFlag flag;
  flag.host = 1;
  r.processing_flags = {flag};
  EXPECT_TRUE(PaperVerdict(r, fleet_, host_of_).named.empty());
}

}  // namespace
}  // namespace hostmesh::sim
