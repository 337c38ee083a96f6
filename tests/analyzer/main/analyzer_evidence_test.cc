// The analyzer app in-process (real gRPC, HTTP, RocksDB in a temp dir, a 2 s
// window): an agent uploads healthy probes, then every probe to or from one
// NIC times out. The incident's evidence, served at
// /api/v1/incidents/{id}/evidence, holds the NIC's probes from before the
// fault (the moment it began), its timeouts after, and its counters; it is
// still there after a restart. Polled against deadlines, no fixed sleeps
// beyond the upload pace.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "analyzer/main/analyzer_app.h"
#include "hostmesh/v1/ingest.grpc.pb.h"
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

class RunningAnalyzer {
 public:
  explicit RunningAnalyzer(const AnalyzerConfig& config)
      : app_(config, Options(), clock_, registry_) {
    std::string error;
    started_ = app_.Start(&error);
    EXPECT_TRUE(started_) << error;
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (started_) loop_ = std::thread([this] { app_.Run(stop_fd_); });
  }
  ~RunningAnalyzer() {
    const std::uint64_t one = 1;
    if (::write(stop_fd_, &one, sizeof one) != sizeof one) ADD_FAILURE() << "stop";
    if (loop_.joinable()) loop_.join();
    ::close(stop_fd_);
  }
  std::uint16_t http_port() const { return static_cast<std::uint16_t>(app_.http_port()); }
  int grpc_port() const { return app_.grpc_port(); }
  bool started() const { return started_; }
  const Clock& clock() const { return clock_; }

  // The JSON of a GET, with its status.
  std::pair<int, nlohmann::json> Get(const std::string& path) const {
    const auto reply = http::testing::Fetch(http_port(), "GET", path);
    if (!reply) return {0, nullptr};
    return {reply->status, nlohmann::json::parse(reply->body, nullptr, false)};
  }

 private:
  static AnalyzerAppOptions Options() {
    AnalyzerAppOptions options;
    options.version = "test";
    options.tick = 100ms;
    return options;
  }
  SystemClock clock_;
  metrics::Registry registry_;
  AnalyzerApp app_;
  bool started_ = false;
  int stop_fd_ = -1;
  std::thread loop_;
};

// Batch() with every probe answered: the fleet before the fault.
v1::UploadBatch HealthyBatch(std::uint64_t seq, WallTime now) {
  v1::UploadBatch batch = Batch(seq, now, 2);
  for (v1::ProbeResult& r : *batch.mutable_results()) {
    if (!r.timeout()) continue;
    r.set_timeout(false);
    r.set_nic_send_ns(r.send_time_ns() + 1000);
    r.set_nic_recv_ns(r.send_time_ns() + 6000);
    r.set_app_recv_ns(r.send_time_ns() + 9000);
  }
  v1::NicTelemetry* t = batch.add_telemetry();
  t->set_nic(kBadNic);
  t->set_end_ns(now.time_since_epoch().count());
  t->set_start_ns(t->end_ns() - 100'000'000);
  t->add_deltas()->set_counter(v1::NIC_COUNTER_SYMBOL_ERROR);
  t->set_port_state(4);
  return batch;
}

