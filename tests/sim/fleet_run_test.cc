// The real agent core and tracer on the simulated fabric, and a whole run into
// the real analyzer, on a tiny fleet in virtual time: every probe accounted
// for, losses only where the fabric drops, traces cut by a gray link, paths
// resolved on the analyzer's side, restarts, and reproducibility.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "sim/host_agent.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "tests/sim/sim_test_util.h"

namespace hostmesh::sim {
namespace {

using testing::kSecond;
using testing::LinkNamed;

const topology::FabricShape kTiny{4, 4, 2, 1, 2, 0};

// One host's agent over a fabric with the given faults.
class AgentBench {
 public:
  explicit AgentBench(std::vector<Fault> faults)
      : faults_(fleet_, std::move(faults), {}, 1),
        model_(fleet_, faults_, router_, LatencyModel{}) {}

  const Fleet& fleet() const { return fleet_; }
  const PacketModel& model() const { return model_; }

  // Runs host `host`'s agent from 0 to `seconds` in 1 s slices, like the
  // simulation; returns everything it produced.
  HostOutput Run(std::uint32_t host, int seconds) {
    agent_ =
        std::make_unique<HostAgent>(host, model_, AgentSettings{}, IcmpModel{}, kWallOffsetNs, 11);
    agent_->Start(0);
    HostOutput all, slice;
    for (int s = 1; s <= seconds; ++s) {
      slice.Clear();
      agent_->RunUntil(s * kSecond, slice);
      all.results.insert(all.results.end(), slice.results.begin(), slice.results.end());
      all.paths.insert(all.paths.end(), slice.paths.begin(), slice.paths.end());
      if (slice.hello) all.hello = slice.hello;
      all.boot_id = slice.boot_id;
    }
    return all;
  }
  const HostAgent& agent() const { return *agent_; }

  // The links a probe of this 5-tuple takes now.
  std::vector<LinkId> PathOf(std::uint32_t host, std::uint32_t src, std::uint32_t dst,
                             std::uint16_t sport, std::uint16_t dport) const {
    PathLinks links{};
    const std::size_t n = model_.Route(host, src, dst, sport, dport, links);
    return {links.begin(), links.begin() + static_cast<std::ptrdiff_t>(n)};
  }

 private:
  const Fleet fleet_{kTiny};
  FaultSet faults_;
  const ecmp::FabricRouter router_{fleet_.topology(), 1u};
  PacketModel model_;
  std::unique_ptr<HostAgent> agent_;
};

Fault LinkLoss(LinkId link, double rate, std::uint8_t direction = kBoth) {
  Fault f;
  f.kind = FaultKind::kLinkLoss;
  f.link = link;
  f.rate = rate;
  f.direction = direction;
  f.end_ns = 3600 * kSecond;
  return f;
}

int IndexOf(const std::vector<LinkId>& path, LinkId link) {
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == link) return static_cast<int>(i);
  }
  return -1;
}

// The transport takes handled payloads back (Reclaim) and sends later probes
// in those buffers: each receive carries its own probe's bytes, not a
// reclaimed buffer's old ones, and at most one buffer per probe in flight is
// allocated.
TEST(FleetRunTest, ReclaimedPayloadBuffersCarryEachProbesOwnBytes) {
  const AgentBench bench({});
  HostClock clock(kWallOffsetNs);
  SimTransport transport(0, bench.model(), clock, kWallOffsetNs, 5);
  std::vector<agent::TransportEvent> events;
  std::set<const std::uint8_t*> buffers;
  for (std::uint8_t k = 1; k <= 20; ++k) {
    clock.Set(AtNs(k * kSecond));
    agent::ProbeOrder order;
    order.src = 0;
    order.dst = 1;
    order.src_port = static_cast<std::uint16_t>(10000 + k);
    order.dst_port = 4791;
    order.sequence = k;
    const std::vector<std::uint8_t> payload(50, k);
    ASSERT_EQ(transport.Send(order, payload).status, agent::SendStatus::kOk);
    clock.Set(AtNs(k * kSecond + kSecond / 2));
    ASSERT_EQ(transport.Poll(events, 8), 1u);
    EXPECT_EQ(events[0].payload, payload) << "probe " << int{k};
    buffers.insert(events[0].payload.data());
    transport.Reclaim(events);
    EXPECT_TRUE(events.empty());
  }
  // One probe in flight at a time: the first buffer serves them all.
  EXPECT_EQ(buffers.size(), 1u);
}

