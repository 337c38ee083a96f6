// hostmesh-sim: the fleet simulator. Flags are parsed here only; everything
// else takes config structs (sim/README.md).

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "common/config/config_error.h"
#include "sim/flow_export.h"
#include "sim/report.h"
#include "sim/suite.h"
#include "topology/generator.h"

namespace hs = hostmesh::sim;

namespace {

hs::ScenarioOutcome RunScenario(const hs::Scenario& scenario, const std::string& export_dir,
                                bool windows) {
  hs::Simulation sim(scenario.config);
  hs::ScenarioOutcome outcome;
  outcome.name = scenario.name;
  for (const hs::Fault& f : scenario.config.faults) {
    outcome.faults.push_back(hs::DescribeFault(sim.fleet(), f));
  }
  std::unique_ptr<hs::FlowExporter> exporter;
  hs::UploadObserver on_upload;
  if (!export_dir.empty()) {
    exporter = std::make_unique<hs::FlowExporter>(sim.fleet(), scenario, export_dir);
    on_upload = [&](std::int64_t end, const std::vector<hs::HostOutput>& uploads) {
      exporter->Add(end, uploads);
    };
  }
  outcome.result = sim.Run({}, on_upload);
  if (exporter) exporter->Finish();
  outcome.card = hs::ScoreRun(sim.fleet(), scenario.config.faults, outcome.result.windows,
                              outcome.result.incidents, scenario.config.analysis.window.count());
  if (windows) hs::PrintWindows(std::cout, sim.fleet(), scenario.config.faults, outcome.result);
  return outcome;
}

void WriteJson(const std::string& path, const nlohmann::json& doc) {
  if (path.empty()) return;
  std::ofstream out(path);
  out << doc.dump(1) << "\n";
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hostmesh-sim: the real agent core and analyzer over a simulated fleet"};
  app.require_subcommand(1);

  std::string scenario_file, json_path, export_dir;
  bool windows = false;
  int threads = 2;
  auto* run = app.add_subcommand("run", "Run one scenario from a YAML file; print its scorecard");
  run->add_option("scenario", scenario_file, "scenario YAML (sim/README.md)")->required();
  run->add_option("--json", json_path, "write the outcome as JSON here");
  run->add_option("--export", export_dir, "write every window's probe flows and the topology here");
  run->add_flag("--windows", windows, "print truth and verdicts window by window");
  auto* run_threads =
      run->add_option("--threads", threads, "host threads (results do not depend on it)");

  hs::SuiteOptions suite_options;
  auto* suite = app.add_subcommand("suite", "Run the built-in suite of random fault mixes");
  suite->add_option("--hosts", suite_options.shape.hosts, "hosts")->capture_default_str();
  suite->add_option("--rails", suite_options.shape.rails, "rails (NICs per host)")
      ->capture_default_str();
  suite->add_option("--spines", suite_options.shape.spines, "spines")->capture_default_str();
  suite->add_option("--pods", suite_options.shape.pods, "pods")->capture_default_str();
  suite->add_option("--tiers", suite_options.shape.tiers, "2 or 3")->capture_default_str();
  suite->add_option("--scenarios", suite_options.scenarios, "scenarios")->capture_default_str();
  double minutes = 5;
  suite->add_option("--minutes", minutes, "simulated minutes per scenario")->capture_default_str();
  suite->add_option("--seed", suite_options.seed, "suite seed")->capture_default_str();
  suite->add_option("--max-faults", suite_options.max_faults, "faults per scenario, at most")
      ->capture_default_str();
  suite->add_option("--json", json_path, "write every outcome as JSON here");
  suite->add_option("--threads", threads, "host threads");
  suite->add_flag("--windows", windows, "print truth and verdicts window by window");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*run) {
      hs::Scenario scenario = hs::LoadScenarioFile(scenario_file);
      if (run_threads->count() > 0) scenario.config.threads = threads;
      const hs::ScenarioOutcome outcome = RunScenario(scenario, export_dir, windows);
      const hs::Fleet fleet(scenario.config.shape);
      std::cout << scenario.name << ": " << hostmesh::topology::DescribeShape(scenario.config.shape)
                << ", " << scenario.config.duration_ns / 1'000'000'000 << " s simulated in "
                << outcome.result.wall_seconds << " s, " << outcome.result.probes << " probes\n";
      for (const auto& f : outcome.faults) std::cout << "  fault: " << f << "\n";
      hs::PrintScorecard(std::cout, outcome.card, "scorecard");
      WriteJson(json_path, hs::OutcomeJson(fleet, scenario, outcome));
      return 0;
    }
    if (*suite) {
      suite_options.duration_ns = static_cast<std::int64_t>(minutes * 60e9);
      suite_options.threads = threads;
      const auto scenarios = hs::BuildSuite(suite_options);
      const hs::Fleet fleet(suite_options.shape);
      hs::Scorecard total;
      nlohmann::json outcomes = nlohmann::json::array();
      double wall = 0;
      for (const hs::Scenario& s : scenarios) {
        const hs::ScenarioOutcome outcome = RunScenario(s, "", windows);
        total.ours += outcome.card.ours;
        total.paper += outcome.card.paper;
        wall += outcome.result.wall_seconds;
        std::cout << s.name << " (" << outcome.result.wall_seconds << " s):";
        for (const auto& f : outcome.faults) std::cout << " [" << f << "]";
        std::cout << "  F1 " << outcome.card.ours.f1() << " vs " << outcome.card.paper.f1() << "\n";
        outcomes.push_back(hs::OutcomeJson(fleet, s, outcome));
      }
      const std::string title = "scorecard: " + std::to_string(scenarios.size()) + " scenarios, " +
                                hostmesh::topology::DescribeShape(suite_options.shape) + ", " +
                                std::to_string(minutes) + " min each, seed " +
                                std::to_string(suite_options.seed) + " (" + std::to_string(wall) +
                                " s)";
      hs::PrintScorecard(std::cout, total, title);
      WriteJson(json_path, {{"hostmesh", hs::ScoreJson(total.ours)},
                            {"paper", hs::ScoreJson(total.paper)},
                            {"scenarios", outcomes}});
      return 0;
    }
  } catch (const hostmesh::config::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "hostmesh-sim: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