TEST(AnalyzerEvidence, AnIncidentKeepsTheProbesFromBeforeItsFaultAndKeepsThemThroughARestart) {
  analyzer::testing::TempDir dir;
  AnalyzerConfig config;
  config.grpc_listen = {"127.0.0.1", 0};
  config.grpc_insecure = true;
  config.http_listen = {"127.0.0.1", 0};
  config.data_dir = dir.path() / "data";
  config.analysis.window = 2s;
  config.analysis.grace = 1s;
  config.evidence.before = 6s;
  config.evidence.after = 4s;

  std::uint64_t id = 0;
  std::int64_t fault_ns = 0;
  {
    RunningAnalyzer analyzer(config);
    ASSERT_TRUE(analyzer.started());
    auto stub = v1::AgentIngest::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(analyzer.grpc_port()), grpc::InsecureChannelCredentials()));
    {
      v1::HelloReply reply;
      grpc::ClientContext context;
      ASSERT_TRUE(stub->Hello(&context, analyzer::testing::MakeHello("h1", 7, kNics), &reply).ok());
    }
    grpc::ClientContext context;
    auto stream = stub->Upload(&context);
    std::uint64_t seq = 0;
    // What the analyzer asks of this agent's flight recorder, answered in
    // the next batch as an agent does.
    std::vector<v1::CaptureRequest> asked;
    const auto upload = [&](v1::UploadBatch batch) {
      for (const v1::CaptureRequest& request : asked) {
        v1::FlightRecord& record = *batch.add_flight_records();
        record.set_incident_id(request.incident_id());
        record.set_from_ns(request.from_ns());
        record.set_to_ns(request.to_ns());
        v1::FlightEvent& event = *record.add_events();
        event.set_time_ns(request.from_ns() + 1);
        event.set_kind(v1::FlightEvent::KIND_LOG);
        event.set_nic(kBadNic);
        event.set_text("[verbs] nic2: QP 7 went to error");
      }
      asked.clear();
      v1::UploadAck ack;
      ASSERT_TRUE(stream->Write(batch));
      ASSERT_TRUE(stream->Read(&ack));
      ASSERT_EQ(ack.status(), v1::UploadAck::STATUS_ACCEPTED) << ack.error();
      asked.assign(ack.captures().begin(), ack.captures().end());
    };
    // 5 s healthy, then NIC 2 unreachable until its evidence is complete.
    const auto healthy_until = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < healthy_until) {
      upload(HealthyBatch(++seq, analyzer.clock().RealtimeNow()));
      std::this_thread::sleep_for(100ms);  // an agent's pace
    }
    fault_ns = analyzer.clock().RealtimeNow().time_since_epoch().count() - 100'000'000;
    nlohmann::json evidence;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      v1::UploadBatch batch = Batch(++seq, analyzer.clock().RealtimeNow(), 2);
      *batch.add_telemetry() = HealthyBatch(0, analyzer.clock().RealtimeNow()).telemetry(0);
      upload(batch);
      if (id == 0) {
        const auto [status, incidents] = analyzer.Get("/api/v1/incidents");
        if (status == 200 && !incidents["open"].empty()) id = incidents["open"][0]["id"];
      }
      if (id != 0) {
        const auto [status, body] =
            analyzer.Get("/api/v1/incidents/" + std::to_string(id) + "/evidence");
        // Complete once the capture reached `after` past the opening window
        // and the agent's flight record is in.
        if (status == 200 &&
            body["capture"]["to_ns"].get<std::int64_t>() >=
                body["opened_ns"].get<std::int64_t>() + 4'000'000'000 &&
            !body["flight_records"].empty()) {
          evidence = body;
          break;
        }
      }
      std::this_thread::sleep_for(100ms);
    }
    ASSERT_NE(id, 0u) << "no incident opened";
    ASSERT_TRUE(evidence.is_object()) << "evidence not complete in time";
    // A record nobody asked for (another incident) is refused, not filed for 30 days.
    {
      v1::UploadBatch unasked = HealthyBatch(++seq, analyzer.clock().RealtimeNow());
      unasked.clear_results();
      unasked.clear_telemetry();
      v1::FlightRecord& record = *unasked.add_flight_records();
      record.set_incident_id(id + 1000);
      record.set_from_ns(fault_ns);
      record.set_to_ns(fault_ns + 1'000'000'000);
      v1::UploadAck ack;
      ASSERT_TRUE(stream->Write(unasked));
      ASSERT_TRUE(stream->Read(&ack));
      EXPECT_EQ(ack.status(), v1::UploadAck::STATUS_REJECTED);
      EXPECT_NE(ack.error().find("unasked_flight_record: flight record 0: incident " +
                                 std::to_string(id + 1000) + " was not asked of this agent"),
                std::string::npos)
          << ack.error();
    }
    stream->WritesDone();

    EXPECT_EQ(evidence["version"], 1);
    EXPECT_EQ(evidence["incident_id"], id);
    // Lossy while its first window still held healthy probes, then down.
    EXPECT_TRUE(evidence["kind"] == "rnic_lossy" || evidence["kind"] == "rnic_down")
        << evidence["kind"];
    ASSERT_FALSE(evidence["groups"].empty());
    EXPECT_EQ(evidence["groups"][0]["role"], "suspect");
    EXPECT_EQ(evidence["groups"][0]["kind"], "rnic");
    EXPECT_EQ(evidence["groups"][0]["nic"], kBadNic);
    EXPECT_EQ(evidence["groups"][0]["nic_name"], "nic2");
    ASSERT_FALSE(evidence["verdicts"].empty());
    EXPECT_GT(evidence["verdicts"][0]["failures"].get<std::uint64_t>(), 0u);
    // The suspect's probes: answered before the fault, timed out after it.
    std::int64_t last_ok = 0, first_timeout = 0;
    std::size_t suspect_probes = 0;
    const nlohmann::json& tuples = evidence["tuples"];
    for (const nlohmann::json& row : evidence["probes"]["rows"]) {
      const nlohmann::json& tuple = tuples.at(row[0].get<std::size_t>());
      if (tuple["group"] != 0) continue;
      EXPECT_TRUE(tuple["src_nic"] == kBadNic || tuple["dst_nic"] == kBadNic) << tuple;
      ++suspect_probes;
      const std::int64_t t = row[1];
      if (row[2].get<bool>()) {
        if (first_timeout == 0) first_timeout = t;
      } else {
        last_ok = std::max(last_ok, t);
        EXPECT_EQ(row[3], 5000) << "network delay (3)-(2)";
      }
    }
    EXPECT_GT(suspect_probes, 0u);
    EXPECT_GT(last_ok, 0) << "healthy probes from before the fault";
    EXPECT_GE(first_timeout, fault_ns - 200'000'000);
    EXPECT_LT(last_ok, first_timeout) << "the moment it began";
    EXPECT_LE(evidence["capture"]["from_ns"].get<std::int64_t>(), last_ok);
    // The agent was asked for its flight recorder from `before` the fault.
    EXPECT_EQ(evidence["capture"]["flight_record_agents"], nlohmann::json::array({"h1"}));
    ASSERT_EQ(evidence["flight_records"].size(), 1u);
    const nlohmann::json& record = evidence["flight_records"][0];
    EXPECT_EQ(record["agent_id"], "h1");
    EXPECT_EQ(record["from_ns"], evidence["capture"]["from_ns"]);
    EXPECT_EQ(record["events"][0]["kind"], "log");
    EXPECT_EQ(record["events"][0]["text"], "[verbs] nic2: QP 7 went to error");
    ASSERT_FALSE(evidence["counters"].empty());
    EXPECT_EQ(evidence["counters"][0]["agent_id"], "h1");
    EXPECT_EQ(evidence["counters"][0]["port_state"], 4);

    const auto [status, incident] = analyzer.Get("/api/v1/incidents/" + std::to_string(id));
    EXPECT_EQ(status, 200);
    EXPECT_EQ(incident["id"], id);
    EXPECT_EQ(incident["evidence_url"], "/api/v1/incidents/" + std::to_string(id) + "/evidence");
    EXPECT_EQ(analyzer.Get("/api/v1/incidents/999").first, 404);
    EXPECT_EQ(analyzer.Get("/api/v1/incidents/999/evidence").first, 404);
    EXPECT_EQ(analyzer.Get("/api/v1/incidents/0x1/evidence").first, 404);
    EXPECT_EQ(analyzer.Get("/api/v1/incidents/1/other").first, 404);
  }
  // A restart on the same data dir: the evidence is read back as it was.
  RunningAnalyzer again(config);
  ASSERT_TRUE(again.started());
  const auto [status, evidence] =
      again.Get("/api/v1/incidents/" + std::to_string(id) + "/evidence");
  ASSERT_EQ(status, 200);
  EXPECT_EQ(evidence["incident_id"], id);
  EXPECT_FALSE(evidence["probes"]["rows"].empty());
  EXPECT_EQ(evidence["flight_records"].size(), 1u);
  const auto metrics = http::testing::Fetch(again.http_port(), "GET", "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_NE(metrics->body.find("hostmesh_analyzer_evidence_incidents 1"), std::string::npos);
}

}  // namespace
}  // namespace hostmesh::analyzer::app
