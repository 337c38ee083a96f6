// The analyzer app in-process (real gRPC, HTTP and RocksDB in a temp dir):
// without an inventory it serves the fabric it learned from the uploaded path
// reports, named by addresses, and a restart on the same data directory keeps
// every id; with an inventory that is wrong about the fabric it serves the
// places where the traces contradict it and counts them in /metrics.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "analyzer/main/analyzer_app.h"
#include "hostmesh/v1/ingest.grpc.pb.h"
#include "tests/analyzer/feed/traced_fabric.h"
#include "tests/analyzer/main/app_test_support.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/common/http/http_test_client.h"
#include "tests/topology/inventory_edits.h"
#include "topology/inventory_writer.h"

namespace hostmesh::analyzer::app {
namespace {

using namespace std::chrono_literals;

// One app on 127.0.0.1:0, its loop running until destroyed.
class RunningApp {
 public:
  RunningApp(const std::filesystem::path& data_dir, const std::filesystem::path& inventory)
      : app_(Config(data_dir, inventory), Options(), clock_, registry_) {
    std::string error;
    started_ = app_.Start(&error);
    EXPECT_TRUE(started_) << error;
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    loop_ = std::thread([this] { app_.Run(stop_fd_); });
    stub_ = v1::AgentIngest::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(app_.grpc_port()), grpc::InsecureChannelCredentials()));
  }
  ~RunningApp() {
    const std::uint64_t one = 1;
    EXPECT_EQ(::write(stop_fd_, &one, sizeof one), static_cast<ssize_t>(sizeof one));
    loop_.join();
    ::close(stop_fd_);
  }

  void Upload(const analyzer::testing::TracedFabric& fabric, std::uint64_t seq) {
    {
      v1::HelloReply reply;
      grpc::ClientContext context;
      ASSERT_TRUE(stub_->Hello(&context, fabric.Hello(), &reply).ok());
    }
    const std::int64_t now = clock_.RealtimeNow().time_since_epoch().count();
    EXPECT_EQ(testing::UploadOne(*stub_, fabric.Batch(seq, now - 500'000'000, topology::kNone)),
              v1::UploadAck::STATUS_ACCEPTED);
  }

  // GET `target` until it answers 200 and `done` holds of its JSON body (15 s at most).
  nlohmann::json Poll(const std::string& target,
                      const std::function<bool(const nlohmann::json&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 15s;
    std::string last;
    while (std::chrono::steady_clock::now() < deadline) {
      const auto reply =
          http::testing::Fetch(static_cast<std::uint16_t>(app_.http_port()), "GET", target);
      if (reply && reply->status == 200) {
        last = reply->body;
        const auto body = nlohmann::json::parse(reply->body, nullptr, false);
        if (!body.is_discarded() && done(body)) return body;
      }
      std::this_thread::sleep_for(100ms);  // polling interval
    }
    ADD_FAILURE() << target << " never as expected; last: " << last;
    return {};
  }

  std::string Metrics() {
    const auto reply =
        http::testing::Fetch(static_cast<std::uint16_t>(app_.http_port()), "GET", "/metrics");
    return reply ? reply->body : "";
  }

 private:
  static AnalyzerConfig Config(const std::filesystem::path& data_dir,
                               const std::filesystem::path& inventory) {
    AnalyzerConfig config;
    config.grpc_listen = {"127.0.0.1", 0};
    config.grpc_insecure = true;  // ingest's TLS is tls_ingest_test's
    config.http_listen = {"127.0.0.1", 0};
    config.data_dir = data_dir;
    config.inventory = inventory;
    config.analysis.window = 2s;
    config.analysis.grace = 1s;
    return config;
  }
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
  std::unique_ptr<v1::AgentIngest::Stub> stub_;
};

std::vector<std::string> LinkNames(const nlohmann::json& topology) {
  std::vector<std::string> names;
  for (const auto& link : topology["links"]) names.push_back(link["name"].get<std::string>());
  return names;
}

TEST(AnalyzerTopology, ALearnedFabricIsServedByAddressAndKeepsItsIdsOverARestart) {
  analyzer::testing::TempDir dir;
  const analyzer::testing::TracedFabric fabric;
  const std::size_t links = fabric.truth.links().size();
  std::vector<std::string> before;
  {
    RunningApp app(dir.path() / "data", {});
    app.Upload(fabric, 1);
    const auto topology = app.Poll(
        "/api/v1/topology", [&](const nlohmann::json& t) { return t["links"].size() == links; });
    EXPECT_EQ(topology["source"], "learned");
    before = LinkNames(topology);
    const std::string name = fabric.AddressName(static_cast<topology::LinkId>(links - 1));
    EXPECT_NE(std::find(before.begin(), before.end(), name), before.end()) << name;
    const std::string metrics = app.Metrics();
    EXPECT_NE(metrics.find("hostmesh_analyzer_topology_size{source=\"learned\",what=\"links\"} " +
                           std::to_string(links)),
              std::string::npos)
        << metrics;
    EXPECT_NE(
        metrics.find("hostmesh_analyzer_topology_size{source=\"learned\",what=\"switches\"} 8"),
        std::string::npos);
  }
  // Restarted: the learned fabric is back, ids and all, before any upload.
  RunningApp again(dir.path() / "data", {});
  const auto topology = again.Poll(
      "/api/v1/topology", [&](const nlohmann::json& t) { return t["links"].size() == links; });
  EXPECT_EQ(LinkNames(topology), before);
}

TEST(AnalyzerTopology, PlacesWhereTracesContradictTheInventoryAreServedAndCounted) {
  analyzer::testing::TempDir dir;
  const analyzer::testing::TracedFabric fabric;
  topology::Inventory wrong = topology::GenerateInventory(fabric.kShape);
  topology::testing::SwapUpperEnds(wrong, "p0r0-s00", "p0r1-s01");
  const std::filesystem::path inventory = dir.path() / "inventory.yaml";
  std::ofstream(inventory) << topology::WriteInventoryYaml(wrong, {});

  RunningApp app(dir.path() / "data", inventory);
  app.Upload(fabric, 1);
  const auto places = app.Poll("/api/v1/topology/disagreements",
                               [](const nlohmann::json& d) { return !d["disagreements"].empty(); });
  for (const auto& place : places["disagreements"]) {
    EXPECT_EQ(place["kind"], "miscabled_link") << place;
    EXPECT_EQ(place["last_trace"]["agent_id"], "h1");
  }
  EXPECT_EQ(places["traces_by_kind"]["miscabled_link"], 48);
  const std::string metrics = app.Metrics();
  EXPECT_NE(metrics.find(
                "hostmesh_analyzer_topology_disagreeing_traces_total{kind=\"miscabled_link\"} 48"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("hostmesh_analyzer_topology_disagreements{kind=\"miscabled_link\"} 4"),
            std::string::npos);
  EXPECT_NE(metrics.find("hostmesh_analyzer_topology_disagreements{kind=\"unknown_address\"} 0"),
            std::string::npos);
}

}  // namespace
}  // namespace hostmesh::analyzer::app
