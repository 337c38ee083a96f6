// The agent's continuous traceroute on the emulated fabric (2 hosts x 8 rails
// x 4 spines, default ICMP limits): the real hostmesh-agent in h000 with an
// in-test AgentIngest server on the management bridge. Checks that the path
// reports match `fabric truth-path`, that no switch is asked for more ICMP
// than the per-switch budget (from the switches' own SNMP counters), and that
// a route change shows up as a changed path (by the next refresh; the time it
// took is printed, the deadline has room for a loaded machine).
// Needs root; skips otherwise.
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
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "hostmesh/v1/ingest.grpc.pb.h"
#include "tests/support/fabric_shell.h"

namespace hostmesh::agent {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

// The test config: one port per source NIC (8 x 7 = 56 5-tuples), so the
// default thread and a 30 probes/s budget refresh every path each 10 s
// (56 * 4 / 10 = 22.4 probes/s); the per-switch budget stays the default.
constexpr int kNics = 8;
constexpr int kTuples = kNics * (kNics - 1);
constexpr auto kRefresh = 10s;
constexpr double kPerSwitchBudget = 5;  // per_switch_rate_per_second, default
constexpr auto kMeasure = 20s;

const std::string& Prefix() {
  static const std::string prefix = hostmesh::testing::TestPrefix("ct");
  return prefix;
}

std::optional<std::string> Shell(const std::string& command) {
  return hostmesh::testing::ShellWithPrefix(Prefix(), command);
}

std::string Fabric(const std::string& args) {
  return hostmesh::testing::FabricCommand(args);
}

std::string NicIp(int rail) {
  return "198.18.0." + std::to_string(4 * rail + 1);  // host 0 of 2: link index rail * 2
}

// What the analyzer would store: every path report, with when it arrived.
class PathIngest final : public v1::AgentIngest::Service {
 public:
  struct Arrival {
    v1::PathReport report;
    Steady::time_point at;
  };
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
      {
        std::lock_guard lock(mu_);
        for (const v1::PathReport& p : batch.paths()) paths_.push_back({p, Steady::now()});
      }
      v1::UploadAck ack;
      ack.set_batch_seq(batch.batch_seq());
      ack.set_status(v1::UploadAck::STATUS_ACCEPTED);
      if (!stream->Write(ack)) break;
    }
    return grpc::Status::OK;
  }
  std::vector<Arrival> paths() const {
    std::lock_guard lock(mu_);
    return paths_;
  }
  std::vector<v1::AgentHello> hellos() const {
    std::lock_guard lock(mu_);
    return hellos_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Arrival> paths_;
  std::vector<v1::AgentHello> hellos_;
};

// A gRPC server listening in the mgmt namespace: only a short-lived thread
// enters it, the listening socket stays there.
class MgmtServer {
 public:
  explicit MgmtServer(grpc::Service& service) {
    std::thread([&] {
      const int fd = ::open(("/run/netns/" + Prefix() + "mgmt").c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) return;
      ::close(fd);
      grpc::ServerBuilder builder;
      builder.AddListeningPort("198.19.128.1:50051", grpc::InsecureServerCredentials());
      builder.RegisterService(&service);
      server_ = builder.BuildAndStart();
    }).join();
  }
  ~MgmtServer() {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
  }
  bool ok() const { return server_ != nullptr; }

 private:
  std::unique_ptr<grpc::Server> server_;
};

// Icmp OutMsgs, OutTimeExcds and OutRateLimitHost of one namespace (/proc/net/snmp).
struct IcmpOut {
  double msgs = 0;
  double time_exceeded = 0;
  double rate_limited = 0;
};

std::optional<IcmpOut> ReadIcmpOut(const std::string& device) {
  const auto snmp = Shell("ip netns exec " + Prefix() + device + " cat /proc/net/snmp");
  if (!snmp) return std::nullopt;
  std::istringstream lines(*snmp);
  std::vector<std::string> names;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("Icmp:")) continue;
    std::istringstream words(line.substr(5));
    if (names.empty()) {
      for (std::string w; words >> w;) names.push_back(w);
      continue;
    }
    IcmpOut out;
    for (std::size_t i = 0; i < names.size(); ++i) {
      double v = 0;
      words >> v;
      if (names[i] == "OutMsgs") out.msgs = v;
      if (names[i] == "OutTimeExcds") out.time_exceeded = v;
      if (names[i] == "OutRateLimitHost") out.rate_limited = v;
    }
    return out;
  }
  return std::nullopt;
}

