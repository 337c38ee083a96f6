// Fitting the analyzer's confidence maps from the scorecard's raw counts
// (sim/calibration_report.h): what `hostmesh-sim calibrate` prints is what the
// analyzer reads back.

#include "sim/calibration_report.h"

#include <gtest/gtest.h>

#include <sstream>

#include "analyzer/config/analyzer_config.h"

namespace hostmesh::sim {
namespace {

RawCounts Example() {
  RawCounts c{};
  for (int i = 0; i < 10; ++i) c[0].Add(0.05, i < 2);   // loss, low raw: 2 of 10 right
  for (int i = 0; i < 40; ++i) c[0].Add(0.95, i < 38);  // loss, high raw: 38 of 40
  for (int i = 0; i < 5; ++i) c[1].Add(0.9, true);      // latency
  return c;
}

TEST(CalibrationReport, PrintedMapsReadBackAsTheAnalyzersConfig) {
  const analysis::ConfidenceCalibration fitted = FitCalibration(Example());
  EXPECT_EQ(fitted.loss.points().size(), 2u);
  EXPECT_LT(fitted.loss.Apply(0.0), 0.3);
  EXPECT_GT(fitted.loss.Apply(1.0), 0.9);
  EXPECT_TRUE(fitted.processing.identity());  // no host verdicts counted

  std::ostringstream yaml;
  yaml << "thresholds:\n";
  PrintCalibrationYaml(yaml, fitted, 2);
  const analyzer::AnalyzerConfig cfg = analyzer::ParseAnalyzerConfig(yaml.str(), "fitted.yaml");
  EXPECT_EQ(cfg.analysis.confidence.loss, fitted.loss) << yaml.str();
  EXPECT_EQ(cfg.analysis.confidence.latency, fitted.latency) << yaml.str();
  // Nothing to fit processing from: the default stays.
  EXPECT_EQ(cfg.analysis.confidence.processing,
            analysis::DefaultConfidenceCalibration().processing);
}

TEST(CalibrationReport, RawCountsSurviveTheSuiteJson) {
  const RawCounts counts = Example();
  const RawCounts back = RawCountsFromJson(RawCountsJson(counts));
  for (std::size_t c = 0; c < counts.size(); ++c) {
    EXPECT_EQ(back[c].named, counts[c].named);
    EXPECT_EQ(back[c].right, counts[c].right);
  }
  nlohmann::json bad = RawCountsJson(counts);
  bad["loss"]["named"] = {1, 2};
  EXPECT_THROW(RawCountsFromJson(bad), std::exception);
}

}  // namespace
}  // namespace hostmesh::sim
