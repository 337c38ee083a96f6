#pragma once

// Fitting the analyzer's confidence maps (analyzer/analysis/confidence_calibration.h)
// from the suite's verdicts by raw score, and printing them as the analyzer's
// YAML (`thresholds.confidence`), to paste into its config or its defaults.

#include <array>
#include <nlohmann/json.hpp>
#include <ostream>

#include "analyzer/analysis/confidence_calibration.h"
#include "sim/scorecard.h"

namespace hostmesh::sim {

using RawCounts = std::array<analysis::CalibrationCounts, 3>;  // by Category

// One map per category: loss, latency, processing (host).
analysis::ConfidenceCalibration FitCalibration(const RawCounts& counts);

// The `confidence:` map of the analyzer's `thresholds:`, indented by `indent`.
// A kind with no verdicts (an identity map) is left out, so its default stays.
void PrintCalibrationYaml(std::ostream& out, const analysis::ConfidenceCalibration& c, int indent);

// Verdicts right / named per raw bin and category, for the scorecard.
void PrintRawCalibration(std::ostream& out, const RawCounts& counts);

// {"loss": {"named": [...], "right": [...]}, "latency": ..., "host": ...}
nlohmann::json RawCountsJson(const RawCounts& counts);
// From a suite's JSON (`hostmesh.raw_calibration`); throws on a malformed document.
RawCounts RawCountsFromJson(const nlohmann::json& doc);

}  // namespace hostmesh::sim
