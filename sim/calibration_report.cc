#include "sim/calibration_report.h"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace hostmesh::sim {
namespace {

constexpr std::array<const char*, 3> kCategoryNames = {"loss", "latency", "host"};
// The analyzer's YAML keys of the three maps, in Category order.
constexpr std::array<const char*, 3> kYamlKeys = {"loss", "latency", "processing"};

}  // namespace

analysis::ConfidenceCalibration FitCalibration(const RawCounts& counts) {
  analysis::ConfidenceCalibration c;
  c.loss = analysis::ConfidenceMap::Fit(counts[0]);
  c.latency = analysis::ConfidenceMap::Fit(counts[1]);
  c.processing = analysis::ConfidenceMap::Fit(counts[2]);
  return c;
}

void PrintCalibrationYaml(std::ostream& out, const analysis::ConfidenceCalibration& c, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  out << pad << "confidence:\n";
  const std::array<const analysis::ConfidenceMap*, 3> maps = {&c.loss, &c.latency, &c.processing};
  for (std::size_t i = 0; i < maps.size(); ++i) {
    const auto& points = maps[i]->points();
    if (points.empty()) {
      // No verdicts of this kind to fit from: leave the analyzer's default.
      out << pad << "  # " << kYamlKeys[i] << ": no verdicts to fit from; the default stays\n";
      continue;
    }
    out << pad << "  " << kYamlKeys[i] << ":\n";
    for (const auto& pt : points) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "    - {raw: %.3g, p: %.3g}\n", pt.raw, pt.p);
      out << pad << buf;
    }
  }
}

void PrintRawCalibration(std::ostream& out, const RawCounts& counts) {
  out << "  by raw score (verdicts right / named; `hostmesh-sim calibrate` fits from these):\n";
  for (std::size_t c = 0; c < counts.size(); ++c) {
    if (counts[c].total() == 0) continue;
    out << "    " << kCategoryNames[c] << ":";
    for (std::size_t i = 0; i < analysis::kCalibrationBins; ++i) {
      if (counts[c].named[i] == 0) continue;
      char buf[64];
      std::snprintf(buf, sizeof buf, " %.1f: %llu/%llu", static_cast<double>(i) / 10.0,
                    static_cast<unsigned long long>(counts[c].right[i]),
                    static_cast<unsigned long long>(counts[c].named[i]));
      out << buf;
    }
    out << "\n";
  }
}

nlohmann::json RawCountsJson(const RawCounts& counts) {
  nlohmann::json doc = nlohmann::json::object();
  for (std::size_t c = 0; c < counts.size(); ++c) {
    doc[kCategoryNames[c]] = {{"named", counts[c].named}, {"right", counts[c].right}};
  }
  return doc;
}

RawCounts RawCountsFromJson(const nlohmann::json& doc) {
  RawCounts counts{};
  for (std::size_t c = 0; c < counts.size(); ++c) {
    if (!doc.contains(kCategoryNames[c])) continue;
    const auto& cat = doc.at(kCategoryNames[c]);
    const auto named = cat.at("named").get<std::vector<std::uint64_t>>();
    const auto right = cat.at("right").get<std::vector<std::uint64_t>>();
    if (named.size() != analysis::kCalibrationBins || right.size() != analysis::kCalibrationBins) {
      throw std::runtime_error(std::string("raw_calibration.") + kCategoryNames[c] + ": expected " +
                               std::to_string(analysis::kCalibrationBins) + " bins");
    }
    for (std::size_t i = 0; i < analysis::kCalibrationBins; ++i) {
      counts[c].named[i] = named[i];
      counts[c].right[i] = right[i];
    }
  }
  return counts;
}

}  // namespace hostmesh::sim