TEST(FleetRunTest, EveryProbeIsAccountedFor) {
  const Fleet probe_fleet(kTiny);
  AgentBench bench({LinkLoss(LinkNamed(probe_fleet, "p0r2-s01"), 0.3)});
  const HostOutput out = bench.Run(1, 30);
  const SimTransport& transport = *bench.agent().transport();
  const agent::Tracker& tracker = *bench.agent().tracker();

  std::uint64_t timed_out = 0;
  std::map<std::uint32_t, std::set<std::uint64_t>> sequences;
  for (const agent::ProbeResult& r : out.results) {
    timed_out += r.timeout;
    EXPECT_TRUE(sequences[r.src_nic].insert(r.sequence).second) << "a probe decided twice";
  }
  const std::uint64_t received = out.results.size() - timed_out;
  // Sent = received + timed out (+ the last half second's, still in flight).
  EXPECT_EQ(transport.sent(), out.results.size() + tracker.pending());
  const agent::PairCounters totals = tracker.Totals();
  EXPECT_EQ(totals.sent, transport.sent());
  EXPECT_EQ(totals.received, received);
  EXPECT_EQ(totals.timed_out, timed_out);
  EXPECT_EQ(
      totals.late + totals.duplicate + totals.unknown + totals.misdelivered + totals.send_failed,
      0u);
  EXPECT_LE(received, transport.delivered());
  EXPECT_LE(tracker.pending(), 4u * 6);  // 4 NICs x 10/s x 0.5 s, and then some
  // 4 NICs at 10 probes/s for 30 s, and the lossy link shows.
  EXPECT_NEAR(static_cast<double>(transport.sent()), 1200, 10);
  EXPECT_GT(timed_out, 20u);
  EXPECT_GT(received, 900u);
}

TEST(FleetRunTest, ADownNicsOwnProbesAreSendFailuresAndProbesToItTimeOut) {
  Fault down;
  down.kind = FaultKind::kRnicDown;
  down.host = 1;
  down.nic = 2;
  down.start_ns = 10 * kSecond;
  down.end_ns = 3600 * kSecond;
  AgentBench bench({down});
  const HostOutput out = bench.Run(1, 30);
  std::uint64_t failed_from = 0, lost_to = 0, after = 0;
  for (const agent::ProbeResult& r : out.results) {
    const std::int64_t t = r.send_time_ns - kWallOffsetNs;
    if (t < down.start_ns + kSecond) continue;  // probes in flight as it went down
    ++after;
    if (r.src_nic == 2) {
      EXPECT_TRUE(r.send_failed) << "a probe left a down NIC";
      EXPECT_FALSE(r.timeout);
      failed_from += r.send_failed;
    } else {
      EXPECT_FALSE(r.send_failed) << "a working NIC failed to send";
      if (r.dst_nic == 2) {
        EXPECT_TRUE(r.timeout) << "a probe reached a down NIC";
        lost_to += r.timeout;
      }
    }
  }
  // 19 s of 3 of the 4 NICs' probes to it, and its own (10/s each).
  EXPECT_GT(after, 0u);
  EXPECT_NEAR(static_cast<double>(failed_from), 190, 15);
  EXPECT_NEAR(static_cast<double>(lost_to), 190, 15);
}

TEST(FleetRunTest, AFullyLossyLinkTimesOutExactlyTheFiveTuplesCrossingIt) {
  const Fleet names(kTiny);
  const LinkId bad = LinkNamed(names, "p0r1-s00");
  for (const std::uint8_t direction : {kBoth, kUp}) {
    SCOPED_TRACE(direction == kUp ? "up" : "both");
    AgentBench bench({LinkLoss(bad, 1.0, direction)});
    const HostOutput out = bench.Run(2, 20);
    int crossing = 0, clear = 0;
    for (const agent::ProbeResult& r : out.results) {
      const auto path = bench.PathOf(2, r.src_nic, r.dst_nic, r.src_port, r.dst_port);
      ASSERT_EQ(path.size(), 4u);
      const int at = IndexOf(path, bad);
      const bool dropped = at >= 0 && (direction == kBoth || at < 2);
      EXPECT_EQ(r.timeout, dropped) << r.src_nic << "->" << r.dst_nic << " port " << r.src_port;
      dropped ? ++crossing : ++clear;
    }
    EXPECT_GT(crossing, 50);
    EXPECT_GT(clear, 300);
  }
}

