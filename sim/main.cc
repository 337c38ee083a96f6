// hostmesh-sim: the fleet simulator. Flags are parsed here only; everything
// else takes config structs (sim/README.md).

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/config/config_error.h"
#include "sim/bench.h"
#include "sim/calibration_report.h"
#include "sim/diagnosis_score.h"
#include "sim/flow_export.h"
#include "sim/report.h"
#include "sim/suite.h"
#include "topology/generator.h"

namespace hs = hostmesh::sim;

namespace {

// "3", "2.5": the suite's minutes per scenario as given.
std::string FormatMinutes(double minutes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", minutes);
  return buf;
}

// One line per culprit of every window: what the analyzer blamed and how sure.
void Explain(const hs::Fleet& fleet, const hostmesh::analysis::WindowReport& r,
             const hs::WindowRecord& rec, const std::vector<std::uint32_t>& host_of) {
  std::printf("window %llds: background %.2e, threshold %.1f nats\n",
              static_cast<long long>(rec.start_ns / 1'000'000'000), r.background_loss,
              r.evidence_threshold);
  const auto& topo = fleet.topology();
  for (const auto& s : r.loss.culprits) {
    std::string name;
    if (s.component.kind == hostmesh::analysis::Component::Kind::kLink) {
      name = topo.link(s.component.link).name + " " +
             std::string(hostmesh::analysis::LinkDirectionName(s.component.direction));
    } else {
      const auto h = s.component.host < host_of.size() ? host_of[s.component.host] : 0;
      name = fleet.hosts()[h].name + "/nic" + std::to_string(s.component.nic);
    }
    std::printf(
        "  %-28s loss %.4f evidence %.1f explained %llu good %llu confidence %.2f (raw %.2f)\n",
        name.c_str(), s.loss, s.z, static_cast<unsigned long long>(s.explained),
        static_cast<unsigned long long>(s.good), s.confidence, s.raw_confidence);
  }
  for (const auto& sw : r.loss.switches) {
    if (!sw.culprit) continue;
    std::printf("  switch %-21s loss %.4f evidence %.1f confidence %.2f (raw %.2f)\n",
                topo.device(sw.id).name.c_str(), sw.loss, sw.evidence, sw.confidence,
                sw.raw_confidence);
  }
}

hs::ScenarioOutcome RunScenario(const hs::Scenario& scenario, const std::string& export_dir,
                                bool windows, bool explain) {
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
  hs::WindowObserver on_window;
  std::vector<std::uint32_t> host_of;
  if (explain) {
    // Host ids are given in order of first upload: every host uploads in the
    // first slice, in fleet order.
    for (std::uint32_t h = 0; h < sim.fleet().hosts().size(); ++h) host_of.push_back(h);
    on_window = [&](const hostmesh::analysis::WindowReport& r, const hs::WindowRecord& rec) {
      Explain(sim.fleet(), r, rec, host_of);
    };
  }
  outcome.result = sim.Run(on_window, on_upload);
  if (exporter) {
    exporter->Finish();
    if (exporter->late_results() > 0) {
      std::cerr << "export: " << exporter->late_results()
                << " results arrived after their window was judged (late for the analyzer "
                   "too) and are not in flows.jsonl\n";
    }
  }
  outcome.card = hs::ScoreRun(sim.fleet(), scenario.config.faults, outcome.result.windows,
                              outcome.result.incidents, scenario.config.analysis.window.count(),
                              outcome.result.limit_windows);
  if (windows) hs::PrintWindows(std::cout, sim.fleet(), scenario.config.faults, outcome.result);
  return outcome;
}

void WriteJson(const std::string& path, const nlohmann::json& doc) {
  if (path.empty()) return;
  std::ofstream out(path);
  out << doc.dump(1) << "\n";
  if (!out) throw std::runtime_error("cannot write " + path);
}

// suite --write-scenarios: each scenario (or only the one named) as DIR/NAME.yaml.
int WriteScenarios(const std::vector<hs::Scenario>& scenarios, const std::string& dir,
                   const std::string& only) {
  std::filesystem::create_directories(dir);
  for (const hs::Scenario& s : scenarios) {
    if (!only.empty() && s.name != only) continue;
    const std::filesystem::path path = std::filesystem::path(dir) / (s.name + ".yaml");
    std::ofstream out(path);
    out << hs::ScenarioYaml(s);
    if (!out) throw std::runtime_error("cannot write " + path.string());
    std::cout << path.string() << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hostmesh-sim: the real agent core and analyzer over a simulated fleet"};
  app.require_subcommand(1);

  std::string scenario_file, json_path, export_dir;
  bool windows = false, explain = false;
  std::string only;
  int threads = 2;
  auto* run = app.add_subcommand("run", "Run one scenario from a YAML file; print its scorecard");
  run->add_option("scenario", scenario_file, "scenario YAML (sim/README.md)")->required();
  run->add_option("--json", json_path, "write the outcome as JSON here");
  run->add_option("--export", export_dir, "write every window's probe flows and the topology here");
  run->add_flag("--windows", windows, "print truth and verdicts window by window");
  run->add_flag("--explain", explain, "print every window's culprits with their evidence");
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
  suite
      ->add_option("--faults", suite_options.faults,
                   "exactly this many faults in every faulty scenario (0: 1 to --max-faults)")
      ->check(CLI::Range(0, 100));
  std::vector<std::string> kinds;
  suite->add_option("--kinds", kinds, "draw only these fault kinds (link_loss,rnic_loss,...)")
      ->delimiter(',');
  suite->add_option("--json", json_path, "write every outcome as JSON here");
  suite->add_option("--threads", threads, "host threads");
  suite->add_flag("--every-kind", suite_options.every_kind,
                  "each faulty scenario's first fault is the next fault kind in turn (the "
                  "diagnosis' eight types first), so a short suite holds every kind");
  suite->add_flag("--windows", windows, "print truth and verdicts window by window");
  suite->add_flag("--explain", explain, "print every window's culprits with their evidence");
  suite->add_option("--only", only, "run only the scenario of this name (suite-SEED-N)");
  std::string write_dir;
  suite->add_option("--write-scenarios", write_dir,
                    "write each scenario as DIR/NAME.yaml (for `run`) and run nothing");
  bool calibrate = false;
  suite->add_flag("--calibrate", calibrate,
                  "fit the analyzer's confidence maps from this suite's verdicts and print them");

  std::vector<std::string> calibrate_files;
  auto* calibrate_cmd = app.add_subcommand(
      "calibrate", "Fit the analyzer's confidence maps from suites' JSON (suite --json)");
  calibrate_cmd->add_option("suites", calibrate_files, "suite JSON files, counts summed")
      ->required();

  hs::BenchOptions bench_options;
  double bench_minutes = 10;
  auto* bench = app.add_subcommand(
      "bench", "Simulation speed and the analyzer's memory over a fault-free fleet");
  bench->add_option("--hosts", bench_options.shape.hosts, "hosts")->capture_default_str();
  bench->add_option("--rails", bench_options.shape.rails, "rails")->capture_default_str();
  bench->add_option("--spines", bench_options.shape.spines, "spines")->capture_default_str();
  bench->add_option("--pods", bench_options.shape.pods, "pods")->capture_default_str();
  bench->add_option("--minutes", bench_minutes, "simulated minutes")->capture_default_str();
  bench->add_option("--seed", bench_options.seed, "seed")->capture_default_str();
  bench->add_option("--threads", bench_options.threads, "host threads")->capture_default_str();
  bench
      ->add_option("--rotation-speedup", bench_options.rotation_speedup,
                   "port rotation this many times faster")
      ->capture_default_str();
  bench
      ->add_option("--memory-every", bench_options.memory_every_s,
                   "memory sample every this many simulated seconds")
      ->capture_default_str();

  int bench_scenario = -1;
  bench->add_option("--suite-scenario", bench_scenario,
                    "with the faults and background of this suite scenario (its index), and "
                    "its scorecard");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*run) {
      hs::Scenario scenario = hs::LoadScenarioFile(scenario_file);
      if (run_threads->count() > 0) scenario.config.threads = threads;
      const hs::ScenarioOutcome outcome = RunScenario(scenario, export_dir, windows, explain);
      const hs::Fleet fleet(scenario.config.shape);
      std::cout << scenario.name << ": " << hostmesh::topology::DescribeShape(scenario.config.shape)
                << ", " << scenario.config.duration_ns / 1'000'000'000 << " s simulated in "
                << outcome.result.wall_seconds << " s, " << outcome.result.probes << " probes, "
                << outcome.result.paths_resolved << " paths resolved ("
                << outcome.result.paths_continued << " continued after a cut), "
                << outcome.result.paths_cut_short << " cut short, "
                << outcome.result.paths_unresolved << " unresolved\n"
                << "  cpu: hosts " << outcome.result.host_cpu_seconds << " s ("
                << outcome.result.host_wall_seconds << " s wall), analyzer "
                << outcome.result.analyzer_seconds << " s\n";
      for (const auto& f : outcome.faults) std::cout << "  fault: " << f << "\n";
      hs::PrintScorecard(std::cout, outcome.card, "scorecard");
      hs::DiagnosisScore diagnosis;
      hs::ScoreDiagnosis(fleet, scenario.config.faults, outcome.result.incidents,
                         scenario.config.analysis.window.count(), diagnosis);
      hs::PrintDiagnosisScore(std::cout, diagnosis);
      WriteJson(json_path, hs::OutcomeJson(fleet, scenario, outcome));
      return 0;
    }
    if (*bench) {
      bench_options.duration_ns = static_cast<std::int64_t>(bench_minutes * 60e9);
      hostmesh::sim::SimConfig config = hs::BenchConfig(bench_options);
      if (bench_scenario >= 0) {
        // A suite scenario's faults and background on the bench's fleet.
        hs::SuiteOptions so;
        so.shape = bench_options.shape;
        so.duration_ns = bench_options.duration_ns;
        so.seed = bench_options.seed;
        so.scenarios = bench_scenario + 1;
        const hs::Scenario s = hs::BuildSuite(so).back();
        std::cout << s.name << "\n";
        config.faults = s.config.faults;
        config.background = s.config.background;
      }
      const hs::SimResult r = hs::RunBench(config, bench_options.memory_every_s, std::cout);
      if (bench_scenario >= 0) {
        const hs::Fleet fleet(config.shape);
        for (const auto& f : config.faults) {
          std::cout << "  fault: " << hs::DescribeFault(fleet, f) << "\n";
        }
        const hs::Scorecard card = hs::ScoreRun(fleet, config.faults, r.windows, r.incidents,
                                                config.analysis.window.count(), r.limit_windows);
        hs::PrintScorecard(std::cout, card, "scorecard");
      }
      return 0;
    }
    if (*calibrate_cmd) {
      hs::RawCounts sum{};
      for (const std::string& file : calibrate_files) {
        std::ifstream in(file);
        if (!in) throw std::runtime_error("cannot read " + file);
        const auto doc = nlohmann::json::parse(in);
        const hs::RawCounts counts =
            hs::RawCountsFromJson(doc.at("hostmesh").at("raw_calibration"));
        for (std::size_t c = 0; c < sum.size(); ++c) sum[c] += counts[c];
      }
      hs::PrintRawCalibration(std::cout, sum);
      std::cout << "fitted (analyzer YAML, under thresholds:):\n";
      hs::PrintCalibrationYaml(std::cout, hs::FitCalibration(sum), 2);
      return 0;
    }
    if (*suite) {
      for (const std::string& name : kinds) {
        hs::FaultKind kind{};
        if (!hs::FaultKindFromName(name, &kind)) {
          throw std::runtime_error("--kinds: unknown fault kind '" + name + "'");
        }
        suite_options.kinds.push_back(kind);
      }
      suite_options.duration_ns = static_cast<std::int64_t>(minutes * 60e9);
      suite_options.threads = threads;
      const auto scenarios = hs::BuildSuite(suite_options);
      if (!write_dir.empty()) return WriteScenarios(scenarios, write_dir, only);
      const hs::Fleet fleet(suite_options.shape);
      hs::Scorecard total;
      hs::DiagnosisScore diagnosis;
      nlohmann::json outcomes = nlohmann::json::array();
      std::vector<hs::Counts> ours_each, paper_each;  // per scenario, for the intervals
      double wall = 0;
      for (const hs::Scenario& s : scenarios) {
        if (!only.empty() && s.name != only) continue;
        const hs::ScenarioOutcome outcome = RunScenario(s, "", windows, explain);
        total.ours += outcome.card.ours;
        total.paper += outcome.card.paper;
        ours_each.push_back(outcome.card.ours.counts());
        paper_each.push_back(outcome.card.paper.counts());
        hs::ScoreDiagnosis(fleet, s.config.faults, outcome.result.incidents,
                           s.config.analysis.window.count(), diagnosis);
        wall += outcome.result.wall_seconds;
        std::cout << s.name << " (" << outcome.result.wall_seconds << " s):";
        for (const auto& f : outcome.faults) std::cout << " [" << f << "]";
        // Flushed: a suite at 10,000 hosts takes minutes a scenario, and its
        // output is usually a file, which would hold the lines to the end.
        std::cout << "  F1 " << outcome.card.ours.f1() << " vs " << outcome.card.paper.f1()
                  << std::endl;
        outcomes.push_back(hs::OutcomeJson(fleet, s, outcome));
      }
      const std::string title =
          "scorecard: " + std::to_string(scenarios.size()) + " scenarios, " +
          hostmesh::topology::DescribeShape(suite_options.shape) + ", " + FormatMinutes(minutes) +
          " min each, seed " + std::to_string(suite_options.seed) +
          (suite_options.every_kind ? ", every kind" : "") + " (" + std::to_string(wall) + " s)";
      hs::PrintScorecard(std::cout, total, title);
      const hs::ScoreIntervals ours_ci = hs::BootstrapIntervals(ours_each);
      const hs::ScoreIntervals paper_ci = hs::BootstrapIntervals(paper_each);
      hs::PrintIntervals(std::cout, ours_ci, paper_ci);
      hs::PrintDiagnosisScore(std::cout, diagnosis);
      if (calibrate) {
        std::cout << "fitted (analyzer YAML, under thresholds:):\n";
        hs::PrintCalibrationYaml(std::cout, hs::FitCalibration(total.ours.raw_counts), 2);
      }
      WriteJson(
          json_path,
          {{"hostmesh", hs::ScoreJson(total.ours)},
           {"paper", hs::ScoreJson(total.paper)},
           {"intervals",
            {{"hostmesh", hs::IntervalsJson(ours_ci)}, {"paper", hs::IntervalsJson(paper_ci)}}},
           {"diagnosis", hs::DiagnosisScoreJson(diagnosis)},
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
