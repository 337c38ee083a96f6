#pragma once

// The scorecard as a table (stdout) and as JSON (nlohmann::json), with each
// scenario's ground truth next to what both methods concluded, window by window.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sim/bootstrap.h"
#include "sim/scenario.h"
#include "sim/scorecard.h"

namespace hostmesh::sim {

struct ScenarioOutcome {
  std::string name;
  std::vector<std::string> faults;  // DescribeFault
  Scorecard card;
  SimResult result;
};

void PrintScorecard(std::ostream& out, const Scorecard& card, const std::string& title);
// A suite's 95% intervals of precision, recall and F1 (bootstrap.h).
void PrintIntervals(std::ostream& out, const ScoreIntervals& ours, const ScoreIntervals& paper);
nlohmann::json IntervalsJson(const ScoreIntervals& s);
// One line per window: truth, ours, paper (for `run --windows`).
void PrintWindows(std::ostream& out, const Fleet& fleet, const std::vector<Fault>& faults,
                  const SimResult& result);

nlohmann::json ScoreJson(const MethodScore& s);
nlohmann::json OutcomeJson(const Fleet& fleet, const Scenario& scenario,
                           const ScenarioOutcome& outcome);

}  // namespace hostmesh::sim
