#pragma once

// Shared pieces of the hostmesh-agent testbed tests (agent_testbed_test.cc):
// the fabric under this process's own prefix, gRPC servers listening inside a
// fabric namespace, the real agent binary run in a host's namespace, and the
// switches' own answer to "which 5-tuples cross this link".

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "hostmesh/v1/ingest.grpc.pb.h"
#include "tests/support/fabric_shell.h"

namespace hostmesh::agent::testbed {

using namespace std::chrono_literals;

// Namespaces are prefix + device name; one fabric per test process.
inline const std::string& Prefix() {
  static const std::string prefix = hostmesh::testing::TestPrefix("a");
  return prefix;
}

// Runs a shell command with the fabric prefix set; its stdout, or nullopt when it fails.
inline std::optional<std::string> Shell(const std::string& command) {
  return hostmesh::testing::ShellWithPrefix(Prefix(), command);
}

inline std::string Fabric(const std::string& args) {
  return hostmesh::testing::FabricCommand(args);
}

// Polls `condition` until it holds or `timeout` passes; the sleep is the
// polling period, not a wait for an outcome.
template <typename Condition>
bool Eventually(Condition condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// A gRPC server listening inside a fabric namespace. The listening socket
// belongs to the namespace of the thread that creates it, so only a
// short-lived thread enters the namespace; the test process stays put.
// Destroying it is the analyzer going away: every open stream is cancelled.
class NamespacedServer {
 public:
  NamespacedServer(const std::string& device, const std::string& address, grpc::Service& service) {
    std::thread([&] {
      const std::string path = "/run/netns/" + Prefix() + device;
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
        error_ = "cannot enter " + path + ": " + std::strerror(errno);
        if (fd >= 0) ::close(fd);
        return;
      }
      ::close(fd);
      grpc::ServerBuilder builder;
      int port = 0;
      builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
      builder.RegisterService(&service);
      server_ = builder.BuildAndStart();
      if (!server_ || port == 0) error_ = "cannot listen on " + address + " in " + path;
    }).join();
  }
  ~NamespacedServer() { Shutdown(); }
  NamespacedServer(const NamespacedServer&) = delete;
  NamespacedServer& operator=(const NamespacedServer&) = delete;

  const std::string& error() const { return error_; }

  // Cancels every open call at once (no grace), as a crashing analyzer would.
  void Shutdown() {
    if (!server_) return;
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
    server_.reset();
  }

 private:
  std::unique_ptr<grpc::Server> server_;
  std::string error_;
};

inline constexpr const char* kAnalyzerAddress = "198.19.128.1:50051";

// Keeps every result and every Hello and acknowledges every batch once.
class KeepAllIngest final : public v1::AgentIngest::Service {
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
        const bool fresh = seqs_.insert(batch.batch_seq()).second;
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
  std::size_t result_count() const {
    std::lock_guard lock(mu_);
    return results_.size();
  }
  std::vector<v1::AgentHello> hellos() const {
    std::lock_guard lock(mu_);
    return hellos_;
  }

 private:
  mutable std::mutex mu_;
  std::set<std::uint64_t> seqs_;
  std::vector<v1::ProbeResult> results_;
  std::vector<v1::AgentHello> hellos_;
};

// `fabric agent-config HOST` with "key: old" lines replaced ("interval: 100ms"
// -> "interval: 50ms"), written to a file; returns its path, or "" on failure.
inline std::string WriteAgentConfig(const std::string& host,
                                    const std::vector<std::pair<std::string, std::string>>& edits) {
  auto config = Shell(Fabric("agent-config " + host));
  if (!config) {
    ADD_FAILURE() << "`fabric agent-config " << host << "` failed";
    return "";
  }
  for (const auto& [from, to] : edits) {
    const auto at = config->find(from);
    if (at == std::string::npos) {
      ADD_FAILURE() << "no \"" << from << "\" in\n" << *config;
      return "";
    }
    config->replace(at, from.size(), to);
  }
  const std::string path = ::testing::TempDir() + Prefix() + host + "-agent.yaml";
  std::ofstream(path) << *config;
  return path;
}

// The real hostmesh-agent in a host's namespace, its output in a log file.
// Killed (SIGKILL) on destruction if still running.
class AgentProcess {
 public:
  AgentProcess() = default;
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;
  ~AgentProcess() { Kill(); }

