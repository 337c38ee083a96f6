// hostmesh-agent end to end on the emulated fabric (deploy/testbed/fabric,
// 2 hosts x 4 rails x 2 spines): the real binary in host h000's namespace,
// a real gRPC AgentIngest server in the test standing in for the analyzer on
// the management bridge, SIGTERM at the end. Needs root; skips otherwise.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hostmesh/v1/ingest.grpc.pb.h"

namespace hostmesh::agent {
namespace {

using namespace std::chrono_literals;

const std::string kPrefix = "hma" + std::to_string(::getpid()) + "-";

std::optional<std::string> Shell(const std::string& command) {
  const std::string full = "HOSTMESH_FABRIC_PREFIX=" + kPrefix + " " + command;
  FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  if (::pclose(pipe) != 0) return std::nullopt;
  return out;
}

std::string Fabric(const std::string& args) {
  return std::string(HOSTMESH_PYTHON3) + " " + HOSTMESH_FABRIC + " " + args;
}

// Keeps every result and acknowledges every batch once.
class Ingest final : public v1::AgentIngest::Service {
 public:
  grpc::Status Hello(grpc::ServerContext*, const v1::AgentHello* request,
                     v1::HelloReply* reply) override {
    std::lock_guard lock(mu_);
    hellos_.push_back(*request);
    reply->set_schema_version(v1::SCHEMA_VERSION_1);
    return grpc::Status::OK;
  }
  grpc::Status Upload(grpc::ServerContext*,
                      grpc::ServerReaderWriter<v1::UploadAck, v1::UploadBatch>* stream) override {
    v1::UploadBatch batch;
    while (stream->Read(&batch)) {
      v1::UploadAck ack;
      ack.set_batch_seq(batch.batch_seq());
      {
        std::lock_guard lock(mu_);
        const bool fresh = seqs_.emplace(batch.batch_seq(), true).second;
        if (fresh) results_.insert(results_.end(), batch.results().begin(), batch.results().end());
        ack.set_status(fresh ? v1::UploadAck::STATUS_ACCEPTED : v1::UploadAck::STATUS_DUPLICATE);
      }
      if (!stream->Write(ack)) break;
    }
    return grpc::Status::OK;
  }
  std::vector<v1::ProbeResult> results() const {
    std::lock_guard lock(mu_);
    return results_;
  }
  std::vector<v1::AgentHello> hellos() const {
    std::lock_guard lock(mu_);
    return hellos_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::uint64_t, bool> seqs_;
  std::vector<v1::ProbeResult> results_;
  std::vector<v1::AgentHello> hellos_;
};

// The listening socket belongs to the namespace of the thread that creates
// it, so only this short-lived thread enters mgmt; the test process stays put.
std::unique_ptr<grpc::Server> StartInMgmt(Ingest& service, std::string* error) {
  std::unique_ptr<grpc::Server> server;
  std::thread([&] {
    const int fd = ::open(("/run/netns/" + kPrefix + "mgmt").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
      *error = std::string("cannot enter mgmt namespace: ") + std::strerror(errno);
      if (fd >= 0) ::close(fd);
      return;
    }
    ::close(fd);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("198.19.128.1:50051", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    if (!server || port != 50051) *error = "cannot listen on 198.19.128.1:50051";
  }).join();
  return server;
}

class AgentTestbed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces";
    if (!Shell(Fabric("up --hosts 2 --rails 4 --spines 2") + " >&2")) {
      GTEST_SKIP() << "`fabric up` failed: network namespaces unavailable here?";
    }
    up_ = true;
  }
  void TearDown() override {
    if (agent_ > 0) {
      ::kill(agent_, SIGKILL);
      ::waitpid(agent_, nullptr, 0);
    }
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + 1s);
    if (up_) Shell(Fabric("down") + " >&2");
  }