std::vector<std::string> Switches() {
  std::vector<std::string> out;
  for (int r = 0; r < kNics; ++r) out.push_back("p0r" + std::to_string(r));
  for (int s = 0; s < 4; ++s) out.push_back("s0" + std::to_string(s));
  return out;
}

std::map<std::string, IcmpOut> ReadAllIcmpOut() {
  std::map<std::string, IcmpOut> out;
  for (const std::string& sw : Switches()) {
    const auto v = ReadIcmpOut(sw);
    EXPECT_TRUE(v) << "snmp of " << sw;
    out[sw] = v.value_or(IcmpOut{});
  }
  return out;
}

// `fabric truth-path`: (device, ingress address) of every switch on the path.
std::vector<std::pair<std::string, std::string>> TruthPath(const v1::PathReport& p) {
  const auto out = Shell(
      Fabric("truth-path " + p.src_ip() + " " + p.dst_ip() + " " + std::to_string(p.src_port())));
  EXPECT_TRUE(out) << "truth-path " << p.src_ip() << ":" << p.src_port();
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(out.value_or(""));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    rows.push_back(words);
  }
  std::vector<std::pair<std::string, std::string>> hops;
  for (std::size_t i = 1; i + 1 < rows.size(); ++i) hops.emplace_back(rows[i][0], rows[i][2]);
  return hops;
}

using TupleKey = std::tuple<std::string, std::string, std::uint32_t>;
TupleKey Key(const v1::PathReport& p) {
  return {p.src_ip(), p.dst_ip(), p.src_port()};
}

// Compares a report with the truth; counts its silent switch hops.
void ExpectMatchesTruth(const v1::PathReport& p,
                        const std::vector<std::pair<std::string, std::string>>& truth,
                        int* silent) {
  SCOPED_TRACE(p.src_ip() + ":" + std::to_string(p.src_port()) + " -> " + p.dst_ip());
  EXPECT_TRUE(p.reached_destination());
  ASSERT_EQ(static_cast<std::size_t>(p.hops_size()), truth.size() + 1);
  for (std::size_t i = 0; i < truth.size(); ++i) {
    EXPECT_EQ(p.hops(static_cast<int>(i)).ttl(), i + 1);
    const std::string& address = p.hops(static_cast<int>(i)).address();
    if (address.empty()) {
      ++*silent;  // unknown, allowed: the switches keep Linux's ICMP limits
    } else {
      EXPECT_EQ(address, truth[i].second) << "ttl " << i + 1 << " (" << truth[i].first << ")";
    }
  }
  EXPECT_EQ(p.hops(p.hops_size() - 1).address(), p.dst_ip());
}

// The same comparison as a verdict: silent hops match anything.
bool MatchesTruth(const v1::PathReport& p,
                  const std::vector<std::pair<std::string, std::string>>& truth) {
  if (!p.reached_destination() || static_cast<std::size_t>(p.hops_size()) != truth.size() + 1) {
    return false;
  }
  for (std::size_t i = 0; i < truth.size(); ++i) {
    const std::string& address = p.hops(static_cast<int>(i)).address();
    if (!address.empty() && address != truth[i].second) return false;
  }
  return p.hops(p.hops_size() - 1).address() == p.dst_ip();
}

std::map<std::string, double> ScrapeMetrics() {
  const auto text = Shell("ip netns exec " + Prefix() + "h000 " + HOSTMESH_PYTHON3 +
                          " -c \"import urllib.request as u; print(u.urlopen("
                          "'http://198.19.129.0:9100/metrics', timeout=5).read().decode())\"");
  std::map<std::string, double> values;
  std::istringstream lines(text.value_or(""));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string name;
    double v = 0;
    in >> name >> v;
    values[name] += v;
  }
  return values;
}

