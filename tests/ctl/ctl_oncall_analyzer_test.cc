// hostmeshctl against a real analyzer: the analyzer app in-process on
// 127.0.0.1:0 (real gRPC, HTTP and RocksDB in a temp dir; 2 s windows), fed
// by a test agent whose probes to and from one NIC all time out. Once the API
// reports that RNIC down (deadline-bounded polling), the built hostmeshctl
// must show it down with exit 1 (`rnics`), report the analyzer healthy with
// exit 0 (`status`), list the open incident (`incidents`, exit 1), and exit 3
// naming the address when pointed at a port nothing listens on.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "analyzer/main/analyzer_app.h"
#include "ctl/http_client.h"
#include "ctl/json_reader.h"
#include "hostmesh/v1/ingest.grpc.pb.h"
#include "tests/analyzer/main/app_test_support.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"
#include "tests/ctl/ctl_runner.h"
#include "tests/ctl/fake_http_server.h"

namespace hostmesh::ctl::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

using analyzer::app::testing::Batch;
using analyzer::app::testing::kBadNic;
using analyzer::app::testing::kNics;

// True when /api/v1/rnics on `port` reports kBadNic down.
bool BadNicDown(std::uint16_t port) {
  HttpEndpoint ep;
  ep.host = "127.0.0.1";
  ep.port = port;
  const HttpResponse r = HttpGet(ep, "/api/v1/rnics");
  if (!r.ok() || r.status != 200) return false;
  std::string error;
  const auto body = ParseJson(r.body, &error);
  if (!body) return false;
  for (const JsonNode* rnic : JsonArray(*body, "rnics")) {
    if (JsonInt(*rnic, "nic") == kBadNic) return JsonString(*rnic, "state") == "down";
  }
  return false;
}

// The line of `text` that contains `needle` ("" if none).
std::string LineWith(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  if (at == std::string::npos) return "";
  const auto begin = text.rfind('\n', at) + 1;
  return text.substr(begin, text.find('\n', at) - begin);
}

