// Scenario YAML: a full valid file, and every kind of bad input reported as a
// ConfigError naming file:line:column and the key.

#include "sim/scenario.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/config/config_error.h"
#include "tests/sim/same_scenario.h"
#include "tests/sim/sim_test_util.h"

namespace hostmesh::sim {
namespace {

using testing::DeviceNamed;
using testing::kSecond;
using testing::LinkNamed;

constexpr const char* kFull = R"(name: every key
fabric:
  hosts: 8
  rails: 4
  spines: 3
  pods: 2
  tiers: 2
duration: 10m
seed: 42
hash_seed: 7
window: 30s
threads: 3
agent:
  interval: 50ms
  timeout: 400ms
  pool_size: 8
  rotation_period: 2m
  trace_refresh: 120s
  trace_rate: 20
  traceroute: false
background_loss:
  min: 1e-5
  max: 0.001
congestion:
  share: 0.02
  min_added: 2us
  max_added: 80us
  min_duration: 200ms
  max_duration: 30s
  wander: 0.25
  knot: 2s
  busy: 0.8
  tail: false
faults:
  - kind: link_loss
    link: p1r2-s01
    direction: up
    rate: 0.5%
    start: 60s
    end: 5m
  - kind: link_down
    link: p0r0-s00
  - kind: link_flap
    link: p0r3-s02
    period: 4s
    start: 1m30s
  - kind: rnic_down
    host: h001
    nic: 3
  - kind: rnic_loss
    host: h006
    nic: 0
    rate: 0.02
  - kind: rnic_flap
    host: h002
    nic: 1
    period: 10s
  - kind: switch_loss
    switch: s02
    rate: 1%
  - kind: blackhole
    link: p0r1-s00
    direction: down
    ports: 50000-50100
  - kind: blackhole
    link: p0r1-s01
    ports: 60000
  - kind: link_latency
    link: h004.nic2-p1r2
    direction: both
    added: 50us
  - kind: host_processing
    host: h007
    added: 2ms
  - kind: host_leave
    host: h005
    start: 2m
    end: 3m
  - kind: agent_restart
    host: h000
    start: 150s
)";

TEST(ScenarioTest, AFullFileSetsEveryKey) {
  const Scenario s = ParseScenario(kFull, "full.yaml");
  const SimConfig& c = s.config;
  EXPECT_EQ(s.name, "every key");
  EXPECT_EQ(c.shape.hosts, 8);
  EXPECT_EQ(c.shape.rails, 4);
  EXPECT_EQ(c.shape.spines, 3);
  EXPECT_EQ(c.shape.pods, 2);
  EXPECT_EQ(c.shape.tiers, 2);
  EXPECT_EQ(c.duration_ns, 600 * kSecond);
  EXPECT_EQ(c.seed, 42u);
  EXPECT_EQ(c.hash_seed, 7u);
  EXPECT_EQ(c.analysis.window, std::chrono::seconds{30});
  EXPECT_EQ(c.threads, 3);
  EXPECT_EQ(c.agent.probe.interval, std::chrono::milliseconds{50});
  EXPECT_EQ(c.agent.probe.timeout, std::chrono::milliseconds{400});
  EXPECT_EQ(c.agent.ports.pool_size, 8u);
  EXPECT_EQ(c.agent.ports.rotation_period, std::chrono::minutes{2});
  EXPECT_EQ(c.agent.traceroute.refresh_period, std::chrono::seconds{120});
  EXPECT_EQ(c.agent.traceroute.rate_per_second, 20.0);
  EXPECT_FALSE(c.agent.traceroute.enabled);
  EXPECT_EQ(c.background.min, 1e-5);
  EXPECT_EQ(c.background.max, 0.001);
  EXPECT_EQ(c.latency.moving.share, 0.02);
  EXPECT_EQ(c.latency.moving.min_added_ns, 2'000);
  EXPECT_EQ(c.latency.moving.max_added_ns, 80'000);
  EXPECT_EQ(c.latency.moving.min_duration_ns, 200'000'000);
  EXPECT_EQ(c.latency.moving.max_duration_ns, 30 * kSecond);
  EXPECT_EQ(c.latency.queue.sigma, 0.25);
  EXPECT_EQ(c.latency.queue.knot_ns, 2 * kSecond);
  EXPECT_EQ(c.latency.queue.busy, 0.8);
  EXPECT_FALSE(c.latency.queue.tail);

  const Fleet fleet(c.shape);
  ASSERT_EQ(c.faults.size(), 13u);
  const auto& f = c.faults;
  EXPECT_EQ(f[0].kind, FaultKind::kLinkLoss);
  EXPECT_EQ(f[0].link, LinkNamed(fleet, "p1r2-s01"));
  EXPECT_EQ(f[0].direction, kUp);
  EXPECT_DOUBLE_EQ(f[0].rate, 0.005);
  EXPECT_EQ(f[0].start_ns, 60 * kSecond);
  EXPECT_EQ(f[0].end_ns, 300 * kSecond);
  // Defaults: both ways, from the start to the end of the run.
  EXPECT_EQ(f[1].kind, FaultKind::kLinkDown);
  EXPECT_EQ(f[1].direction, kBoth);
  EXPECT_EQ(f[1].start_ns, 0);
  EXPECT_EQ(f[1].end_ns, 600 * kSecond);
  EXPECT_EQ(f[2].kind, FaultKind::kLinkFlap);
  EXPECT_EQ(f[2].period_ns, 4 * kSecond);
  EXPECT_EQ(f[2].start_ns, 90 * kSecond);
  EXPECT_EQ(f[3].kind, FaultKind::kRnicDown);
  EXPECT_EQ(f[3].host, 1u);
  EXPECT_EQ(f[3].nic, 3u);
  EXPECT_EQ(f[4].kind, FaultKind::kRnicLoss);
  EXPECT_EQ(f[4].host, 6u);
  EXPECT_DOUBLE_EQ(f[4].rate, 0.02);
  EXPECT_EQ(f[5].kind, FaultKind::kRnicFlap);
  EXPECT_EQ(f[5].period_ns, 10 * kSecond);
  EXPECT_EQ(f[6].kind, FaultKind::kSwitchLoss);
  EXPECT_EQ(f[6].switch_id, DeviceNamed(fleet, "s02"));
  EXPECT_DOUBLE_EQ(f[6].rate, 0.01);
  EXPECT_EQ(f[7].kind, FaultKind::kBlackhole);
  EXPECT_EQ(f[7].direction, kDown);
  EXPECT_EQ(f[7].port_min, 50000);
  EXPECT_EQ(f[7].port_max, 50100);
  EXPECT_EQ(f[8].port_min, 60000);  // one port
  EXPECT_EQ(f[8].port_max, 60000);
  EXPECT_EQ(f[9].kind, FaultKind::kLinkLatency);
  EXPECT_EQ(f[9].link, LinkNamed(fleet, "h004.nic2-p1r2"));
  EXPECT_EQ(f[9].added_ns, 50'000);
  EXPECT_EQ(f[10].kind, FaultKind::kHostProcessing);
  EXPECT_EQ(f[10].host, 7u);
  EXPECT_EQ(f[10].added_ns, 2'000'000);
  EXPECT_EQ(f[11].kind, FaultKind::kHostLeave);
  EXPECT_EQ(f[11].start_ns, 120 * kSecond);
  EXPECT_EQ(f[11].end_ns, 180 * kSecond);
  EXPECT_EQ(f[12].kind, FaultKind::kAgentRestart);
  EXPECT_EQ(f[12].host, 0u);
  EXPECT_EQ(f[12].start_ns, 150 * kSecond);

  EXPECT_EQ(DescribeFault(fleet, f[0]), "link_loss p1r2-s01 up 0.5% 60s-300s");
  EXPECT_EQ(DescribeFault(fleet, f[3]), "rnic_down h001/nic3 0s-600s");
  EXPECT_EQ(DescribeFault(fleet, f[7]), "blackhole p0r1-s00 down ports 50000-50100 0s-600s");
}

TEST(ScenarioTest, AFileWrittenReadsBackAsTheSameScenario) {
  const Scenario s = ParseScenario(kFull, "full.yaml");
  const Scenario back = ParseScenario(ScenarioYaml(s), "written.yaml");
  EXPECT_TRUE(testing::SameScenario(back, s)) << ScenarioYaml(s);
  EXPECT_EQ(ParseScenario("seed: 18446744073709551615\n", "max.yaml").config.seed,
            18446744073709551615ULL);
}

TEST(ScenarioTest, DefaultsOfAnEmptyishFile) {
  const Scenario s = ParseScenario("seed: 3\n", "min.yaml");
  const SimConfig defaults;
  EXPECT_EQ(s.name, "min.yaml");  // the source, when the file has no name
  EXPECT_EQ(s.config.seed, 3u);
  EXPECT_EQ(s.config.shape.hosts, defaults.shape.hosts);
  EXPECT_EQ(s.config.shape.rails, defaults.shape.rails);
  EXPECT_EQ(s.config.duration_ns, defaults.duration_ns);
  EXPECT_EQ(s.config.analysis.window, defaults.analysis.window);
  EXPECT_EQ(s.config.agent.probe.interval, defaults.agent.probe.interval);
  EXPECT_TRUE(s.config.agent.traceroute.enabled);
  EXPECT_EQ(s.config.background.max, 0.0);
  EXPECT_TRUE(s.config.faults.empty());
}

TEST(ScenarioTest, LoadsAFileAndNamesAMissingOne) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("hostmesh-sim-scenario-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "s.yaml";
  std::ofstream(path) << kFull;
  EXPECT_EQ(LoadScenarioFile(path).config.faults.size(), 13u);
  try {
    LoadScenarioFile(dir / "missing.yaml");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.yaml: cannot read the file"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(ScenarioTest, TheReadmesExamplesAreValid) {
  std::ifstream in(HOSTMESH_SIM_README);
  ASSERT_TRUE(in) << HOSTMESH_SIM_README;
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const std::string open = "```yaml\n";
  int blocks = 0;
  for (auto at = readme.find(open); at != std::string::npos; at = readme.find(open, at)) {
    at += open.size();
    const auto end = readme.find("```", at);
    ASSERT_NE(end, std::string::npos);
    const Scenario s = ParseScenario(readme.substr(at, end - at), "sim/README.md");
    EXPECT_FALSE(s.config.faults.empty());
    ++blocks;
  }
  EXPECT_GE(blocks, 1);
}

TEST(ScenarioTest, EveryShippedScenarioLoads) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(HOSTMESH_SIM_SCENARIOS)) {
    if (entry.path().extension() != ".yaml") continue;
    const Scenario s = LoadScenarioFile(entry.path());
    EXPECT_FALSE(s.name.empty()) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 7);
}

// The issues of a bad text (all of them, in file order).
std::vector<config::ConfigIssue> Issues(const std::string& yaml) {
  try {
    ParseScenario(yaml, "bad.yaml");
  } catch (const config::ConfigError& e) {
    return e.issues();
  }
  ADD_FAILURE() << "accepted:\n" << yaml;
  return {};
}

// One fault of a 4 x 2 x 2 fabric whose key lines follow "  - kind: KIND" (line 4).
std::string OneFault(const std::string& kind, const std::string& lines) {
  return "fabric: {hosts: 4, rails: 2, spines: 2}\nduration: 5m\nfaults:\n  - kind: " + kind +
         "\n" + lines;
}

struct Expect {
  int line;
  int column;
  std::string path;
  std::string message;  // a part of it
};

void ExpectIssue(const std::string& yaml, const Expect& want) {
  const auto issues = Issues(yaml);
  ASSERT_EQ(issues.size(), 1u) << yaml;
  const config::ConfigIssue& got = issues.front();
  EXPECT_EQ(got.source, "bad.yaml");
  EXPECT_EQ(got.line, want.line) << got.ToString();
  EXPECT_EQ(got.column, want.column) << got.ToString();
  EXPECT_EQ(got.path, want.path) << got.ToString();
  EXPECT_NE(got.message.find(want.message), std::string::npos) << got.ToString();
  // The operator's line: "bad.yaml:4:5: faults[0].rate: ...".
  const std::string prefix = "bad.yaml:" + std::to_string(want.line) + ":" +
                             std::to_string(want.column) + ": " + want.path + ": ";
  EXPECT_EQ(got.ToString().rfind(prefix, 0), 0u) << got.ToString();
}

TEST(ScenarioErrorsTest, UnknownKeys) {
  ExpectIssue("seed: 1\ncolour: red\n", {2, 1, "colour", "unknown key"});
  ExpectIssue("fabric:\n  hosts: 4\n  racks: 2\n", {3, 3, "fabric.racks", "unknown key"});
  ExpectIssue("agent:\n  intervl: 1s\n", {2, 3, "agent.intervl", "unknown key"});
  ExpectIssue("background_loss: {min: 0, mx: 1}\n", {1, 27, "background_loss.mx", "unknown key"});
  ExpectIssue(OneFault("link_down", "    link: p0r0-s00\n    speed: 1\n"),
              {6, 5, "faults[0].speed", "unknown key"});
}

TEST(ScenarioErrorsTest, BadValues) {
  ExpectIssue("duration: 5 minutes\n", {1, 11, "duration", "not a duration"});
  ExpectIssue("fabric:\n  hosts: 1\n", {2, 10, "fabric.hosts", "must be a number in [2, "});
  ExpectIssue("fabric:\n  tiers: 4\n", {2, 10, "fabric.tiers", "[2, 3]"});
  ExpectIssue("agent:\n  trace_rate: fast\n", {2, 15, "agent.trace_rate", "must be a number"});
  ExpectIssue("background_loss:\n  min: 0.01\n  max: 0.001\n",
              {2, 3, "background_loss", "max must be >= min"});
  ExpectIssue("agent:\n  traceroute: maybe\n", {2, 15, "agent.traceroute", "true or false"});
  ExpectIssue("congestion:\n  min_added: 50us\n  max_added: 5us\n",
              {2, 3, "congestion", "max_added must be >= min_added"});
  ExpectIssue("congestion:\n  share: 2\n", {2, 10, "congestion.share", "[0, 1]"});
  ExpectIssue("congestion:\n  knot: 0s\n", {2, 9, "congestion.knot", "must be positive"});
  ExpectIssue("seed: -1\n", {1, 7, "seed", "must be an integer in [0, 2^64)"});
  ExpectIssue("seed: 18446744073709551616\n", {1, 7, "seed", "must be an integer"});
}

TEST(ScenarioErrorsTest, BadRates) {
  for (const std::string rate : {"0", "150%", "1.5", "-0.1", "lots"}) {
    ExpectIssue(OneFault("link_loss", "    link: p0r0-s00\n    rate: " + rate + "\n"),
                {6, 11, "faults[0].rate", "must be a rate in (0, 1]"});
  }
}

TEST(ScenarioErrorsTest, UnknownTargets) {
  ExpectIssue(OneFault("link_loss", "    link: p0r0-s09\n    rate: 0.1\n"),
              {5, 11, "faults[0].link", "no link named \"p0r0-s09\" in this fabric"});
  ExpectIssue(OneFault("rnic_down", "    host: h004\n    nic: 0\n"),
              {5, 11, "faults[0].host", "no host named \"h004\""});
  ExpectIssue(OneFault("switch_loss", "    switch: s05\n    rate: 0.1\n"),
              {5, 13, "faults[0].switch", "no switch named \"s05\""});
  // A host is no switch.
  ExpectIssue(OneFault("switch_loss", "    switch: h000\n    rate: 0.1\n"),
              {5, 13, "faults[0].switch", "no switch named \"h000\""});
  ExpectIssue(OneFault("rnic_loss", "    host: h000\n    nic: 2\n    rate: 0.1\n"),
              {6, 10, "faults[0].nic", "[0, 1]"});
  ExpectIssue(OneFault("warp_core_breach", ""),
              {4, 11, "faults[0].kind", "must be one of link_loss, link_down"});
  ExpectIssue(OneFault("link_loss", "    link: p0r0-s00\n    rate: 0.1\n    direction: sideways\n"),
              {7, 16, "faults[0].direction", "must be up, down or both"});
  ExpectIssue(OneFault("blackhole", "    link: p0r0-s00\n    ports: 60000-50000\n"),
              {6, 12, "faults[0].ports", "must be a port or a range MIN-MAX"});
  ExpectIssue(OneFault("blackhole", "    link: p0r0-s00\n    ports: 70000\n"),
              {6, 12, "faults[0].ports", "must be a port or a range"});
}

TEST(ScenarioErrorsTest, EndBeforeStart) {
  ExpectIssue(OneFault("link_down", "    link: p0r0-s00\n    start: 2m\n    end: 1m\n"),
              {7, 10, "faults[0].end", "must be after start"});
  // Without an end a fault lasts until the run's: a start after it is as wrong.
  ExpectIssue(OneFault("link_down", "    link: p0r0-s00\n    start: 6m\n"),
              {4, 5, "faults[0].end", "must be after start"});
}

TEST(ScenarioErrorsTest, MissingRequiredKeyPerKind) {
  struct Case {
    std::string kind, lines, key;
  };
  const std::vector<Case> cases = {
      {"link_loss", "    rate: 0.1\n", "link"},
      {"link_loss", "    link: p0r0-s00\n", "rate"},
      {"link_down", "", "link"},
      {"link_flap", "    link: p0r0-s00\n", "period"},
      {"rnic_down", "    nic: 0\n", "host"},
      {"rnic_down", "    host: h000\n", "nic"},
      {"rnic_loss", "    host: h000\n    nic: 0\n", "rate"},
      {"rnic_flap", "    host: h000\n    nic: 0\n", "period"},
      {"switch_loss", "    rate: 0.1\n", "switch"},
      {"switch_loss", "    switch: s00\n", "rate"},
      {"blackhole", "    link: p0r0-s00\n", "ports"},
      {"link_latency", "    link: p0r0-s00\n", "added"},
      {"host_processing", "    host: h000\n", "added"},
      {"host_leave", "", "host"},
      {"agent_restart", "", "host"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind + " without " + c.key);
    ExpectIssue(OneFault(c.kind, c.lines), {4, 5, "faults[0]." + c.key, "required for " + c.kind});
  }
  ExpectIssue("faults:\n  - link: p0r0-s00\n", {2, 5, "faults[0].kind", "must be one of"});
}

TEST(ScenarioErrorsTest, EveryIssueAtOnceInFileOrder) {
  const auto issues = Issues(OneFault(
      "link_loss", "    link: nowhere\n    rate: 2\n  - kind: rnic_down\n    host: h000\n"));
  ASSERT_EQ(issues.size(), 3u);
  EXPECT_EQ(issues[0].path, "faults[0].link");
  EXPECT_EQ(issues[1].path, "faults[0].rate");
  EXPECT_EQ(issues[2].path, "faults[1].nic");
}

TEST(ScenarioErrorsTest, NotYamlOrNotAMap) {
  const auto syntax = Issues("fabric: {hosts: 4\n");
  ASSERT_EQ(syntax.size(), 1u);
  EXPECT_GT(syntax.front().line, 0);
  EXPECT_EQ(syntax.front().source, "bad.yaml");
  ExpectIssue("fabric: 4\n", {1, 9, "fabric", "must be a map"});
  ExpectIssue("faults:\n  kind: link_down\n", {2, 3, "faults", "must be a list"});
  ExpectIssue("faults:\n  - link_down\n", {2, 5, "faults[0]", "must be a map"});
}

TEST(ScenarioErrorsTest, AListWhereAValueBelongs) {
  ExpectIssue("duration: [1, 2]\n", {1, 11, "duration", "a single value"});
  ExpectIssue("fabric:\n  hosts: {n: 4}\n", {2, 10, "fabric.hosts", "a single value"});
  ExpectIssue(OneFault("link_down", "    link: [p0r0-s00, p0r0-s01]\n"),
              {5, 11, "faults[0].link", "a single value"});
}

}  // namespace
}  // namespace hostmesh::sim