  bool Start(const std::string& host, const std::string& config_path) {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    log_path_ = ::testing::TempDir() + Prefix() + host + "-" +
                (test != nullptr ? test->name() : "agent") + ".log";
    const std::string ns = Prefix() + host;
    pid_ = ::fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (log >= 0) {
        ::dup2(log, STDOUT_FILENO);
        ::dup2(log, STDERR_FILENO);
      }
      ::execlp("ip", "ip", "netns", "exec", ns.c_str(), HOSTMESH_AGENT_BIN, "--config",
               config_path.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return true;
  }

  bool running() const { return pid_ > 0; }

  // SIGTERM, then waits up to `timeout` for the exit; the wait status, or
  // nullopt when it did not exit in time.
  std::optional<int> Terminate(std::chrono::milliseconds timeout) {
    if (pid_ <= 0 || ::kill(pid_, SIGTERM) != 0) return std::nullopt;
    int status = 0;
    pid_t done = 0;
    Eventually([&] { return (done = ::waitpid(pid_, &status, WNOHANG)) != 0; }, timeout);
    if (done != pid_) return std::nullopt;
    pid_ = -1;
    return status;
  }

  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

// Each test brings up its own 2 hosts x 4 rails x 2 spines fabric and always
// takes it down again.
class FabricTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces";
    if (!Shell(Fabric("up --hosts 2 --rails 4 --spines 2") + " >&2")) {
      GTEST_FAIL() << "`fabric up` failed as root (its log above)";
    }
    up_ = true;
  }
  void TearDown() override {
    agent_.Kill();
    if (up_) Shell(Fabric("down") + " >&2");
    // This process's configs and batch files; the agent's log only when the
    // test passed (it is the first thing to read when it did not).
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir(), ec)) {
      const std::string name = entry.path().filename().string();
      if (!name.starts_with(Prefix())) continue;
      if (name.ends_with(".log") && HasFailure()) {
        std::fprintf(stderr, "agent log kept: %s\n", entry.path().c_str());
        continue;
      }
      std::filesystem::remove(entry.path(), ec);
    }
  }

  bool up_ = false;
  AgentProcess agent_;
};

// The 5-tuple of one probe from the host's NIC `src` to NIC `dst`.
struct FiveTuple {
  std::string src_ip;
  std::string dst_ip;
  std::uint32_t src_rail = 0;
  std::uint32_t dst_rail = 0;
  std::uint32_t sport = 0;
  auto key() const { return std::tie(src_ip, dst_ip, sport); }
  bool operator<(const FiveTuple& other) const { return key() < other.key(); }
};

// Which of `tuples` (UDP to dport 4791, sent by host `host` of pod 0) cross the
// link between rail switch p0r`rail` and spine `spine`, in either direction:
// asked of the source rail switches' own FIBs (`ip route get ... iif HOST`, the
// kernel's multipath hash, as `fabric truth-path` does), one `ip -n NS -batch`
// per source rail switch. Between two NICs of one host the spine is chosen
// there alone; the tuple crosses the link when that choice is `spine` and
// either end is on `rail`. Returns nullopt (after a test failure) when a
// switch's answer cannot be read.
inline std::optional<std::map<FiveTuple, bool>> CrossesLink(const std::set<FiveTuple>& tuples,
                                                            const std::string& host,
                                                            std::uint32_t rail,
                                                            const std::string& spine) {
  std::map<std::uint32_t, std::vector<FiveTuple>> by_src_rail;
  for (const FiveTuple& t : tuples) by_src_rail[t.src_rail].push_back(t);
  std::map<FiveTuple, bool> crosses;
  for (const auto& [src_rail, list] : by_src_rail) {
    const std::string file = ::testing::TempDir() + Prefix() + "route-get.batch";
    {
      std::ofstream batch(file);
      for (const FiveTuple& t : list) {
        batch << "route get " << t.dst_ip << " from " << t.src_ip << " iif " << host
              << " ipproto udp sport " << t.sport << " dport 4791\n";
      }
    }
    const std::string rail_switch = "p0r" + std::to_string(src_rail);
    const auto out = Shell("ip -n " + Prefix() + rail_switch + " -batch " + file);
    std::remove(file.c_str());
    if (!out) {
      ADD_FAILURE() << "`ip -n " << Prefix() << rail_switch << " -batch` failed";
      return std::nullopt;
    }
    // One "DST from SRC via X dev sNN ..." line (plus a cache line) per query, in order.
    std::istringstream lines(*out);
    std::size_t i = 0;
    for (std::string line; std::getline(lines, line) && i < list.size();) {
      const auto dev = line.find(" dev ");
      if (line.find(" from ") == std::string::npos || dev == std::string::npos) continue;
      const FiveTuple& t = list[i++];
      if (!line.starts_with(t.dst_ip + " ")) {
        ADD_FAILURE() << "answer out of order: \"" << line << "\" for " << t.dst_ip;
        return std::nullopt;
      }
      std::istringstream rest(line.substr(dev + 5));
      std::string egress;
      rest >> egress;
      crosses[t] = egress == spine && (t.src_rail == rail || t.dst_rail == rail);
    }
    if (i != list.size()) {
      ADD_FAILURE() << rail_switch << " answered " << i << " of " << list.size() << ":\n" << *out;
      return std::nullopt;
    }
  }
  return crosses;
}

// `fabric truth-path`'s independent answer for one tuple: does it cross
// p0r`rail`-`spine` either way?
inline std::optional<bool> TruthPathCrosses(const FiveTuple& t, std::uint32_t rail,
                                            const std::string& spine) {
  const auto path =
      Shell(Fabric("truth-path " + t.src_ip + " " + t.dst_ip + " " + std::to_string(t.sport)));
  if (!path) return std::nullopt;
  const std::string rail_switch = "p0r" + std::to_string(rail);
  bool crosses = false;
  std::istringstream lines(*path);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("#")) continue;
    std::istringstream fields(line);
    std::string device, in_if, in_ip, out_if;
    fields >> device >> in_if >> in_ip >> out_if;
    crosses |=
        (device == rail_switch && out_if == spine) || (device == spine && out_if == rail_switch);
  }
  return crosses;
}

}  // namespace hostmesh::agent::testbed