TEST(FleetRunTest, TracesCrossingAGrayLinkStopAtIt) {
  const Fleet names(kTiny);
  const LinkId gray = LinkNamed(names, "p0r3-s01");
  AgentBench bench({LinkLoss(gray, 1.0)});
  const HostOutput out = bench.Run(0, 60);
  ASSERT_GT(out.paths.size(), 100u);
  int cut = 0, whole = 0;
  for (const tracer::PathReport& p : out.paths) {
    const auto path = bench.PathOf(0, p.src_nic, p.dst_nic, p.tuple.sport, p.tuple.dport);
    ASSERT_EQ(path.size(), 4u);
    const int g = IndexOf(path, gray);
    for (const tracer::Hop& hop : p.hops) {
      if (g >= 0 && hop.ttl > g) {
        // Beyond the gray link: the probe died there.
        EXPECT_FALSE(hop.answered()) << "ttl " << hop.ttl;
      } else if (hop.ttl < 4) {
        // Before it (or on a clean path) every switch answers from the
        // interface the probe came in by: hop k names link k-1.
        ASSERT_TRUE(hop.answered()) << "ttl " << hop.ttl;
        const auto i = static_cast<std::size_t>(hop.ttl - 1);
        EXPECT_EQ(hop.address.value, bench.fleet().IngressAddress(path[i], i < 2).value);
      }
    }
    if (g >= 0) {
      ++cut;
    } else {
      EXPECT_TRUE(p.reached_destination);
      EXPECT_EQ(p.hops.size(), 4u);
      ++whole;
    }
  }
  EXPECT_GT(cut, 20);
  EXPECT_GT(whole, 50);
}

TEST(FleetRunTest, ARestartIsANewBootWithItsOwnHello) {
  AgentBench bench({});
  HostAgent agent(3, bench.model(), AgentSettings{}, IcmpModel{}, kWallOffsetNs, 5);
  HostOutput out;
  agent.Start(0);
  agent.RunUntil(kSecond, out);
  ASSERT_TRUE(out.hello.has_value());
  const std::uint64_t first = out.boot_id;
  EXPECT_NE(first, 0u);
  EXPECT_EQ(out.hello->boot_id(), first);
  EXPECT_EQ(out.hello->host(), "h003");
  EXPECT_EQ(out.hello->nics_size(), 4);
  EXPECT_FALSE(out.results.empty());

  out.Clear();
  agent.RunUntil(2 * kSecond, out);
  EXPECT_FALSE(out.hello.has_value());  // one Hello per boot
  EXPECT_EQ(out.boot_id, first);

  agent.Start(2 * kSecond);
  out.Clear();
  agent.RunUntil(3 * kSecond, out);
  ASSERT_TRUE(out.hello.has_value());
  EXPECT_NE(out.boot_id, first);
  EXPECT_EQ(out.hello->boot_id(), out.boot_id);
  EXPECT_EQ(agent.boots(), 2u);
  EXPECT_FALSE(out.results.empty());  // probing again

  agent.Stop();
  EXPECT_FALSE(agent.running());
  out.Clear();
  agent.RunUntil(4 * kSecond, out);
  EXPECT_TRUE(out.results.empty());
}

// Everything a run produced and concluded, in a form two runs can be compared by.
struct RunDigest {
  std::uint64_t results = 0, timeouts = 0, paths = 0;
  // Probes sent in the run's last half second (decided after its end), their
  // timeouts, and probes sent after the end (none should reach the analyzer).
  std::uint64_t last_sent = 0, last_timeouts = 0, after_end = 0;
  std::uint64_t hash = 1469598103934665603ULL;                // FNV-1a over every result and hop
  std::map<std::uint32_t, std::vector<std::uint64_t>> boots;  // host -> boot id per Hello
  std::vector<std::vector<ComponentKey>> ours, paper;
  SimResult result;

  void Mix(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      hash ^= (v >> (8 * i)) & 0xFF;
      hash *= 1099511628211ULL;
    }
  }
  bool operator==(const RunDigest& o) const {
    return results == o.results && timeouts == o.timeouts && paths == o.paths && hash == o.hash &&
           boots == o.boots && ours == o.ours && paper == o.paper;
  }
};

