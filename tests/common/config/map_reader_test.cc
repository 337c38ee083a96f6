// Suite names start with "config" so `ctest -R config` selects them.
#include "common/config/map_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/config/yaml_loader.h"
#include "tests/common/config/test_config.h"

namespace hostmesh::config {
namespace {

using namespace std::chrono_literals;
using fixture::Mode;
using fixture::ParseTestConfig;
using fixture::TestConfig;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;

// The issues a parse reports, or none.
std::vector<ConfigIssue> IssuesOf(std::string_view yaml) {
  try {
    ParseTestConfig(yaml);
  } catch (const ConfigError& e) {
    return e.issues();
  }
  return {};
}

TEST(config_reader, MinimalInputKeepsDefaults) {
  const TestConfig cfg = ParseTestConfig("host: h1\n");
  const TestConfig defaults;
  EXPECT_EQ(cfg.host, "h1");
  EXPECT_EQ(cfg.enabled, defaults.enabled);
  EXPECT_EQ(cfg.count, defaults.count);
  EXPECT_EQ(cfg.small, defaults.small);
  EXPECT_EQ(cfg.ratio, defaults.ratio);
  EXPECT_EQ(cfg.interval, defaults.interval);
  EXPECT_EQ(cfg.budget, defaults.budget);
  EXPECT_EQ(cfg.target, defaults.target);
  EXPECT_EQ(cfg.mode, defaults.mode);
  EXPECT_TRUE(cfg.tags.empty());
  EXPECT_EQ(cfg.probe.timeout, defaults.probe.timeout);
  EXPECT_EQ(cfg.probe.rate, defaults.probe.rate);
  EXPECT_TRUE(cfg.servers.empty());
}

TEST(config_reader, EveryKindOfValueRoundTrips) {
  const TestConfig cfg = ParseTestConfig(R"(
host: h1
enabled: false
count: 10
small: 255
ratio: 0.75
interval: 1.5s
budget: 512 MiB
target: "[fd00::2]:50051"
mode: slow
tags: [a, "b c"]
probe:
  timeout: 2500us
  rate: 0.5
servers:
  - name: one
    ip: 198.18.0.1
  - {name: two, ip: "fd00::1", port: 8080}
)");
  EXPECT_EQ(cfg.host, "h1");
  EXPECT_FALSE(cfg.enabled);
  EXPECT_EQ(cfg.count, 10);
  EXPECT_EQ(cfg.small, 255);
  EXPECT_EQ(cfg.ratio, 0.75);
  EXPECT_EQ(cfg.interval, 1500ms);
  EXPECT_EQ(cfg.budget, MiB(512));
  EXPECT_EQ(cfg.target, (Endpoint{"fd00::2", 50051}));
  EXPECT_EQ(cfg.mode, Mode::kSlow);
  EXPECT_THAT(cfg.tags, ElementsAre("a", "b c"));
  EXPECT_EQ(cfg.probe.timeout, 2500us);
  EXPECT_EQ(cfg.probe.rate, 0.5);
  ASSERT_EQ(cfg.servers.size(), 2u);
  EXPECT_EQ(cfg.servers[0].name, "one");
  EXPECT_EQ(cfg.servers[0].ip.ToString(), "198.18.0.1");
  EXPECT_EQ(cfg.servers[0].port, 80);
  EXPECT_EQ(cfg.servers[1].name, "two");
  EXPECT_EQ(cfg.servers[1].ip.ToString(), "fd00::1");
  EXPECT_EQ(cfg.servers[1].port, 8080);
}

TEST(config_reader, EmptySectionsAndFilesMeanDefaults) {
  const TestConfig cfg = ParseTestConfig("host: h1\nprobe:\nservers:\ntags:\n");
  EXPECT_EQ(cfg.probe.timeout, 1s);
  EXPECT_TRUE(cfg.servers.empty());
  EXPECT_TRUE(cfg.tags.empty());

  // An empty file still names what is required.
  const std::vector<ConfigIssue> issues = IssuesOf("# nothing here\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "host");
  EXPECT_EQ(issues[0].message, "required key is missing");
}

TEST(config_reader, WhatReadsLikeCompilerOutput) {
  try {
    ParseTestConfig("host: h1\ninterval: 0ms\n");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "test.yaml:2:11: interval: must be between 1ms and 60s, got \"0ms\"");
  }
}

TEST(config_reader, CollectsEveryErrorInFileOrder) {
  const char* yaml = R"(servers:
  - name: one
    ip: 198.18.0.300
  - name: two
    ip: 198.18.0.2
    prot: 81
probe:
  rate: 0
mode: fsat
count: many
)";
  try {
    ParseTestConfig(yaml);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(
        e.issues(),
        ElementsAre(Field(&ConfigIssue::path, "host"), Field(&ConfigIssue::path, "servers[0].ip"),
                    Field(&ConfigIssue::path, "servers[1].prot"),
                    Field(&ConfigIssue::path, "probe.rate"), Field(&ConfigIssue::path, "mode"),
                    Field(&ConfigIssue::path, "count")));
    EXPECT_EQ(std::string(e.what()),
              "test.yaml:1:1: host: required key is missing\n"
              "test.yaml:3:9: servers[0].ip: expected an IPv4 or IPv6 address, got "
              "\"198.18.0.300\"\n"
              "test.yaml:6:5: servers[1].prot: unknown key; did you mean \"port\"?\n"
              "test.yaml:8:9: probe.rate: must be greater than 0 and at most 100, got \"0\"\n"
              "test.yaml:9:7: mode: must be one of \"fast\", \"slow\", got \"fsat\" (did you "
              "mean \"fast\"?)\n"
              "test.yaml:10:8: count: expected an integer, got \"many\"");
  }
}

TEST(config_reader, FailLocatesCrossFieldProblems) {
  try {
    ReadYaml("a: 1\nsection:\n  b: 2\n", "x.yaml", [](MapReader& r) {
      int a = 0;
      r.Optional("a", &a);
      r.Map("section", [](MapReader& m) {
        int b = 0;
        m.Optional("b", &b);
        m.Fail("b", "must exceed a");       // present: at its value
        m.Fail("c", "is needed with b");    // absent: at the map's key
        m.Fail("section is inconsistent");  // the map itself
      });
    });
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "x.yaml:2:1: section.c: is needed with b\n"
              "x.yaml:2:1: section: section is inconsistent\n"
              "x.yaml:3:6: section.b: must exceed a");
  }
}

