// hostmeshctl incident's text from fixture JSON (pure): groups with their
// onset, verdicts with rivals, moved counters, and what it says without
// evidence or given something else.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ctl/incident_view.h"

namespace hostmesh::ctl {
namespace {

using ::testing::HasSubstr;

JsonNode Parse(const std::string& text) {
  std::string error;
  auto j = ParseJson(text, &error);
  EXPECT_TRUE(j.has_value()) << error;
  return j ? *j : JsonNode();
}

std::string LineWith(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  if (at == std::string::npos) return "";
  const auto start = text.rfind('\n', at) + 1;
  return text.substr(start, text.find('\n', at) - start);
}

const char* kIncident =
    R"({"id":7,"kind":"link_loss","summary":"link s1-p0r2","open":true,"confidence":0.99,)"
    R"("first_seen_ns":1704067220000000000,"last_seen_ns":1704067260000000000,)"
    R"("diagnosis":{"type":"corruption","evidence":"FCS errors rose"}})";

// Suspect link: 2 answered probes (at 10 s and 19 s) then 2 timeouts (at 21 s
// and 30 s); a sibling with one answered probe.
const char* kEvidence =
    R"({"version":1,"capture":{"from_ns":1704067100000000000,"to_ns":1704067280000000000,)"
    R"("probes_kept":5,"probes_thinned":0,"thinned_every":1,"tuples_capped":false},)"
    R"("groups":[{"role":"suspect","kind":"link","name":"s1-p0r2"},)"
    R"({"role":"sibling","kind":"link","name":"s2-p0r2"}],)"
    R"("tuples":[{"group":0},{"group":1}],)"
    R"("probes":{"columns":["tuple","send_time_ns","timeout","network_ns","processing_ns"],)"
    R"("rows":[[0,1704067210000000000,false,5000,20000],[0,1704067219000000000,false,5000,20000],)"
    R"([0,1704067221000000000,true,0,0],[0,1704067230000000000,true,0,0],)"
    R"([1,1704067225000000000,false,5000,20000]]},)"
    R"("verdicts":[{"start_ns":1704067220000000000,"loss":0.05,"failures":40,"good":760,)"
    R"("confidence":0.99,"rivals":[{"name":"s1-p0r3","loss":0.001}]}],)"
    R"("counters":[{"agent_id":"h1","nic":2,"deltas":{"rx_fcs_errors":12,"symbol_error":0}},)"
    R"({"agent_id":"h1","nic":2,"deltas":{"rx_fcs_errors":3}}],)"
    R"("flight_records":[{"agent_id":"h1","dropped_before":0,"events":[)"
    R"({"time_ns":1704067221000000000,"kind":"probe"},)"
    R"({"time_ns":1704067222000000000,"kind":"log","text":"[verbs] nic2: port down"}]}]})";

TEST(IncidentView, GroupsShowWhenTheSuspectBeganToFailBesideItsSiblings) {
  const JsonNode incident = Parse(kIncident);
  const JsonNode evidence = Parse(kEvidence);
  const OncallView v = RenderIncident(incident, &evidence);
  EXPECT_EQ(v.exit_code, kOncallAnomalous) << "open";
  EXPECT_THAT(v.text, HasSubstr("incident 7  link_loss  link s1-p0r2  OPEN"));
  EXPECT_THAT(v.text, HasSubstr("diagnosis: corruption: FCS errors rose"));
  const std::string suspect = LineWith(v.text, "suspect");
  EXPECT_THAT(suspect, HasSubstr("link s1-p0r2"));
  EXPECT_THAT(suspect, HasSubstr("50.00%"));
  EXPECT_THAT(suspect, HasSubstr("2024-01-01 00:00:19Z"));  // the last answered
  EXPECT_THAT(suspect, HasSubstr("2024-01-01 00:00:21Z"));  // the first timeout
  EXPECT_THAT(LineWith(v.text, "sibling"), HasSubstr("0.00%"));
  EXPECT_THAT(LineWith(v.text, "s1-p0r3 0.10%"), HasSubstr("2024-01-01 00:00:20Z"));
  EXPECT_THAT(v.text, HasSubstr("h1 nic 2: rx_fcs_errors +15\n"));
  EXPECT_THAT(v.text, ::testing::Not(HasSubstr("symbol_error")));
  EXPECT_THAT(v.text, HasSubstr("  h1: 2 events\n"));
  EXPECT_THAT(v.text, HasSubstr("2024-01-01 00:00:22Z [verbs] nic2: port down"));
}

TEST(IncidentView, WithoutEvidenceItSaysSoAndAResolvedOneExitsZero) {
  JsonNode incident = Parse(kIncident);
  incident["open"] = false;
  const OncallView v = RenderIncident(incident, nullptr);
  EXPECT_EQ(v.exit_code, kOncallHealthy);
  EXPECT_THAT(v.text, HasSubstr("resolved"));
  EXPECT_THAT(v.text, HasSubstr("evidence: none kept"));
}

TEST(IncidentView, SomethingElseIsABadResponse) {
  EXPECT_EQ(RenderIncident(Parse(R"({"open":[]})"), nullptr).exit_code, kOncallBadResponse);
  const JsonNode not_evidence = Parse(R"({"rows":[]})");
  EXPECT_EQ(RenderIncident(Parse(kIncident), &not_evidence).exit_code, kOncallBadResponse);
}

}  // namespace
}  // namespace hostmesh::ctl