RunDigest Digest(SimConfig config) {
  const std::int64_t end = config.duration_ns;
  Simulation sim(std::move(config));
  RunDigest d;
  const auto on_upload = [&](std::int64_t, const std::vector<HostOutput>& uploads) {
    for (std::uint32_t h = 0; h < uploads.size(); ++h) {
      const HostOutput& u = uploads[h];
      if (u.hello) d.boots[h].push_back(u.hello->boot_id());
      for (const agent::ProbeResult& r : u.results) {
        ++d.results;
        d.timeouts += r.timeout;
        const std::int64_t sent = r.send_time_ns - kWallOffsetNs;
        d.after_end += sent >= end;
        if (sent >= end - kSecond / 2 && sent < end) {
          ++d.last_sent;
          d.last_timeouts += r.timeout;
        }
        d.Mix(h);
        d.Mix((std::uint64_t{r.src_nic} << 40) | (std::uint64_t{r.dst_nic} << 32) | r.src_port);
        d.Mix(r.sequence);
        d.Mix(static_cast<std::uint64_t>(r.nic_send_ns));
        d.Mix(static_cast<std::uint64_t>(r.nic_recv_ns));
        d.Mix(static_cast<std::uint64_t>(r.app_recv_ns));
      }
      for (const tracer::PathReport& p : u.paths) {
        ++d.paths;
        d.Mix(p.tuple.sport);
        for (const tracer::Hop& hop : p.hops) d.Mix(hop.address.value);
      }
    }
  };
  d.result = sim.Run({}, on_upload);
  for (const WindowRecord& w : d.result.windows) {
    d.ours.push_back(w.ours.named);
    d.paper.push_back(w.paper.named);
  }
  return d;
}

SimConfig Faulty(std::uint64_t seed, int threads) {
  SimConfig c;
  c.shape = kTiny;
  c.duration_ns = 100 * kSecond;
  c.seed = seed;
  c.threads = threads;
  c.background = {1e-5, 1e-3};
  const Fleet fleet(c.shape);
  c.faults.push_back(LinkLoss(LinkNamed(fleet, "p0r2-s00"), 0.2));
  c.faults.back().start_ns = 30 * kSecond;
  Fault restart;
  restart.kind = FaultKind::kAgentRestart;
  restart.host = 2;
  restart.start_ns = 50 * kSecond;
  restart.end_ns = 51 * kSecond;
  c.faults.push_back(restart);
  return c;
}

TEST(FleetRunTest, AHealthyFabricReachesTheAnalyzerWithEveryPathResolved) {
  SimConfig c;
  c.shape = kTiny;
  c.duration_ns = 60 * kSecond;
  const RunDigest d = Digest(c);
  EXPECT_EQ(d.timeouts, 0u);
  EXPECT_EQ(d.result.probes, d.results);
  EXPECT_GT(d.last_sent, 4u * 4 * 4);  // decided after the end, 0.5 s x 10/s per NIC
  EXPECT_EQ(d.after_end, 0u);
  EXPECT_GT(d.result.probes, 4u * 4 * 10 * 55);  // 4 hosts x 4 NICs x 10/s
  EXPECT_GT(d.result.paths_resolved, 100u);
  EXPECT_EQ(d.result.paths_unresolved, 0u);
  EXPECT_EQ(d.result.paths_resolved, d.paths);
  ASSERT_EQ(d.result.windows.size(), 3u);  // 0-20, 20-40, 40-60 s
  for (const WindowRecord& w : d.result.windows) {
    EXPECT_EQ(w.hosts, 4u);
    EXPECT_GT(w.results, 4u * 4 * 10 * 19);
    for (const ComponentKey k : w.ours.named) EXPECT_NE(CategoryOf(k), Category::kLoss);
    for (const ComponentKey k : w.paper.named) EXPECT_NE(CategoryOf(k), Category::kLoss);
  }
  for (std::uint32_t h = 0; h < 4; ++h) EXPECT_EQ(d.boots.at(h).size(), 1u);
  EXPECT_EQ(d.result.host_of.size(), 4u);
}

TEST(FleetRunTest, AnAgentRestartInARunSendsANewHello) {
  const RunDigest d = Digest(Faulty(3, 2));
  ASSERT_EQ(d.boots.at(2).size(), 2u);
  EXPECT_NE(d.boots.at(2)[0], d.boots.at(2)[1]);
  for (const std::uint32_t h : {0u, 1u, 3u}) EXPECT_EQ(d.boots.at(h).size(), 1u);
  // The analyzer kept it as one host.
  EXPECT_EQ(d.result.host_of.size(), 4u);
}

