#pragma once

// Scenarios: a fleet, agent settings, background loss and faults, from a YAML
// file (sim/README.md documents the format) or built at random by the suite.
// Errors name the file, line, column and key (config::ConfigError).

#include <filesystem>
#include <string>
#include <string_view>

#include "sim/simulation.h"

namespace hostmesh::sim {

struct Scenario {
  std::string name;
  SimConfig config;
};

Scenario ParseScenario(std::string_view text, std::string_view source_name);
Scenario LoadScenarioFile(const std::filesystem::path& path);
// The YAML ParseScenario reads back as the same scenario, every setting
// written out (a suite's scenario as a file anyone can rerun).
std::string ScenarioYaml(const Scenario& scenario);

// "link_loss p0r1-s02 up 0.50% 60s-600s": a fault as operators would say it.
std::string DescribeFault(const Fleet& fleet, const Fault& fault);

}  // namespace hostmesh::sim
