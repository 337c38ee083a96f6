#pragma once

// A small config struct with one field of every kind MapReader reads, shared by
// the reader tests.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/config/map_reader.h"

namespace hostmesh::config::fixture {

enum class Mode { kFast, kSlow };

struct Server {
  std::string name;
  IpAddress ip;
  std::uint16_t port = 80;
};

struct ProbeSection {
  std::chrono::nanoseconds timeout = std::chrono::seconds{1};
  double rate = 1.0;
};

struct TestConfig {
  std::string host;
  bool enabled = true;
  int count = 3;
  std::uint8_t small = 1;
  double ratio = 0.5;
  std::chrono::nanoseconds interval = std::chrono::milliseconds{100};
  ByteSize budget = MiB(64);
  Endpoint target{"127.0.0.1", 9000};
  Mode mode = Mode::kFast;
  std::vector<std::string> tags;
  ProbeSection probe;
  std::vector<Server> servers;
};

// Reads every TestConfig key; "host" is required.
void ReadTestConfig(MapReader& r, TestConfig& cfg);

// ReadYaml + ReadTestConfig, source name "test.yaml".
TestConfig ParseTestConfig(std::string_view yaml);

}  // namespace hostmesh::config::fixture