TEST(FleetRunTest, TheLossyLinkIsFound) {
  const RunDigest d = Digest(Faulty(3, 2));
  const Fleet fleet(kTiny);
  const ComponentKey bad = LinkKey(Category::kLoss, LinkNamed(fleet, "p0r2-s00"));
  ASSERT_EQ(d.ours.size(), 5u);
  // Windows 40-60, 60-80 and 80-100 s are all faulty (it started at 30 s).
  for (std::size_t w = 2; w < 5; ++w) {
    EXPECT_NE(std::find(d.ours[w].begin(), d.ours[w].end(), bad), d.ours[w].end()) << w;
  }
  EXPECT_GT(d.timeouts, 100u);
  EXPECT_GT(d.last_timeouts, 0u);  // timed out after the end, still counted
  // Its information limit: 20% of the probes through one link of 4 hosts is
  // clear within a window; an agent restart has none.
  ASSERT_EQ(d.result.limit_windows.size(), 2u);
  EXPECT_GT(d.result.limit_windows[0], 0.0);
  EXPECT_LT(d.result.limit_windows[0], 1.0);
  EXPECT_LT(d.result.limit_windows[1], 0.0);
  // The fault's end (3,600 s) lies past the run (100 s): its probes a window
  // are over the time it was active within the run, as if it ended there
  // (but for the probes of the timeout after the end, which still meet it).
  SimConfig ending = Faulty(3, 2);
  ending.faults[0].end_ns = ending.duration_ns;
  const double limit = d.result.limit_windows[0];
  EXPECT_NEAR(Simulation(ending).Run().limit_windows[0], limit, 0.05 * limit);
  EXPECT_EQ(d.after_end, 0u);
}

TEST(FleetRunTest, PortsRotatedInAreTracedWhenTheyComeNotAtTheNextRefresh) {
  SimConfig c;
  c.shape = kTiny;
  c.duration_ns = 200 * kSecond;
  const RunDigest d = Digest(c);
  // 4 hosts x 4 NICs x 3 peers x 16 ports first, then a quarter of every pool
  // each minute (at 60, 120 and 180 s): each a first trace, so a report. The
  // refreshes (240 s) come after the run.
  EXPECT_GE(d.paths, 768u + 3 * 192u);
}

TEST(FleetRunTest, ALinkDownThatRoutingAvoidsIsNamedForAsLongAsItIsDown) {
  SimConfig c;
  c.shape = kTiny;
  c.duration_ns = 200 * kSecond;
  c.seed = 3;
  const Fleet fleet(c.shape);
  Fault down;
  down.kind = FaultKind::kLinkDown;
  down.link = LinkNamed(fleet, "p0r2-s00");
  down.start_ns = 30 * kSecond;
  down.end_ns = 170 * kSecond;
  c.faults.push_back(down);
  const RunDigest d = Digest(c);
  const ComponentKey bad = LinkKey(Category::kLoss, down.link);
  ASSERT_EQ(d.ours.size(), 10u);
  // Routing avoids it a second after it went down: no probe fails from then
  // on. Few of its probes failed in that second, so few 5-tuples were traced
  // again: the fresh draws that avoid it come with the ports rotated in at
  // 60 s, the end of window 2, which is judged on the draws before its end.
  EXPECT_LE(std::count(d.ours[2].begin(), d.ours[2].end(), bad), 1);
  for (std::size_t w = 2; w < 8; ++w) {
    if (w > 2) {
      EXPECT_EQ(std::count(d.ours[w].begin(), d.ours[w].end(), bad), 1) << "window " << w;
    }
    for (const ComponentKey k : d.ours[w]) {
      if (CategoryOf(k) == Category::kLoss) {
        EXPECT_EQ(k, bad) << "window " << w;
      }
    }
  }
  EXPECT_EQ(std::count(d.ours[9].begin(), d.ours[9].end(), bad), 0) << "back up at 170 s";
}

