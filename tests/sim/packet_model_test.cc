// The packet model: where a probe's packet is lost (by link and direction,
// switch, NIC), how long it takes, TTL-limited crossings for traceroute and the
// way back of a switch's ICMP reply.

#include "sim/packet_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "tests/sim/sim_test_util.h"

namespace hostmesh::sim {
namespace {

using testing::DeviceNamed;
using testing::kSecond;
using testing::LinkNamed;

constexpr std::int64_t kT = 5 * kSecond;  // inside every fault below
constexpr std::uint16_t kDport = 4791;

// No randomness in the delays: latencies are exact sums.
LatencyModel Quiet() {
  LatencyModel m;
  m.cable_spread_ns = 0;
  m.hop_jitter_mean_ns = 0;
  m.spike_probability = 0;
  m.host_jitter_mean_ns = 0;
  m.host_stall_probability = 0;
  m.queue.sigma = 0;
  m.queue.tail = false;
  m.moving.share = 0;
  return m;
}

Fault Active(FaultKind kind) {
  Fault f;
  f.kind = kind;
  f.start_ns = 0;
  f.end_ns = 3600 * kSecond;
  return f;
}

// A probe's path, as the model routes it.
struct Probe {
  std::uint32_t host = 0, src = 0, dst = 0;
  std::uint16_t sport = 0;
  PathLinks links{};
  std::size_t count = 0;
  // The position of `link` on the path, or -1.
  int IndexOf(LinkId link) const {
    for (std::size_t i = 0; i < count; ++i) {
      if (links[i] == link) return static_cast<int>(i);
    }
    return -1;
  }
};

class PacketModelTest : public ::testing::Test {
 protected:
  void Build(std::vector<Fault> faults, LatencyModel latency = Quiet(),
             BackgroundLoss background = {}) {
    model_.reset();
    faults_ = std::make_unique<FaultSet>(fleet_, std::move(faults), background, 1);
    model_ = std::make_unique<PacketModel>(fleet_, *faults_, router_, latency);
  }
  // Every (host, src NIC, dst NIC) with `ports` source ports each.
  std::vector<Probe> Probes(int ports) const {
    std::vector<Probe> out;
    for (std::uint32_t h = 0; h < fleet_.hosts().size(); ++h) {
      for (std::uint32_t s = 0; s < rails_; ++s) {
        for (std::uint32_t d = 0; d < rails_; ++d) {
          if (s == d) continue;
          for (int p = 0; p < ports; ++p) {
            Probe probe{h, s, d, static_cast<std::uint16_t>(49152 + p * 7)};
            probe.count = model_->Route(h, s, d, probe.sport, kDport, probe.links);
            EXPECT_EQ(probe.count, 4u);
            out.push_back(probe);
          }
        }
      }
    }
    return out;
  }
  Passage Send(const Probe& p, std::size_t limit) {
    return model_->Cross(p.host, p.src, p.dst, p.links, p.count, limit, p.sport, kT, rng_);
  }
  Passage Send(const Probe& p) { return Send(p, p.count); }

