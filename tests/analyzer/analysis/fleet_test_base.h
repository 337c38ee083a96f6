#pragma once

#include <gtest/gtest.h>

#include <algorithm>

#include "analyzer/analysis/analysis.h"
#include "tests/analyzer/analysis/synthetic_fleet.h"

namespace hostmesh::analysis::testing {

// 8 hosts x 4 rails x 4 spines, all 5-tuples traced unless a test says otherwise.
class FleetTest : public ::testing::Test {
 public:
  static constexpr std::int64_t kSecond = 1'000'000'000;
  static constexpr std::int64_t kT0 = 1'704'067'200 * kSecond;  // a window boundary

 protected:
  FleetTest() : fleet_(FleetShape{}), analysis_(AnalysisConfig{}, fleet_.Map()) {
    fleet_.TracePaths(analysis_, kT0);
  }

  // Probes window `index` (0-based from kT0) and judges it.
  WindowReport RunWindow(int index, const Faults& faults) {
    const std::int64_t start = kT0 + index * 20 * kSecond;
    fleet_.ProbeInto(analysis_, start, faults);
    auto reports = analysis_.Advance(start + 30 * kSecond);
    EXPECT_EQ(reports.size(), 1u);
    return reports.empty() ? WindowReport{} : reports.back();
  }

  static const RnicStatus* Rnic(const WindowReport& r, HostId h, NicId n) {
    for (const auto& s : r.rnics) {
      if (s.host == h && s.nic == n) return &s;
    }
    return nullptr;
  }
  static int AnomalousRnics(const WindowReport& r) {
    return static_cast<int>(std::count_if(r.rnics.begin(), r.rnics.end(),
                                          [](const RnicStatus& s) { return s.anomalous; }));
  }
  static std::vector<LinkId> BlamedLinks(const Localization& loc) {
    std::vector<LinkId> out;
    for (const auto& c : loc.culprits) {
      if (c.component.kind == Component::Kind::kLink) out.push_back(c.component.link);
    }
    return out;
  }

  SyntheticFleet fleet_;
  Analysis analysis_;
};

}  // namespace hostmesh::analysis::testing