TEST(FleetRunTest, ASpineWhoseEveryLinkIsDownIsOneIncidentOnTheSpineForAsLongAsItIsDown) {
  // Every rail switch's up-link to s01 down (the spine died): routing avoids
  // them within a second. The spine, not its four links, is what is named
  // once routing is seen to avoid them, and one incident holds the fault
  // from its first failures on, across the windows where only paths traced
  // before routing moved them seem to cross it.
  SimConfig c;
  c.shape = {8, 4, 4, 1, 2, 0};
  c.duration_ns = 200 * kSecond;
  c.seed = 3;
  const Fleet fleet(c.shape);
  std::vector<ComponentKey> spine_links;
  for (int rail = 0; rail < 4; ++rail) {
    Fault down;
    down.kind = FaultKind::kLinkDown;
    down.link = LinkNamed(fleet, "p0r" + std::to_string(rail) + "-s01");
    down.start_ns = 30 * kSecond;
    down.end_ns = 170 * kSecond;
    c.faults.push_back(down);
    spine_links.push_back(LinkKey(Category::kLoss, down.link));
  }
  const ComponentKey spine = SwitchKey(Category::kLoss, testing::DeviceNamed(fleet, "s01"));
  const RunDigest d = Digest(c);
  ASSERT_EQ(d.ours.size(), 10u);
  for (std::size_t w = 4; w < 8; ++w) {  // 80-160 s: routing avoids it by then
    EXPECT_EQ(std::count(d.ours[w].begin(), d.ours[w].end(), spine), 1) << "window " << w;
    for (const ComponentKey k : spine_links) {
      EXPECT_EQ(std::count(d.ours[w].begin(), d.ours[w].end(), k), 0) << "window " << w;
    }
  }
  int on_spine = 0;
  for (const IncidentSpan& inc : d.result.incidents) {
    EXPECT_EQ(std::count(spine_links.begin(), spine_links.end(), inc.key), 0)
        << "an incident of its own on one of the spine's links";
    if (inc.key != spine) continue;
    ++on_spine;
    EXPECT_EQ(inc.kind, "switch");
    EXPECT_LE(inc.first_ns, 60 * kSecond);
    EXPECT_GE(inc.last_ns, 160 * kSecond);
  }
  EXPECT_EQ(on_spine, 1);
}

TEST(FleetRunTest, ReproducibleFromTheSeedWhateverTheThreads) {
  const RunDigest one = Digest(Faulty(7, 1));
  const RunDigest again = Digest(Faulty(7, 1));
  const RunDigest two = Digest(Faulty(7, 2));
  const RunDigest four = Digest(Faulty(7, 4));
  EXPECT_TRUE(one == again);
  EXPECT_TRUE(one == two);
  EXPECT_TRUE(one == four);
  EXPECT_EQ(one.result.probes, two.result.probes);
  EXPECT_EQ(one.result.paths_resolved, two.result.paths_resolved);
  // The information limit too: the hosts' exposure sums in host order.
  EXPECT_EQ(one.result.limit_windows, two.result.limit_windows);
  EXPECT_EQ(one.result.limit_windows, four.result.limit_windows);
  // ...and the seed matters.
  const RunDigest other = Digest(Faulty(8, 2));
  EXPECT_NE(one.hash, other.hash);
  // Not vacuous: there were verdicts to compare.
  std::size_t named = 0;
  for (const auto& w : one.ours) named += w.size();
  EXPECT_GT(named, 0u);
}

// A shipped scenario (sim/scenarios) at another seed.
Scenario Shipped(const char* file, std::uint64_t seed) {
  Scenario s = LoadScenarioFile(std::filesystem::path(HOSTMESH_SIM_SCENARIOS) / file);
  s.config.seed = seed;
  return s;
}

// The lasting e2e's first phase (sim/scenarios/lasting-phase1-8x4x4.yaml) at
// the two of its first 60 seeds where the 3% spine was named as its links for
// the whole run: its first windows looked concentrated on one link, which was
// named and held, and held culprits explain first, so the spine was never
// weighed again while its other links were named one by one. Now the spine
// replaces its links once two are named and all of them lose alike. Seed 10
// holds the other side: the 1% link's two directions, named apart, are one
// link, not two parts of spine s00.
TEST(FleetRunTest, ASpineFirstNamedAsItsLinksBecomesTheSpine) {
  for (const std::uint64_t seed : {10, 12, 19}) {
    Scenario s = Shipped("lasting-phase1-8x4x4.yaml", seed);
    s.config.duration_ns = 300 * kSecond;
    const Fleet fleet(s.config.shape);
    const ComponentKey spine = SwitchKey(Category::kLoss, testing::DeviceNamed(fleet, "s01"));
    const ComponentKey small = LinkKey(Category::kLoss, LinkNamed(fleet, "p0r0-s00"));
    const RunDigest d = Digest(s.config);
    ASSERT_EQ(d.ours.size(), 30u);
    std::size_t spine_named = 0, link_named = 0;
    for (std::size_t w = 12; w < d.ours.size(); ++w) {  // from 120 s
      spine_named += std::count(d.ours[w].begin(), d.ours[w].end(), spine);
      link_named += std::count(d.ours[w].begin(), d.ours[w].end(), small);
      for (const char* other : {"s00", "p0r0"}) {
        const ComponentKey k = SwitchKey(Category::kLoss, testing::DeviceNamed(fleet, other));
        EXPECT_EQ(std::count(d.ours[w].begin(), d.ours[w].end(), k), 0)
            << "seed " << seed << " window " << w << ": " << other << " named";
      }
    }
    EXPECT_GE(spine_named, 16u) << "seed " << seed << ": the spine in most of 18 windows";
    EXPECT_GE(link_named, 14u) << "seed " << seed << ": the 1% link in most of 18 windows";
  }
}

