#include "tests/common/config/test_config.h"

#include <array>

#include "common/config/yaml_loader.h"

namespace hostmesh::config::fixture {

using namespace std::chrono_literals;

namespace {

constexpr std::array<EnumName<Mode>, 2> kModeNames = {
    {{"fast", Mode::kFast}, {"slow", Mode::kSlow}}};

}  // namespace

void ReadTestConfig(MapReader& r, TestConfig& cfg) {
  r.Required("host", &cfg.host);
  r.Optional("enabled", &cfg.enabled);
  r.Optional("count", &cfg.count, {1, 10});
  r.Optional("small", &cfg.small);
  r.Optional("ratio", &cfg.ratio, {0.0, 1.0});
  r.Optional("interval", &cfg.interval, Range{1ms, 60s});
  r.Optional("budget", &cfg.budget, {MiB(1), GiB(16)});
  r.Optional("target", &cfg.target);
  r.Optional("mode", &cfg.mode, kModeNames);
  r.Optional("tags", &cfg.tags);
  r.Map("probe", [&](MapReader& m) {
    m.Optional("timeout", &cfg.probe.timeout, Range{1ms, 60s});
    m.Optional("rate", &cfg.probe.rate, Range{0.0, 100.0, LowerBound::kExclusive});
  });
  r.List("servers", [&](MapReader& m) {
    Server& server = cfg.servers.emplace_back();
    m.Required("name", &server.name);
    m.Required("ip", &server.ip);
    m.Optional("port", &server.port, {1, 65535});
  });
}

TestConfig ParseTestConfig(std::string_view yaml) {
  TestConfig cfg;
  ReadYaml(yaml, "test.yaml", [&](MapReader& r) { ReadTestConfig(r, cfg); });
  return cfg;
}

}  // namespace hostmesh::config::fixture
