// The analyzer killed between two windows and started again on the same data
// dir, in virtual time: the incident it had opened is still open under its id
// and goes on being updated, the host keeps its id, the window already judged
// is not judged again, and the results it had acknowledged for the window
// still open are judged in that window after the restart.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "analyzer/main/analyzer_app.h"
#include "tests/analyzer/main/app_test_support.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"
#include "tests/common/http/http_test_client.h"

namespace hostmesh::analyzer::app {
namespace {

using namespace std::chrono_literals;
using testing::Batch;
using testing::kBadNic;
using testing::kNics;

constexpr int kPerPair = 5;
constexpr std::uint64_t kResultsPerBatch = kNics * (kNics - 1) * kPerPair;

class AnalyzerRestartTest : public ::testing::Test {
 protected:
  AnalyzerRestartTest() {
    config_.grpc_listen = {"127.0.0.1", 0};
    config_.grpc_insecure = true;  // ingest's TLS is tls_ingest_test's
    config_.http_listen = {"127.0.0.1", 0};
    config_.data_dir = dir_.path() / "data";
    config_.analysis.window = 2s;
    config_.analysis.grace = 1s;
    clock_.Advance(1s);  // the wall clock starts on a window boundary: be inside window 0
  }

  std::unique_ptr<AnalyzerApp> StartApp() {
    // Each process has its own registry, as each app registers its series once.
    registries_.push_back(std::make_unique<metrics::Registry>());
    auto app =
        std::make_unique<AnalyzerApp>(config_, AnalyzerAppOptions{}, clock_, *registries_.back());
    std::string error;
    EXPECT_TRUE(app->Start(&error)) << error;
    return app;
  }

  void Upload(const AnalyzerApp& app, std::uint64_t seq) {
    auto stub = v1::AgentIngest::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(app.grpc_port()), grpc::InsecureChannelCredentials()));
    v1::HelloReply reply;
    grpc::ClientContext context;
    ASSERT_TRUE(stub->Hello(&context, analyzer::testing::MakeHello("h1", 7, kNics), &reply).ok());
    ASSERT_EQ(testing::UploadOne(*stub, Batch(seq, clock_.RealtimeNow(), kPerPair)),
              v1::UploadAck::STATUS_ACCEPTED);
  }

  analyzer::testing::TempDir dir_;
  AnalyzerConfig config_;
  VirtualClock clock_;
  std::vector<std::unique_ptr<metrics::Registry>> registries_;  // outlive the apps
};

TEST_F(AnalyzerRestartTest, StateSurvivesAKillBetweenWindows) {
  const std::int64_t window0 = VirtualClock::kDefaultWallStart.time_since_epoch().count();
  std::uint64_t incident_id = 0;
  {
    auto app = StartApp();
    Upload(*app, 1);  // window 0
    clock_.Advance(2500ms);
    app->Tick();  // judges window 0
    const auto snap = app->snapshots().Get();
    ASSERT_TRUE(snap->report);
    ASSERT_EQ(snap->report->start_ns, window0);
    ASSERT_EQ(snap->incidents.size(), 1u);
    incident_id = snap->incidents.front().id;
    EXPECT_EQ(snap->incidents.front().kind, analysis::IncidentKind::kRnicDown);

    Upload(*app, 2);  // window 1, acknowledged, not yet judged
    // Killed here: nothing more is judged or stored by this process. (Shutdown
    // only stops the servers; what was acknowledged is already durable.)
    app->Shutdown();
  }

  auto app = StartApp();
  auto snap = app->snapshots().Get();
  ASSERT_EQ(snap->hosts().size(), 1u);
  EXPECT_EQ(snap->hosts().front().agent_id, "h1");
  ASSERT_EQ(snap->incidents.size(), 1u);
  EXPECT_EQ(snap->incidents.front().id, incident_id);
  EXPECT_TRUE(snap->incidents.front().open);

  clock_.Advance(2s);
  app->Tick();
  snap = app->snapshots().Get();
  ASSERT_TRUE(snap->report);
  EXPECT_EQ(snap->report->start_ns, window0 + 2'000'000'000);  // window 0 not judged again
  EXPECT_EQ(snap->stats.windows_judged, 1u);
  EXPECT_EQ(snap->report->results, kResultsPerBatch);  // the replayed, acknowledged batch
  ASSERT_EQ(snap->incidents.size(), 1u);               // the same fault, the same incident
  EXPECT_EQ(snap->incidents.front().id, incident_id);
  EXPECT_EQ(snap->incidents.front().evidence.windows, 2);
  ASSERT_EQ(snap->report->rnics.size(), kNics);
  for (const auto& rnic : snap->report->rnics) EXPECT_EQ(rnic.anomalous, rnic.nic == kBadNic);

  // Both windows' summaries are served from the store, the one judged before
  // the restart included.
  const auto port = static_cast<std::uint16_t>(app->http_port());
  const auto history = http::testing::Fetch(port, "GET", "/api/v1/sla/history?from=0");
  ASSERT_TRUE(history.has_value());
  EXPECT_EQ(history->status, 200);
  EXPECT_NE(history->body.find(R"("count":2,"truncated":false)"), std::string::npos)
      << history->body;
  EXPECT_NE(history->body.find(R"("start_ns":)" + std::to_string(window0) + ","),
            std::string::npos);
  EXPECT_NE(history->body.find(R"("anomalous_rnics":[{"agent_id":"h1","nic":2,)"),
            std::string::npos);
  const auto limited = http::testing::Fetch(port, "GET", "/api/v1/sla/history?from=0&limit=1");
  ASSERT_TRUE(limited.has_value());
  EXPECT_NE(limited->body.find(R"("count":1,"truncated":true)"), std::string::npos);
  const auto bad = http::testing::Fetch(port, "GET", "/api/v1/sla/history?limit=zero");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("limit must be an integer"), std::string::npos) << bad->body;
  app->Shutdown();
}

}  // namespace
}  // namespace hostmesh::analyzer::app