// The lasting e2e's two phases (sim/scenarios/lasting-phases-8x4x4.yaml).
// When phase 2 begins, culprits are held on every spine but s02: the 3% spine
// s01 just cleared, the 1% p0r0-s00, the gray p0r3-s03. They explain first
// and take the two new lossy RNICs' failures through their spines, which
// leaves the RNICs' share through s02, where the two together looked spread
// over its links: at seed 21, s02 was named in the flap's first window, then
// held for minutes on their failures through it, and the 1% RNIC was named
// 16 windows late (the CI run of stop 50 saw the same s02 incident on the
// fabric). They are the RNICs' failures: each loses as much on its other
// paths, and both are named in their first full window. Seed 73 holds the
// other side: the lossy spine of phase 1, whose RNICs lose on the gray
// link's paths too, is still the spine, and no rail switch takes its place
// (a first version of the test named p0r0 there). Its 1% RNIC is slow to
// show at any rate (two failures a window), so only seed 21 is timed.
TEST(FleetRunTest, NewRnicFaultsBesideCulpritsHeldOnOtherSpinesAreNotTheSpineLeft) {
  for (const std::uint64_t seed : {21, 73}) {
    const Scenario s = Shipped("lasting-phases-8x4x4.yaml", seed);
    const Fleet fleet(s.config.shape);
    const ComponentKey small = RnicKey(Category::kLoss, 6, 0);
    const ComponentKey large = RnicKey(Category::kLoss, 5, 2);
    const std::vector<ComponentKey> truth{
        small,
        large,
        RnicKey(Category::kLoss, 2, 1),
        SwitchKey(Category::kLoss, testing::DeviceNamed(fleet, "s01")),
        LinkKey(Category::kLoss, LinkNamed(fleet, "p0r0-s00")),
        LinkKey(Category::kLoss, LinkNamed(fleet, "p0r3-s03"))};
    const RunDigest d = Digest(s.config);
    for (const IncidentSpan& inc : d.result.incidents) {
      EXPECT_NE(std::find(truth.begin(), truth.end(), inc.key), truth.end())
          << "seed " << seed << ": an incident on no fault (" << inc.kind << ")";
    }
    if (seed != 21) continue;
    // Phase 2 starts at 306 s, in window 30; both named by the end of window 31.
    for (const ComponentKey& rnic : {small, large}) {
      ASSERT_GE(d.ours.size(), 32u);
      EXPECT_TRUE(std::count(d.ours[31].begin(), d.ours[31].end(), rnic) == 1)
          << "seed " << seed << ": an RNIC of phase 2 not named in its first full window";
    }
  }
}

// Issue 29's fabric case: a NIC's cable losing 1% while its rail switch's
// uplink to one spine loses 1% too. In a window where the RNIC's few failures
// all fell on the held link's paths, the link explained them and the RNIC,
// left none, was let go as superseded, evidence and all, and named again
// minutes later (two to four incidents in these seeds); and beside the held
// link it looked no lossier than its clean siblings over the windows before,
// so rail switch p0r1 took both their places (seed 12). One incident now,
// held to the end, and never the switch.
TEST(FleetRunTest, ASmallRnicBesideASmallLinkUnderItsRailSwitchIsOneIncidentHeld) {
  for (const std::uint64_t seed : {1, 12, 26}) {
    Scenario s = Shipped("small-rnic-beside-link-8x4x4.yaml", seed);
    const Fleet fleet(s.config.shape);
    const ComponentKey rnic = RnicKey(Category::kLoss, 3, 1);
    const ComponentKey link = LinkKey(Category::kLoss, LinkNamed(fleet, "p0r1-s02"));
    const RunDigest d = Digest(s.config);
    int on_rnic = 0;
    for (const IncidentSpan& inc : d.result.incidents) {
      EXPECT_TRUE(inc.key == rnic || inc.key == link)
          << "seed " << seed << ": an incident on neither fault (" << inc.kind << ")";
      if (inc.key != rnic) continue;
      ++on_rnic;
      EXPECT_LE(inc.first_ns, 200 * kSecond) << "seed " << seed;
      EXPECT_EQ(inc.last_ns, s.config.duration_ns) << "seed " << seed << ": let go early";
    }
    EXPECT_EQ(on_rnic, 1) << "seed " << seed;
  }
}