class AgentTracingTestbed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces";
    if (!Shell(Fabric("up --hosts 2 --rails 8 --spines 4") + " >&2")) {
      GTEST_FAIL() << "`fabric up` failed as root (its log above)";
    }
    up_ = true;
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (up_) Shell(Fabric("down") + " >&2");
    if (!HasFailure()) {
      std::remove(config_path_.c_str());
      std::remove(log_path_.c_str());
    } else if (!log_path_.empty()) {
      std::fprintf(stderr, "agent log kept: %s\n", log_path_.c_str());
    }
  }

  bool StartAgent() {
    auto config = Shell(Fabric("agent-config h000"));
    if (!config) return false;
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"pool_size: 16", "pool_size: 1"},
             {"  rate_per_second: 40", "  rate_per_second: 30"},
             {"refresh_period: 240s", "refresh_period: 10s"}}) {
      const auto at = config->find(from);
      if (at == std::string::npos) return false;
      config->replace(at, from.size(), to);
    }
    config_path_ = ::testing::TempDir() + Prefix() + "agent.yaml";
    log_path_ = ::testing::TempDir() + Prefix() + "agent.log";
    std::ofstream(config_path_) << *config;
    pid_ = ::fork();
    if (pid_ == 0) {
      const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      ::dup2(log, STDOUT_FILENO);
      ::dup2(log, STDERR_FILENO);
      const std::string ns = Prefix() + "h000";
      ::execlp("ip", "ip", "netns", "exec", ns.c_str(), HOSTMESH_AGENT_BIN, "--config",
               config_path_.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return pid_ > 0;
  }

  bool AgentRunning() { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }

  // SIGTERM; the exit status, or nullopt when it took longer than `timeout`.
  std::optional<int> Terminate(std::chrono::milliseconds timeout) {
    ::kill(pid_, SIGTERM);
    const auto deadline = Steady::now() + timeout;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Steady::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(10ms);  // polling period
    }
    pid_ = -1;
    return status;
  }

  bool up_ = false;
  pid_t pid_ = -1;
  std::string config_path_;
  std::string log_path_;
};