TEST(OncallAgainstAnalyzer, NicDownShowsInRnicsStatusHealthyUnreachableExitsThree) {
  analyzer::testing::TempDir data;
  analyzer::AnalyzerConfig config;
  config.grpc_listen = {"127.0.0.1", 0};
  config.grpc_insecure = true;  // ingest's TLS is tls_ingest_test's
  config.http_listen = {"127.0.0.1", 0};
  config.data_dir = data.path() / "data";
  config.analysis.window = 2s;
  config.analysis.grace = 1s;
  SystemClock clock;
  metrics::Registry registry;
  analyzer::app::AnalyzerAppOptions options;
  options.version = "test";
  options.tick = 100ms;
  analyzer::app::AnalyzerApp app(config, options, clock, registry);
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
  // The agent keeps uploading a batch every 100 ms for the whole test, so the
  // host stays present while hostmeshctl runs.
  std::atomic<bool> stop_feeding{false};
  std::atomic<bool> feed_failed{false};
  std::thread feeder([&] {
    grpc::ClientContext context;
    auto stream = stub->Upload(&context);
    for (std::uint64_t seq = 1; !stop_feeding; ++seq) {
      v1::UploadAck ack;
      if (!stream->Write(Batch(seq, clock.RealtimeNow(), 2)) || !stream->Read(&ack) ||
          ack.status() != v1::UploadAck::STATUS_ACCEPTED) {
        feed_failed = true;
        break;
      }
      std::this_thread::sleep_for(100ms);
    }
    stream->WritesDone();
    stream->Finish();
  });

  const auto http_port = static_cast<std::uint16_t>(app.http_port());
  bool down = false;
  for (const auto deadline = std::chrono::steady_clock::now() + 20s;
       !down && !feed_failed && std::chrono::steady_clock::now() < deadline;) {
    down = BadNicDown(http_port);
    if (!down) std::this_thread::sleep_for(100ms);
  }
  EXPECT_FALSE(feed_failed);
  EXPECT_TRUE(down) << "the analyzer never reported nic2 down";

  if (down) {
    TempDir dir;
    const std::string at = " --analyzer http://127.0.0.1:" + std::to_string(http_port);
    RunResult r = RunShell(Ctl("rnics" + at), dir);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    const std::string nic2 = LineWith(r.out, "nic2");
    EXPECT_THAT(nic2, HasSubstr("h1"));
    EXPECT_THAT(nic2, HasSubstr("down"));
    EXPECT_THAT(nic2, HasSubstr("100.00%"));
    EXPECT_THAT(LineWith(r.out, "nic0"), HasSubstr(" ok "));
    EXPECT_THAT(r.out, HasSubstr("4 RNICs, 1 not ok: h1/nic2 down"));

    r = RunShell(Ctl("rnics --json" + at), dir);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.out, HasSubstr(R"("nic_name":"nic2")"));

    r = RunShell(Ctl("status" + at), dir);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("version:    test"));
    EXPECT_THAT(r.out, HasSubstr("agents:     1 present of 1 known"));
    EXPECT_THAT(r.out, HasSubstr("health:     healthy"));

    r = RunShell(Ctl("incidents" + at), dir);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_THAT(LineWith(r.out, "rnic_down"), HasSubstr("h1/nic2"));
    EXPECT_THAT(LineWith(r.out, "rnic_down"), HasSubstr("open"));

    // The incident and its evidence, written after its window: polled.
    const auto evidence_deadline = std::chrono::steady_clock::now() + 15s;
    do {
      r = RunShell(Ctl("incident 1" + at), dir);
    } while (LineWith(r.out, "suspect").empty() &&
             std::chrono::steady_clock::now() < evidence_deadline);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("incident 1  rnic_"));
    EXPECT_THAT(r.out, HasSubstr("OPEN"));
    EXPECT_THAT(LineWith(r.out, "suspect"), HasSubstr("rnic h1/nic2"));
    EXPECT_THAT(LineWith(r.out, "suspect"), HasSubstr("100.00%"));
    EXPECT_THAT(r.out, HasSubstr("windows that found it:"));
    r = RunShell(Ctl("incident 1 --json" + at), dir);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.out, HasSubstr(R"({"incident":{)"));
    EXPECT_THAT(r.out, HasSubstr(R"("evidence":{)"));
    // The support bundle opens, and its CSVs hold the evidence's probes.
    r = RunShell(Ctl("bundle 1 -o bundle.tar.gz" + at), dir);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("wrote bundle.tar.gz"));
    r = RunShell(
        "tar -xzf bundle.tar.gz && cd hostmesh-incident-1 && ls && "
        "head -1 probes.csv && grep -c ',1,0,0$' probes.csv",
        dir);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    for (const char* file : {"README.txt", "evidence.json", "incident.json", "probes.csv",
                             "paths.csv", "counters.csv", "verdicts.csv", "analyzer.json"}) {
      EXPECT_THAT(r.out, HasSubstr(file));
    }
    EXPECT_THAT(r.out, HasSubstr("tuple,group,role,agent_id,"));
    r = RunShell(
        "grep -c redacted hostmesh-incident-1/analyzer.json && "
        "grep -c '\"version\": \"test\"' hostmesh-incident-1/analyzer.json",
        dir);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.out, "1\n1\n") << "the gRPC key left out; the version in";
    r = RunShell(Ctl("incident 999" + at), dir);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_THAT(r.err, HasSubstr("404"));

    r = RunShell(Ctl("links --suspicious" + at), dir);  // no inventory: no link blamed
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;

    r = RunShell(Ctl("sla" + at), dir);  // nic2's drops are RNIC drops
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_THAT(LineWith(r.out, "cluster"), HasSubstr("%"));

    const std::string nowhere = "http://127.0.0.1:" + std::to_string(UnusedPort());
    r = RunShell(Ctl("rnics --analyzer " + nowhere), dir);
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_THAT(r.err, HasSubstr("analyzer unreachable at " + nowhere));
  }

  stop_feeding = true;
  feeder.join();
  const std::uint64_t one = 1;
  ASSERT_EQ(::write(stop_fd, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  loop.join();
  ::close(stop_fd);
}

}  // namespace
}  // namespace hostmesh::ctl::testing