// Issue 29 item 3: a fail-slow uplink adding 20 us on average through a
// wandering, long-tailed queue, under three times the default moving
// congestion. Its median wait (13 us) once sat under the 15 us bar in a
// third of the windows, and windows where its level wandered low let the
// incident go and open again. One incident now, held to the end, named in
// nearly every window with its added delay, and no incident on congestion.
TEST(FleetRunTest, ATwentyMicrosecondFailSlowUnderMovingCongestionIsOneHeldIncident) {
  for (const std::uint64_t seed : {1, 3, 5}) {
    Scenario s = Shipped("fail-slow-under-moving-congestion-64.yaml", seed);
    const Fleet fleet(s.config.shape);
    const ComponentKey slow = LinkKey(Category::kLatency, LinkNamed(fleet, "p0r3-s05"));
    const SimResult r = Simulation(s.config).Run();
    int incidents = 0;
    for (const IncidentSpan& inc : r.incidents) {
      EXPECT_EQ(inc.key, slow) << "seed " << seed << ": an incident on congestion (" << inc.kind
                               << ")";
      ++incidents;
      EXPECT_LE(inc.first_ns, 140 * kSecond) << "seed " << seed;
      EXPECT_EQ(inc.last_ns, s.config.duration_ns) << "seed " << seed << ": let go early";
    }
    EXPECT_EQ(incidents, 1) << "seed " << seed;
    int inside = 0, named = 0, near = 0;
    for (const WindowRecord& w : r.windows) {
      if (w.start_ns < 80 * kSecond) continue;  // wholly inside the fault, after its first
      ++inside;
      for (std::size_t i = 0; i < w.ours.named.size(); ++i) {
        if (w.ours.named[i] != slow) continue;
        ++named;
        near += std::abs(w.ours.added_ns[i] / 20'000 - 1) <= 0.3;
      }
    }
    EXPECT_GE(named, inside * 9 / 10) << "seed " << seed;
    EXPECT_GE(near, named * 8 / 10) << "seed " << seed << ": the added delay estimated";
  }
}

// A flapping uplink's detour links (sim/scenarios/link-flap-detours-64.yaml):
// 5-tuples traced while it was withdrawn fail on them in each down phase's
// first second, and they lose at the background between flaps too. With
// 90% of their failures inside the flaps as the bar, a detour link was
// named beside the flapping one in these seeds. Now only the flapping link,
// as one flapping incident, in every window wholly inside the flap.
TEST(FleetRunTest, AFlappingUplinksDetoursAreNotNamed) {
  for (const std::uint64_t seed : {1, 2, 6}) {
    Scenario s = Shipped("link-flap-detours-64.yaml", seed);
    const Fleet fleet(s.config.shape);
    const ComponentKey flapping = LinkKey(Category::kLoss, LinkNamed(fleet, "p0r6-s05"));
    const RunDigest d = Digest(s.config);
    int incidents = 0;
    for (const IncidentSpan& inc : d.result.incidents) {
      EXPECT_EQ(inc.key, flapping) << "seed " << seed << ": an incident on another component";
      EXPECT_EQ(inc.kind, "flapping") << "seed " << seed;
      ++incidents;
    }
    EXPECT_EQ(incidents, 1) << "seed " << seed;
    for (std::size_t w = 0; w < d.ours.size(); ++w) {
      const auto& named = d.ours[w];
      if (w >= 4 && w <= 7) {  // 80-160 s: the flap's for at least half of each
        EXPECT_EQ(std::count(named.begin(), named.end(), flapping), 1)
            << "seed " << seed << " window " << w;
      }
      for (const ComponentKey k : named) {
        EXPECT_EQ(k, flapping) << "seed " << seed << " window " << w << ": another culprit";
      }
    }
  }
}

}  // namespace
}  // namespace hostmesh::sim
