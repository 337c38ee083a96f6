// The analyzer app in-process on 127.0.0.1:0 with a temp data dir and a 2 s
// window: a test gRPC client says Hello and uploads results in which every
// probe to or from one NIC times out, until /api/v1/rnics reports that RNIC
// down (polled against a deadline, no fixed sleeps), its counter deltas beside
// the verdict. Then /metrics must pass promtool, and a stop request shuts
// everything down.
#include "analyzer/main/analyzer_app.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "hostmesh/v1/ingest.grpc.pb.h"
#include "tests/analyzer/main/app_test_support.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"
#include "tests/common/http/http_test_client.h"

#ifndef HOSTMESH_PROMTOOL_PATH
#define HOSTMESH_PROMTOOL_PATH ""
#endif

namespace hostmesh::analyzer::app {
namespace {

using namespace std::chrono_literals;
using testing::Batch;
using testing::kBadNic;
using testing::kNics;
using testing::RnicObject;

std::string RunPromtool(const std::string& text, int* status) {
  std::string path = ::testing::TempDir() + "hm_analyzer_metrics_XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    *status = -1;
    return "cannot write temp file";
  }
  ::close(fd);
  const std::string command =
      std::string("'") + HOSTMESH_PROMTOOL_PATH + "' check metrics < '" + path + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string output;
  char buf[4096];
  std::size_t n;
  while (pipe != nullptr && (n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  *status = pipe != nullptr ? ::pclose(pipe) : -1;
  ::unlink(path.c_str());
  return output;
}

TEST(AnalyzerApp, OneNicTimingOutIsReportedDownAndMetricsPassPromtool) {
  analyzer::testing::TempDir dir;
  AnalyzerConfig config;
  config.grpc_listen = {"127.0.0.1", 0};
  config.grpc_insecure = true;  // ingest's TLS is tls_ingest_test's
  config.http_listen = {"127.0.0.1", 0};
  config.data_dir = dir.path() / "data";
  config.analysis.window = 2s;
  config.analysis.grace = 1s;
  SystemClock clock;
  metrics::Registry registry;
  AnalyzerAppOptions options;
  options.version = "test";
  options.tick = 100ms;  // judge promptly; the 1 s default would only slow the test
  AnalyzerApp app(config, options, clock, registry);
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  const int stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ASSERT_GE(stop_fd, 0);
  std::thread loop([&] { app.Run(stop_fd); });

  auto stub = v1::AgentIngest::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(app.grpc_port()), grpc::InsecureChannelCredentials()));
  {
    v1::HelloReply reply;
    grpc::ClientContext context;
    ASSERT_TRUE(stub->Hello(&context, analyzer::testing::MakeHello("h1", 7, kNics), &reply).ok());
  }
  const auto http_port = static_cast<std::uint16_t>(app.http_port());
  grpc::ClientContext context;
  auto stream = stub->Upload(&context);
  // Upload as an agent would, a batch per poll, until the verdict shows.
  std::string rnics;
  bool down = false;
  bool diagnosed = false;
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  // Until the incident's diagnosis has read a window that holds the NIC's
  // counters too: a batch can fall into the window after its results'.
  for (std::uint64_t seq = 1; !(down && diagnosed) && std::chrono::steady_clock::now() < deadline;
       ++seq) {
    // The bad NIC's counters, as its agent samples them: port up, nothing moved.
    v1::UploadBatch batch = Batch(seq, clock.RealtimeNow(), 2);
    v1::NicTelemetry* t = batch.add_telemetry();
    t->set_nic(kBadNic);
    t->set_end_ns(clock.RealtimeNow().time_since_epoch().count());
    t->set_start_ns(t->end_ns() - 100'000'000);
    t->add_deltas()->set_counter(v1::NIC_COUNTER_SYMBOL_ERROR);
    t->add_deltas()->set_counter(v1::NIC_COUNTER_LINK_DOWNED);
    t->set_port_state(4);
    t->set_carrier(v1::CARRIER_UP);
    ASSERT_TRUE(stream->Write(batch));
    v1::UploadAck ack;
    ASSERT_TRUE(stream->Read(&ack));
    ASSERT_EQ(ack.status(), v1::UploadAck::STATUS_ACCEPTED) << ack.error();
    const auto reply = http::testing::Fetch(http_port, "GET", "/api/v1/rnics");
    ASSERT_TRUE(reply.has_value());
    rnics = reply->body;
    down = RnicObject(rnics, kBadNic).find(R"("state":"down")") != std::string::npos;
    if (down) {
      const auto open = http::testing::Fetch(http_port, "GET", "/api/v1/incidents");
      diagnosed =
          open.has_value() && open->body.find(R"("type":"unreachable_rnic")") != std::string::npos;
    }
    if (!(down && diagnosed)) std::this_thread::sleep_for(100ms);  // polling interval
  }
  ASSERT_TRUE(down) << rnics;
  // Only the bad NIC is blamed; its peers lose only what it explains.
  for (std::uint32_t nic = 0; nic < kNics; ++nic) {
    if (nic == kBadNic) continue;
    EXPECT_NE(RnicObject(rnics, nic).find(R"("state":"ok")"), std::string::npos) << rnics;
  }
  EXPECT_NE(RnicObject(rnics, kBadNic).find(R"("nic_name":"nic2")"), std::string::npos);
  // Beside its verdict, its counter deltas over the window from the stored
  // samples (nothing moved, port up); its peers sent none.
  EXPECT_NE(rnics.find(R"("telemetry":"window")"), std::string::npos) << rnics;
  EXPECT_NE(RnicObject(rnics, kBadNic).find(R"("counters":{"link_downed":0,"symbol_error":0)"),
            std::string::npos)
      << rnics;
  EXPECT_NE(RnicObject(rnics, 0).find(R"("telemetry":null)"), std::string::npos) << rnics;
  stream->WritesDone();