TEST_F(AgentTracingTestbed, PathsMatchTruthUnderTheSwitchBudgetAndARouteChangeIsSeen) {
  PathIngest ingest;
  MgmtServer server(ingest);
  ASSERT_TRUE(server.ok());
  const auto before = ReadAllIcmpOut();
  const auto start = Steady::now();
  ASSERT_TRUE(StartAgent());

  // (a) Every 5-tuple of the pools is traced and reported; paths = truth.
  std::this_thread::sleep_for(kMeasure);
  const auto after = ReadAllIcmpOut();
  const double seconds = std::chrono::duration<double>(Steady::now() - start).count();
  ASSERT_TRUE(AgentRunning());

  const auto hellos = ingest.hellos();
  ASSERT_FALSE(hellos.empty());
  EXPECT_TRUE(hellos.front().capabilities().traceroute());

  // The first traces need about 8 s of the 30 probes/s budget; an agent that
  // a loaded machine started late gets 30 s more before that counts as a miss.
  std::map<TupleKey, v1::PathReport> latest;
  for (const auto wait_until = Steady::now() + 30s;; std::this_thread::sleep_for(100ms)) {
    for (const auto& a : ingest.paths()) latest[Key(a.report)] = a.report;
    if (latest.size() >= static_cast<std::size_t>(kTuples) || Steady::now() > wait_until) break;
  }
  EXPECT_EQ(latest.size(), static_cast<std::size_t>(kTuples));
  std::map<TupleKey, std::vector<std::pair<std::string, std::string>>> truth;
  int silent = 0;
  int switch_hops = 0;
  for (const auto& [key, p] : latest) {
    EXPECT_EQ(p.src_ip(), NicIp(static_cast<int>(p.src_nic())));
    EXPECT_EQ(p.dst_ip(), NicIp(static_cast<int>(p.dst_nic())));
    EXPECT_EQ(p.dst_port(), 4791U);
    truth[key] = TruthPath(p);
    ExpectMatchesTruth(p, truth[key], &silent);
    switch_hops += static_cast<int>(truth[key].size());
  }
  EXPECT_LE(silent, switch_hops / 10) << "most hops answer at these rates";

  // Each switch answered at most the per-switch budget, far below Linux's ~1000/s.
  double busiest = 0;
  for (const std::string& sw : Switches()) {
    const double msgs = after.at(sw).msgs - before.at(sw).msgs;
    const double rate = msgs / seconds;
    busiest = std::max(busiest, rate);
    std::printf("%-5s ICMP out %4.0f in %.1f s = %.2f/s (time exceeded %.0f, host-limited %.0f)\n",
                sw.c_str(), msgs, seconds, rate,
                after.at(sw).time_exceeded - before.at(sw).time_exceeded,
                after.at(sw).rate_limited - before.at(sw).rate_limited);
    EXPECT_GT(msgs, 0) << sw << " was never traced through";
    EXPECT_LE(rate, kPerSwitchBudget) << sw;
  }
  std::printf("busiest switch: %.2f ICMP/s (per-switch budget %.0f/s, Linux limit ~1000/s)\n",
              busiest, kPerSwitchBudget);
  RecordProperty("busiest_switch_icmp_per_second", std::to_string(busiest));

  auto metrics = ScrapeMetrics();
  EXPECT_EQ(metrics["hostmesh_agent_tracer_up"], 1);
  EXPECT_GE(metrics["hostmesh_agent_trace_runs_total"], kTuples);
  EXPECT_GE(metrics["hostmesh_agent_trace_reports_total"], kTuples);
  EXPECT_GE(metrics["hostmesh_agent_trace_hops_answered_total"], 3 * kTuples * 9 / 10);
  EXPECT_EQ(metrics["hostmesh_agent_trace_path_changes_total"], 0);
  EXPECT_EQ(metrics["hostmesh_agent_trace_errors_total"], 0);
  EXPECT_EQ(metrics["hostmesh_agent_trace_targets"], kTuples);

  // (b) p0r0 stops using the spine one of nic0's 5-tuples takes: the 5-tuples
  // of nic0 whose truth moves must be reported changed within one refresh.
  const std::string src = NicIp(0);
  std::string spine;
  for (const auto& [key, hops] : truth) {
    if (std::get<0>(key) == src) spine = hops.at(1).first;
  }
  ASSERT_FALSE(spine.empty());
  std::string route = "ip -n " + Prefix() + "p0r0 route replace default";
  for (int s = 0; s < 4; ++s) {
    const std::string name = "s0" + std::to_string(s);
    if (name != spine)
      route += " nexthop via 198.19.0." + std::to_string(2 * s + 1) + " dev " + name;
  }
  const auto changed_at = Steady::now();
  ASSERT_TRUE(Shell(route)) << route;
  std::set<TupleKey> affected;
  std::map<TupleKey, std::vector<std::pair<std::string, std::string>>> new_truth;
  for (const auto& [key, p] : latest) {
    if (p.src_ip() != src) continue;
    new_truth[key] = TruthPath(p);
    if (new_truth[key] != truth[key]) affected.insert(key);
  }
  ASSERT_FALSE(affected.empty()) << "dropping " << spine << " moved no 5-tuple of nic0";

  // What the tracer guarantees: a moved 5-tuple's next trace, at most one
  // refresh period after its previous one ended, reports the new path as
  // changed. The trace in flight at the change may still see the old path (or
  // a mix of both, so the first changed report need not be the new path), and
  // the budget, the batch age and a loaded machine's scheduling add seconds:
  // the deadline allows two refreshes and as much again for the rest. How soon
  // it is seen is printed, not asserted (a shared 2-core machine at a load of
  // 12 delays the agent by seconds).
  const auto allowed = 2 * kRefresh + 10s;
  const auto deadline = changed_at + allowed;
  std::optional<PathIngest::Arrival> seen;
  while (!seen && Steady::now() < deadline) {
    for (const auto& a : ingest.paths()) {
      const TupleKey key = Key(a.report);
      if (a.at >= changed_at && a.report.changed() && affected.contains(key) &&
          MatchesTruth(a.report, new_truth[key])) {
        seen = a;
        break;
      }
    }
    std::this_thread::sleep_for(50ms);  // polling period
  }
  ASSERT_TRUE(seen) << "no changed path matching the new routes for the " << affected.size()
                    << " moved 5-tuples of nic0 within "
                    << std::chrono::duration_cast<std::chrono::seconds>(allowed).count() << " s";
  std::printf("route change seen after %.1f s (refresh period %lld s)\n",
              std::chrono::duration<double>(seen->at - changed_at).count(),
              static_cast<long long>(kRefresh.count()));
  int ignored = 0;
  ExpectMatchesTruth(seen->report, new_truth[Key(seen->report)], &ignored);
  for (const auto& a : ingest.paths()) {
    if (a.report.changed()) {
      EXPECT_TRUE(affected.contains(Key(a.report)))
          << "changed path for an unmoved 5-tuple " << a.report.src_ip() << ":"
          << a.report.src_port() << " -> " << a.report.dst_ip();
    }
  }

  // SIGTERM ends the tracer thread with the rest: drain and flush only.
  const auto status = Terminate(5s);
  ASSERT_TRUE(status) << "the agent did not exit within 5 s of SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
}

}  // namespace
}  // namespace hostmesh::agent