  const std::uint32_t rails_ = 4;
  const Fleet fleet_{{4, 4, 4, 1, 2, 0}};
  const ecmp::FabricRouter router_{fleet_.topology(), 1u};
  std::unique_ptr<FaultSet> faults_;
  std::unique_ptr<PacketModel> model_;
  agent::Rng rng_{42};
};

TEST_F(PacketModelTest, AFullyLossyLinkDropsEveryPacketCrossingItThatWayAndNoneTheOther) {
  const LinkId bad = LinkNamed(fleet_, "p0r1-s02");
  Fault f = Active(FaultKind::kLinkLoss);
  f.link = bad;
  f.direction = kUp;
  f.rate = 1.0;
  Build({f});
  int up = 0, down = 0, clear = 0;
  for (const Probe& p : Probes(64)) {
    const int at = p.IndexOf(bad);
    const Passage out = Send(p);
    if (at >= 0 && at < 2) {  // first half: going up
      ++up;
      EXPECT_FALSE(out.delivered);
      EXPECT_EQ(out.crossed, static_cast<std::size_t>(at));  // lost on that link
    } else {
      at >= 0 ? ++down : ++clear;
      EXPECT_TRUE(out.delivered);
      EXPECT_EQ(out.crossed, p.count);
    }
  }
  EXPECT_GT(up, 50);  // the test saw both directions and clean paths
  EXPECT_GT(down, 50);
  EXPECT_GT(clear, 500);
}

TEST_F(PacketModelTest, LinkLossRateConverges) {
  const LinkId bad = LinkNamed(fleet_, "p0r2-s01");
  Fault f = Active(FaultKind::kLinkLoss);
  f.link = bad;
  f.rate = 0.05;
  Build({f});
  std::vector<Probe> crossing;
  for (const Probe& p : Probes(256)) {
    if (p.IndexOf(bad) >= 0) crossing.push_back(p);
  }
  ASSERT_GT(crossing.size(), 100u);
  const int n = 100'000;
  int lost = 0;
  for (int i = 0; i < n; ++i)
    lost += !Send(crossing[static_cast<std::size_t>(i) % crossing.size()]).delivered;
  const double sigma = std::sqrt(0.05 * 0.95 / n);
  EXPECT_NEAR(static_cast<double>(lost) / n, 0.05, 4 * sigma);
}

TEST_F(PacketModelTest, RnicDownDropsBothDirectionsAndNothingElse) {
  Fault f = Active(FaultKind::kRnicDown);
  f.host = 2;
  f.nic = 1;
  Build({f});
  for (const Probe& p : Probes(8)) {
    const bool touches = p.host == 2 && (p.src == 1 || p.dst == 1);
    const Passage out = Send(p);
    EXPECT_EQ(out.delivered, !touches);
    if (touches && p.src == 1) {
      EXPECT_EQ(out.crossed, 0u);  // never left the NIC
    }
    if (touches && p.dst == 1) {
      EXPECT_EQ(out.crossed, 3u);  // lost at the last step
    }
  }
}

TEST_F(PacketModelTest, RnicLossRateConvergesEachWay) {
  Fault f = Active(FaultKind::kRnicLoss);
  f.host = 1;
  f.nic = 3;
  f.rate = 0.02;
  Build({f});
  Probe from{1, 3, 0, 50000};
  from.count = model_->Route(1, 3, 0, from.sport, kDport, from.links);
  Probe to{1, 0, 3, 50000};
  to.count = model_->Route(1, 0, 3, to.sport, kDport, to.links);
  const int n = 100'000;
  int lost_from = 0, lost_to = 0;
  for (int i = 0; i < n; ++i) {
    lost_from += !Send(from).delivered;
    lost_to += !Send(to).delivered;
  }
  const double sigma = std::sqrt(0.02 * 0.98 / n);
  EXPECT_NEAR(static_cast<double>(lost_from) / n, 0.02, 4 * sigma);
  EXPECT_NEAR(static_cast<double>(lost_to) / n, 0.02, 4 * sigma);
}

TEST_F(PacketModelTest, SwitchLossHitsOnlyPathsThroughTheSwitch) {
  const DeviceId spine = DeviceNamed(fleet_, "s03");
  Fault f = Active(FaultKind::kSwitchLoss);
  f.switch_id = spine;
  f.rate = 0.03;
  Build({f});
  const int rounds = 300;
  std::uint64_t through = 0, lost_through = 0, other = 0, lost_other = 0;
  const std::vector<Probe> probes = Probes(32);
  for (int r = 0; r < rounds; ++r) {
    for (const Probe& p : probes) {
      const bool via = fleet_.upper_device(p.links[1]) == spine;
      const bool lost = !Send(p).delivered;
      (via ? through : other)++;
      (via ? lost_through : lost_other) += lost;
    }
  }
  ASSERT_GT(through, 20'000u);
  EXPECT_EQ(lost_other, 0u);
  const double n = static_cast<double>(through);
  EXPECT_NEAR(static_cast<double>(lost_through) / n, 0.03, 4 * std::sqrt(0.03 * 0.97 / n));
}

// The information limit's exposure: each active loss fault counts the probes
// that meet it (a link fault in its direction only, a switch and a NIC
// fault on any path through them), once each; other kinds, ended faults and
// paths that miss them count nothing.
TEST_F(PacketModelTest, ExposureCountsTheProbesThatMeetEachActiveLossFault) {
  Fault link = Active(FaultKind::kLinkLoss);
  link.link = LinkNamed(fleet_, "p0r1-s02");
  link.direction = kUp;
  link.rate = 0.01;
  Fault spine = Active(FaultKind::kSwitchLoss);
  spine.switch_id = DeviceNamed(fleet_, "s03");
  spine.rate = 0.02;
  Fault nic = Active(FaultKind::kRnicLoss);
  nic.host = 2;
  nic.nic = 1;
  nic.rate = 0.05;
  Fault ended = spine;
  ended.end_ns = kT;  // over just before the probes
  Fault down = Active(FaultKind::kLinkDown);
  down.link = link.link;
  Build({link, spine, nic, ended, down});
  std::vector<FaultExposure> tally(5);
  std::array<std::uint64_t, 3> expected{};
  for (const Probe& p : Probes(16)) {
    model_->TallyExposure(p.host, p.src, p.dst, p.links, p.count, kT, tally);
    const int at = p.IndexOf(link.link);
    expected[0] += at >= 0 && at < 2;
    expected[1] += fleet_.upper_device(p.links[1]) == spine.switch_id;
    expected[2] += p.host == nic.host && (p.src == nic.nic || p.dst == nic.nic);
  }
  ASSERT_GT(expected[0], 0u);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(tally[i].probes, expected[i]) << "fault " << i;
    EXPECT_EQ(tally[i].background_sum, 0.0) << "no background loss in this fleet";
  }
  EXPECT_EQ(tally[3].probes, 0u);
  EXPECT_EQ(tally[4].probes, 0u);
}

TEST_F(PacketModelTest, ExposureCarriesTheBackgroundLossOfEachPath) {
  Fault spine = Active(FaultKind::kSwitchLoss);
  spine.switch_id = DeviceNamed(fleet_, "s03");
  spine.rate = 0.02;
  Build({spine}, Quiet(), BackgroundLoss{1e-3, 1e-3});
  std::vector<FaultExposure> tally(1);
  for (const Probe& p : Probes(4)) {
    model_->TallyExposure(p.host, p.src, p.dst, p.links, p.count, kT, tally);
  }
  ASSERT_GT(tally[0].probes, 0u);
  // Four links at 0.1% each: a path loses 1 - 0.999^4 of its probes.
  EXPECT_NEAR(tally[0].background_sum / static_cast<double>(tally[0].probes),
              1 - std::pow(0.999, 4), 1e-12);
}

TEST_F(PacketModelTest, LatencyIsHopsPlusTheFaultsAddedLatencyInItsDirection) {
  const LinkId slow = LinkNamed(fleet_, "p0r0-s01");
  Fault f = Active(FaultKind::kLinkLatency);
  f.link = slow;
  f.direction = kUp;
  f.added_ns = 50'000;
  Build({f});
  const LatencyModel quiet = Quiet();
  int up = 0, down = 0;
  for (const Probe& p : Probes(32)) {
    const Passage out = Send(p);
    ASSERT_TRUE(out.delivered);
    const int at = p.IndexOf(slow);
    const bool slowed = at >= 0 && at < 2;
    up += slowed;
    down += at >= 2;
    EXPECT_EQ(out.one_way_ns, 4 * quiet.per_hop_ns + (slowed ? 50'000 : 0));
  }
  EXPECT_GT(up, 10);
  EXPECT_GT(down, 10);
}

TEST_F(PacketModelTest, ALatencyFaultIsAQueueWhoseMeanIsItsAddedDelay) {
  const LinkId slow = LinkNamed(fleet_, "p0r0-s01");
  Fault f = Active(FaultKind::kLinkLatency);
  f.link = slow;
  f.added_ns = 50'000;
  LatencyModel queued = Quiet();
  queued.queue = QueueModel{};  // wandering, with its tail
  Build({f}, queued);
  double sum = 0, level_sum = 0;
  int slowed = 0, waited_nothing = 0;
  std::int64_t longest = 0;
  for (const Probe& p : Probes(64)) {
    const Passage out = Send(p);
    ASSERT_TRUE(out.delivered);
    const std::int64_t wait = out.one_way_ns - 4 * queued.per_hop_ns;
    if (p.IndexOf(slow) < 0) {
      EXPECT_EQ(wait, 0);  // other links: as quiet as before
      continue;
    }
    ++slowed;
    // At one instant the level is the added delay times its direction's factor.
    const std::uint64_t directed = 2 * std::uint64_t{slow} + (p.IndexOf(slow) < 2 ? 0 : 1);
    level_sum += 50'000 * WanderFactor(queued.queue, directed, kT);
    sum += static_cast<double>(wait);
    waited_nothing += wait == 0;
    longest = std::max(longest, wait);
  }
  ASSERT_GT(slowed, 300);
  const double level = level_sum / slowed;
  EXPECT_NEAR(sum / slowed, level, 0.15 * level);
  EXPECT_GT(waited_nothing, 0);
  EXPECT_GT(static_cast<double>(longest), 3 * level);
}

TEST_F(PacketModelTest, QueuesDrawNothingFromTheAgentsRandomStream) {
  // The same probes with and without queueing and moving congestion lose the
  // same packets: delays are hash-drawn, so the loss scorecards stay the same.
  const LinkId lossy = LinkNamed(fleet_, "p0r1-s02");
  Fault loss = Active(FaultKind::kLinkLoss);
  loss.link = lossy;
  loss.rate = 0.3;
  Fault slow = Active(FaultKind::kLinkLatency);
  slow.link = LinkNamed(fleet_, "p0r0-s01");
  slow.added_ns = 50'000;
  LatencyModel queued = Quiet();
  queued.queue = QueueModel{};
  queued.moving.share = 0.5;
  Build({loss, slow}, Quiet());
  const std::vector<Probe> probes = Probes(16);
  std::vector<bool> plain, congested;
  rng_ = agent::Rng(5);
  for (const Probe& p : probes) plain.push_back(Send(p).delivered);
  Build({loss, slow}, queued);
  const MovingCongestion moving(fleet_, queued.moving, 2 * kT, 1);
  model_->SetCongestion(&moving);
  rng_ = agent::Rng(5);
  for (const Probe& p : probes) congested.push_back(Send(p).delivered);
  EXPECT_EQ(plain, congested);
  EXPECT_GT(std::count(plain.begin(), plain.end(), false), 10);
}

TEST_F(PacketModelTest, CableLengthIsAConstantOfTheLink) {
  LatencyModel m = Quiet();
  m.cable_spread_ns = 300;
  Build({}, m);
  std::int64_t lo = INT64_MAX, hi = 0;
  for (const Probe& p : Probes(16)) {
    const std::int64_t a = Send(p).one_way_ns;
    EXPECT_EQ(Send(p).one_way_ns, a);  // the same path takes the same time
    EXPECT_GE(a, 4 * m.per_hop_ns);
    EXPECT_LE(a, 4 * (m.per_hop_ns + m.cable_spread_ns));
    lo = std::min(lo, a);
    hi = std::max(hi, a);
  }
  EXPECT_LT(lo, hi);  // links differ
}

TEST_F(PacketModelTest, CrossWithALimitStopsAtThatSwitchLikeATtl) {
  Build({});
  const Probe p = Probes(1).front();
  for (std::size_t limit = 1; limit <= p.count; ++limit) {
    const Passage out = Send(p, limit);
    EXPECT_TRUE(out.delivered);
    EXPECT_EQ(out.crossed, limit);
    EXPECT_EQ(out.one_way_ns, static_cast<std::int64_t>(limit) * Quiet().per_hop_ns);
  }

  // A lossy third link: TTL 2 still gets to its switch, TTL 3 does not.
  Fault lossy = Active(FaultKind::kLinkLoss);
  lossy.link = p.links[2];
  lossy.rate = 1.0;
  Build({lossy});
  EXPECT_TRUE(Send(p, 2).delivered);
  const Passage three = Send(p, 3);
  EXPECT_FALSE(three.delivered);
  EXPECT_EQ(three.crossed, 2u);
  EXPECT_FALSE(Send(p).delivered);

  // The destination NIC's fault applies only to what reaches it.
  Fault nic = Active(FaultKind::kRnicDown);
  nic.host = p.host;
  nic.nic = p.dst;
  Build({nic});
  EXPECT_TRUE(Send(p, p.count - 1).delivered);
  EXPECT_FALSE(Send(p).delivered);
  // The source NIC's applies always.
  nic.nic = p.src;
  Build({nic});
  EXPECT_FALSE(Send(p, 1).delivered);
}

TEST_F(PacketModelTest, ReplyComesBackOverTheReverseLinksInTheOtherDirection) {
  Build({});
  const Probe p = Probes(1).front();
  // Forward: links[0], links[1] up, links[2], links[3] down.
  const auto replies = [&](LinkId link, std::uint8_t direction) {
    Fault f = Active(FaultKind::kLinkLoss);
    f.link = link;
    f.direction = direction;
    f.rate = 1.0;
    Build({f});
    std::vector<bool> back;
    for (std::size_t hop = 1; hop < p.count; ++hop) {
      back.push_back(model_->ReplyGetsBack(p.links, p.count, hop, kT, rng_));
    }
    return back;
  };
  // links[1] lossy downwards: the reply of every switch beyond it is lost.
  EXPECT_EQ(replies(p.links[1], kDown), (std::vector<bool>{true, false, false}));
  // links[1] lossy upwards only: the probes die there, but replies come back.
  EXPECT_EQ(replies(p.links[1], kUp), (std::vector<bool>{true, true, true}));
  // links[2] (crossed down) lossy upwards: only the third switch's reply crosses it.
  EXPECT_EQ(replies(p.links[2], kUp), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(replies(p.links[2], kDown), (std::vector<bool>{true, true, true}));

  // Partial loss on the way back, at its rate.
  Fault half = Active(FaultKind::kLinkLoss);
  half.link = p.links[0];
  half.direction = kDown;
  half.rate = 0.5;
  Build({half});
  const int n = 20'000;
  int back = 0;
  for (int i = 0; i < n; ++i) back += model_->ReplyGetsBack(p.links, p.count, 2, kT, rng_);
  EXPECT_NEAR(static_cast<double>(back) / n, 0.5, 4 * std::sqrt(0.25 / n));
}

TEST_F(PacketModelTest, HostDelaysAndAHostsProcessingFault) {
  Fault slow = Active(FaultKind::kHostProcessing);
  slow.host = 1;
  slow.added_ns = 2'000'000;
  slow.end_ns = 10 * kSecond;
  Build({slow});
  const LatencyModel q = Quiet();
  EXPECT_EQ(model_->TxDelay(rng_), q.tx_ns);
  EXPECT_EQ(model_->RxDelay(0, kT, rng_), q.rx_ns);
  EXPECT_EQ(model_->RxDelay(1, 10 * kSecond, rng_), q.rx_ns);  // over
  double sum = 0;
  const int n = 10'000;
  for (int i = 0; i < n; ++i) {
    const std::int64_t d = model_->RxDelay(1, kT, rng_);
    EXPECT_GE(d, q.rx_ns + 1'000'000);
    EXPECT_LT(d, q.rx_ns + 3'000'000);
    sum += static_cast<double>(d);
  }
  EXPECT_NEAR(sum / n, static_cast<double>(q.rx_ns) + 2e6, 40'000);  // uniform: sd 577 us / sqrt(n)
}

TEST_F(PacketModelTest, ReroutedAroundADeadLink) {
  Build({});
  const LinkId dead = LinkNamed(fleet_, "p0r3-s00");
  const std::vector<LinkId> dead_list{dead};
  const ecmp::DeadLinks state = router_.Reconverge(dead_list);
  int used_before = 0;
  for (const Probe& p : Probes(32)) used_before += p.IndexOf(dead) >= 0;
  EXPECT_GT(used_before, 0);
  model_->SetDeadLinks(&state);
  for (const Probe& p : Probes(32)) {
    EXPECT_LT(p.IndexOf(dead), 0);
    EXPECT_TRUE(Send(p).delivered);
  }
  model_->SetDeadLinks(nullptr);
  int used_after = 0;
  for (const Probe& p : Probes(32)) used_after += p.IndexOf(dead) >= 0;
  EXPECT_EQ(used_after, used_before);
}

TEST(RandomDrawsTest, UniformAndExponential) {
  agent::Rng rng(9);
  const int n = 100'000;
  double sum = 0, usum = 0;
  for (int i = 0; i < n; ++i) {
    const double u = Uniform01(rng);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    usum += u;
    const std::int64_t e = Exponential(rng, 1000);
    ASSERT_GE(e, 0);
    sum += static_cast<double>(e);
  }
  EXPECT_NEAR(usum / n, 0.5, 4 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(sum / n, 1000.0, 4 * 1000.0 / std::sqrt(n));
  EXPECT_EQ(Exponential(rng, 0), 0);
  EXPECT_EQ(Exponential(rng, -5), 0);
}

}  // namespace
}  // namespace hostmesh::sim