  const auto status = http::testing::Fetch(http_port, "GET", "/api/v1/status");
  ASSERT_TRUE(status.has_value());
  EXPECT_NE(status->body.find(R"("agents_known":1)"), std::string::npos) << status->body;
  const auto incidents = http::testing::Fetch(http_port, "GET", "/api/v1/incidents");
  ASSERT_TRUE(incidents.has_value());
  EXPECT_NE(incidents->body.find(R"("kind":"rnic_down")"), std::string::npos) << incidents->body;
  // Every probe to it failed from the start while its port was up and its
  // counters clean: diagnosed beside the stored telemetry of the window.
  EXPECT_NE(incidents->body.find(R"("diagnosis":{"type":"unreachable_rnic")"), std::string::npos)
      << incidents->body;
  EXPECT_NE(incidents->body.find("likely a missing route or address for the RNIC"),
            std::string::npos);

  // Store open and gRPC listening: ready; the probes need no credentials.
  const auto ready = http::testing::Fetch(http_port, "GET", "/readyz");
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->status, 200) << ready->body;
  const auto live = http::testing::Fetch(http_port, "GET", "/healthz");
  ASSERT_TRUE(live.has_value());
  EXPECT_EQ(live->status, 200);

  const auto metrics = http::testing::Fetch(http_port, "GET", "/metrics");
  ASSERT_TRUE(metrics.has_value());
  // The HTTP server's counters, declared from the start in the analyzer.
  EXPECT_NE(metrics->body.find(
                "hostmesh_http_connections_refused_total{reason=\"max_connections_per_peer\"} 0"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("hostmesh_analyzer_incidents_open{kind=\"rnic_down\"} 1"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(
      metrics->body.find("hostmesh_analyzer_incidents_diagnosed{type=\"unreachable_rnic\"} 1"),
      std::string::npos);
  EXPECT_NE(metrics->body.find("hostmesh_analyzer_incidents_diagnosed{type=\"corruption\"} 0"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("hostmesh_analyzer_cluster_drop_ratio{cause=\"rnic\"}"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("hostmesh_ingest_batches_accepted_total"), std::string::npos);
  // The down RNIC by name, for the dashboards' drill-down.
  EXPECT_NE(
      metrics->body.find("hostmesh_analyzer_anomalous_rnic_loss_ratio{host=\"h1\",nic=\"nic2\","),
      std::string::npos);
  EXPECT_NE(metrics->body.find(",state=\"down\"} "), std::string::npos);
  // The operators' dashboards chart the analyzer's own cost.
  EXPECT_NE(metrics->body.find("hostmesh_analyzer_process_resident_memory_bytes "),
            std::string::npos);
  EXPECT_NE(metrics->body.find("hostmesh_analyzer_process_cpu_seconds_total "), std::string::npos);
  EXPECT_NE(metrics->body.find("hostmesh_analyzer_process_open_fds "), std::string::npos);
  EXPECT_NE(metrics->body.find("hostmesh_analyzer_process_max_fds "), std::string::npos);
  EXPECT_NE(metrics->body.find("hostmesh_ingest_listener_restarts_total 0"), std::string::npos);
  // The store's size and the path table's ageing are exported.
  EXPECT_NE(
      metrics->body.find("hostmesh_analyzer_store_bytes{family=\"raw_results\",kind=\"memtable\"}"),
      std::string::npos);
  EXPECT_NE(metrics->body.find("hostmesh_analyzer_paths_aged_out_total 0"), std::string::npos);
  EXPECT_NE(metrics->body.find("hostmesh_analyzer_path_table_entries"), std::string::npos);
  if (!std::string(HOSTMESH_PROMTOOL_PATH).empty()) {
    int exit_status = 0;
    const std::string out = RunPromtool(metrics->body, &exit_status);
    EXPECT_TRUE(WIFEXITED(exit_status) && WEXITSTATUS(exit_status) == 0) << out << "\n---\n"
                                                                         << metrics->body;
  }

  const std::uint64_t one = 1;
  ASSERT_EQ(::write(stop_fd, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  loop.join();
  ::close(stop_fd);
  EXPECT_EQ(app.http_port(), 0);  // shut down
}

TEST(AnalyzerApp, UploadedNicTelemetryIsServedPerNicWithTheHellosNames) {
  analyzer::testing::TempDir dir;
  AnalyzerConfig config;
  config.grpc_listen = {"127.0.0.1", 0};
  config.grpc_insecure = true;  // ingest's TLS is tls_ingest_test's
  config.http_listen = {"127.0.0.1", 0};
  config.data_dir = dir.path() / "data";
  SystemClock clock;
  metrics::Registry registry;
  AnalyzerApp app(config, AnalyzerAppOptions{}, clock, registry);
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  auto stub = v1::AgentIngest::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(app.grpc_port()), grpc::InsecureChannelCredentials()));
  {
    v1::HelloReply reply;
    grpc::ClientContext context;
    ASSERT_TRUE(stub->Hello(&context, analyzer::testing::MakeHello("h1", 7, kNics), &reply).ok());
  }
  const std::int64_t now = clock.RealtimeNow().time_since_epoch().count();
  v1::UploadBatch batch = Batch(1, clock.RealtimeNow(), 1);
  for (int i = 0; i < 2; ++i) {
    v1::NicTelemetry* t = batch.add_telemetry();
    t->set_nic(1);
    t->set_start_ns(now - (2 - i) * 10'000'000'000);
    t->set_end_ns(now - (1 - i) * 10'000'000'000);
    v1::CounterDelta* d = t->add_deltas();
    d->set_counter(v1::NIC_COUNTER_SYMBOL_ERROR);
    d->set_delta(2000 + static_cast<std::uint64_t>(i) * 210);
    t->set_port_state(4);
    t->set_carrier(v1::CARRIER_UP);
  }
  ASSERT_EQ(testing::UploadOne(*stub, batch), v1::UploadAck::STATUS_ACCEPTED);

  const auto http_port = static_cast<std::uint16_t>(app.http_port());
  const auto reply = http::testing::Fetch(http_port, "GET", "/api/v1/telemetry?agent=h1");
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 200) << reply->body;
  EXPECT_NE(reply->body.find(R"("count":1)"), std::string::npos) << reply->body;
  EXPECT_NE(reply->body.find(R"("agent_id":"h1","nic":"nic1","samples":2)"), std::string::npos)
      << reply->body;
  EXPECT_NE(reply->body.find(R"("counters":{"symbol_error":4210})"), std::string::npos)
      << reply->body;
  const auto other = http::testing::Fetch(http_port, "GET", "/api/v1/telemetry?agent=h2");
  ASSERT_TRUE(other.has_value());
  EXPECT_NE(other->body.find(R"("count":0)"), std::string::npos) << other->body;
  const auto metrics = http::testing::Fetch(http_port, "GET", "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_NE(metrics->body.find("hostmesh_ingest_telemetry_accepted_total 2"), std::string::npos);
  app.Shutdown();
}

}  // namespace
}  // namespace hostmesh::analyzer::app
