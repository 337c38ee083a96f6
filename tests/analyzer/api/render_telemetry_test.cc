// /api/v1/telemetry through the router with a fake source: the query the
// handler builds from the parameters, the JSON of a row, and its errors.
#include "analyzer/api/render_telemetry.h"

#include <gtest/gtest.h>

#include "analyzer/api/api_handlers.h"
#include "tests/analyzer/telemetry/telemetry_sample.h"

namespace hostmesh::analyzer::api {
namespace {

using telemetry::testing::Sample;

constexpr std::int64_t kS = 1'000'000'000;

TelemetryAnswer OneRow() {
  telemetry::NicTelemetryRow row{"h003", "nic1", {}};
  v1::NicTelemetry t = Sample(1, 100 * kS, 110 * kS,
                              {{v1::NIC_COUNTER_SYMBOL_ERROR, 4210},
                               {v1::NIC_COUNTER_RX_FCS_ERRORS, 3980},
                               {v1::NIC_COUNTER_TX_PAUSE, 500, 3}});
  t.mutable_pcie()->set_current_width(8);
  t.mutable_pcie()->set_max_width(16);
  t.mutable_pcie()->set_current_speed_mts(16000);
  t.mutable_pcie()->set_max_speed_mts(16000);
  row.totals.Add(t);
  TelemetryAnswer answer;
  answer.rows.push_back(row);
  return answer;
}

TEST(ApiTelemetry, RendersCountersPausePerPriorityStateAndPcie) {
  TelemetryQuery query;
  query.from_ns = 100 * kS;
  query.to_ns = 120 * kS;
  EXPECT_EQ(RenderTelemetry(query, OneRow()),
            R"({"from_ns":100000000000,"to_ns":120000000000,"count":1,"truncated":false,)"
            R"("nics":[{"agent_id":"h003","nic":"nic1","samples":1,"start_ns":100000000000,)"
            R"("end_ns":110000000000,"counters":{"symbol_error":4210,"rx_fcs_errors":3980},)"
            R"("pfc_pause_received":{},"pfc_pause_sent":{"3":500},"port_state":4,)"
            R"("phys_state":5,"carrier":"up","pcie":{"current_width":8,"max_width":16,)"
            R"("current_speed_gts":16,"max_speed_gts":16,"downgraded":true},)"
            R"("read_failures":0,"counter_resets":0}]})");
}

TEST(ApiTelemetry, ParametersBecomeTheQueryWithDefaultsAndErrorsAre400) {
  VirtualClock clock;
  TelemetryQuery seen;
  TelemetryAnswer answer = OneRow();
  http::Router router;
  MountApi(
      router, [] { return std::shared_ptr<const ApiSnapshot>(); }, clock, {},
      [&](const TelemetryQuery& q) {
        seen = q;
        return answer;
      });
  const std::int64_t now_s = clock.RealtimeNow().time_since_epoch().count() / kS;

  http::Response r = router.Dispatch({"GET", "/api/v1/telemetry", ""});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(seen.to_ns, now_s * kS);
  EXPECT_EQ(seen.from_ns, (now_s - 300) * kS);  // the last 5 minutes
  EXPECT_EQ(seen.limit, 1000U);
  EXPECT_NE(r.body.find(R"("symbol_error":4210)"), std::string::npos) << r.body;

  r = router.Dispatch({"GET", "/api/v1/telemetry", "from=100&to=200&agent=h003&nic=nic1&limit=5"});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(seen.from_ns, 100 * kS);
  EXPECT_EQ(seen.to_ns, 200 * kS);
  EXPECT_EQ(seen.agent_id, "h003");
  EXPECT_EQ(seen.nic, "nic1");
  EXPECT_EQ(seen.limit, 5U);

  r = router.Dispatch({"GET", "/api/v1/telemetry", "from=300&to=200"});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("from must not be after to"), std::string::npos);
  r = router.Dispatch({"GET", "/api/v1/telemetry", "limit=0"});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("limit must be an integer in [1, 100000], got '0'"), std::string::npos)
      << r.body;

  answer.error = "IO error: disk gone";
  r = router.Dispatch({"GET", "/api/v1/telemetry", ""});
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(r.body.find("store: IO error: disk gone"), std::string::npos);
}

TEST(ApiTelemetry, NotMountedWithoutASource) {
  VirtualClock clock;
  http::Router router;
  MountApi(
      router, [] { return std::shared_ptr<const ApiSnapshot>(); }, clock);
  EXPECT_EQ(router.Dispatch({"GET", "/api/v1/telemetry", ""}).status, 404);
}

}  // namespace
}  // namespace hostmesh::analyzer::api