TEST(config_reader, HasCountsAsAskingForTheKey) {
  bool has_a = false;
  bool has_b = true;
  ReadYaml("a: {x: 1}\n", "x.yaml", [&](MapReader& r) {
    has_a = r.Has("a");
    has_b = r.Has("b");
  });
  EXPECT_TRUE(has_a);
  EXPECT_FALSE(has_b);
}

TEST(config_reader, ReadsFiles) {
  const std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) / "config_reader_test.yaml";
  {
    std::ofstream out(path);
    out << "host: from-file\ncount: 11\n";
  }
  try {
    ReadYamlFile(path, [](MapReader& r) {
      TestConfig cfg;
      fixture::ReadTestConfig(r, cfg);
    });
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 1u);
    EXPECT_EQ(e.issues()[0].source, path.string());
    EXPECT_EQ(e.issues()[0].line, 2);
  }
  std::filesystem::remove(path);
}

TEST(config_reader, MissingFileIsAConfigError) {
  try {
    ReadYamlFile("/nonexistent/agent.yaml", [](MapReader&) {});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "/nonexistent/agent.yaml: cannot read the file: No such file or directory");
  }
}

TEST(config_reader, DirectoryIsAConfigError) {
  try {
    ReadYamlFile(::testing::TempDir(), [](MapReader&) {});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot read the file: is a directory"));
  }
}

}  // namespace
}  // namespace hostmesh::config
