// Metrics declared as tables: each row becomes its family, reads the state
// handed to it at scrape time, and says what it shows before there is one.
#include "common/metrics/metric_table.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/metrics/exposition.h"

namespace hostmesh::metrics {
namespace {

struct State {
  double answers = 0;
  std::vector<std::pair<std::string, double>> by_kind;
};

constexpr ValueRow<State> kValues[] = {
    {MetricType::kCounter, "hm_test_answers_total", "Answers.",
     [](const State& s) { return s.answers; }},
    {MetricType::kGauge, "hm_test_kinds", "Kinds known.",
     [](const State& s) { return static_cast<double>(s.by_kind.size()); }},
};

const FamilyRow<State> kFamilies[] = {
    {MetricType::kGauge,
     "hm_test_by_kind",
     "Values by kind; none before the first state.",
     {"kind"},
     [](const State* s) {
       std::vector<ScrapedValue> out;
       if (s == nullptr) return out;
       for (const auto& [kind, v] : s->by_kind) out.push_back({{kind}, v});
       return out;
     }},
    {MetricType::kCounter,
     "hm_test_seen_total",
     "Zero before the first state, then 1.",
     {"what"},
     [](const State* s) {
       return std::vector<ScrapedValue>{{{"state"}, s ? 1.0 : 0.0}};
     }},
};

TEST(MetricTable, RowsReadTheLatestStateAndSayWhatTheyShowBeforeOne) {
  Registry registry;
  std::shared_ptr<const State> latest;
  const auto get = [&latest] { return latest; };
  AddValueRows<State>(registry, kValues, get);
  AddFamilyRows<State>(registry, kFamilies, get);

  std::string text = RenderText(registry);
  EXPECT_NE(text.find("hm_test_answers_total 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("hm_test_kinds 0\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("hm_test_by_kind{"), std::string::npos) << text;
  EXPECT_NE(text.find("hm_test_seen_total{what=\"state\"} 0\n"), std::string::npos) << text;

  latest = std::make_shared<const State>(State{42, {{"a", 1.5}, {"b", 2}}});
  text = RenderText(registry);
  EXPECT_NE(text.find("# TYPE hm_test_answers_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE hm_test_kinds gauge"), std::string::npos) << text;
  EXPECT_NE(text.find("hm_test_answers_total 42\n"), std::string::npos) << text;
  EXPECT_NE(text.find("hm_test_kinds 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("hm_test_by_kind{kind=\"a\"} 1.5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("hm_test_by_kind{kind=\"b\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("hm_test_seen_total{what=\"state\"} 1\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace hostmesh::metrics