  bool up_ = false;
  pid_t agent_ = -1;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(AgentTestbed, ProbesEveryPairUploadsAndExitsCleanly) {
  Ingest ingest;
  std::string error;
  server_ = StartInMgmt(ingest, &error);
  ASSERT_TRUE(error.empty()) << error;

  auto config = Shell(Fabric("agent-config h000"));
  ASSERT_TRUE(config);
  const auto at = config->find("interval: 100ms");
  ASSERT_NE(at, std::string::npos) << *config;
  config->replace(at, 15, "interval: 50ms");
  const std::string path = ::testing::TempDir() + kPrefix + "agent.yaml";
  std::ofstream(path) << *config;

  const std::string ns = kPrefix + "h000";
  agent_ = ::fork();
  ASSERT_GE(agent_, 0);
  if (agent_ == 0) {
    ::execlp("ip", "ip", "netns", "exec", ns.c_str(), HOSTMESH_AGENT_BIN, "--config", path.c_str(),
             static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::this_thread::sleep_for(5s);

  // /metrics is served on h000's management address, reachable only from there.
  const auto metrics =
      Shell("ip netns exec " + ns + " curl -sS --max-time 5 " + "http://198.19.129.0:9100/metrics");
  ASSERT_TRUE(metrics) << "cannot fetch /metrics";
  for (const char* name :
       {"hostmesh_agent_probes_sent_total{src_nic=\"nic0\",dst_nic=\"nic1\"}",
        "hostmesh_agent_probes_received_total{src_nic=\"nic3\",dst_nic=\"nic2\"}",
        "hostmesh_agent_probes_timeouts_total", "hostmesh_agent_probes_late_total",
        "hostmesh_agent_network_latency_seconds_bucket{src_nic=\"nic0\",le=",
        "hostmesh_agent_processing_delay_seconds_count{src_nic=\"nic3\"}",
        "hostmesh_agent_timestamp_source{nic=\"nic0\",source=\"kernel\"} 1",
        "hostmesh_agent_upload_batches_acknowledged_total",
        "hostmesh_agent_process_resident_memory_bytes"}) {
    EXPECT_NE(metrics->find(name), std::string::npos) << name;
  }

  ASSERT_EQ(::kill(agent_, SIGTERM), 0);
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  pid_t done = 0;
  while ((done = ::waitpid(agent_, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(done, agent_) << "agent did not exit within 10 s of SIGTERM";
  agent_ = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;

  ASSERT_EQ(ingest.hellos().size(), 1U);
  const v1::AgentHello hello = ingest.hellos().front();
  EXPECT_EQ(hello.agent_id(), "h000");
  EXPECT_EQ(hello.nics_size(), 4);

  // 5 s at 50 ms from 4 NICs is about 400 probes; each must arrive once.
  const std::vector<v1::ProbeResult> results = ingest.results();
  EXPECT_GT(results.size(), 300U);
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> per_pair;
  std::map<std::pair<std::uint32_t, std::uint64_t>, int> per_sequence;
  for (const v1::ProbeResult& r : results) {
    ++per_pair[{r.src_nic(), r.dst_nic()}];
    ++per_sequence[{r.src_nic(), r.sequence()}];
    EXPECT_FALSE(r.timeout()) << r.ShortDebugString();
    EXPECT_NE(r.src_nic(), r.dst_nic());
    EXPECT_EQ(r.send_timestamp_source(), v1::TIMESTAMP_SOURCE_KERNEL) << r.ShortDebugString();
    EXPECT_EQ(r.recv_timestamp_source(), v1::TIMESTAMP_SOURCE_KERNEL) << r.ShortDebugString();
    const std::int64_t network = r.nic_recv_ns() - r.nic_send_ns();
    const std::int64_t total = r.app_recv_ns() - r.app_send_ns();
    // veths through four namespaces: microseconds, well under 10 ms even on a busy CI box.
    EXPECT_GT(network, 0) << r.ShortDebugString();
    EXPECT_LT(network, 10'000'000) << r.ShortDebugString();
    EXPECT_GE(total, network) << r.ShortDebugString();
    EXPECT_GE(r.src_port(), 49152U);
    EXPECT_EQ(r.dst_port(), 4791U);
  }
  EXPECT_EQ(per_pair.size(), 12U);
  for (const auto& [key, count] : per_sequence) {
    EXPECT_EQ(count, 1) << "NIC " << key.first << " sequence " << key.second;
  }
}

}  // namespace
}  // namespace hostmesh::agent
