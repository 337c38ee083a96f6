// hostmesh-agent end to end on the emulated fabric (deploy/testbed/fabric,
// 2 hosts x 4 rails x 2 spines): the real binary in host h000's namespace,
// a real gRPC AgentIngest server in the test standing in for the analyzer on
// the management bridge, SIGTERM at the end. Needs root; skips otherwise.
// Each test brings up and takes down its own fabric (agent_testbed_harness.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hostmesh/v1/ingest.grpc.pb.h"
#include "tests/agent/main/agent_testbed_harness.h"
#include "tests/agent/upload/recording_ingest_server.h"

namespace hostmesh::agent {
namespace {

using namespace std::chrono_literals;
using testbed::AgentProcess;
using testbed::Eventually;
using testbed::Fabric;
using testbed::FiveTuple;
using testbed::kAnalyzerAddress;
using testbed::KeepAllIngest;
using testbed::NamespacedServer;
using testbed::Shell;
using testbed::WriteAgentConfig;
using upload::testing::IngestStore;

using AgentTestbed = testbed::FabricTest;

std::int64_t RealtimeNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Waits for the agent's clean exit after SIGTERM; true when it exited 0.
::testing::AssertionResult TerminatesCleanly(AgentProcess& agent) {
  const std::optional<int> status = agent.Terminate(10s);
  if (!status) {
    return ::testing::AssertionFailure() << "agent did not exit within 10 s of SIGTERM\n"
                                         << agent.Log();
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return ::testing::AssertionFailure() << "agent wait status " << *status << "\n" << agent.Log();
  }
  return ::testing::AssertionSuccess();
}

TEST_F(AgentTestbed, ProbesEveryPairUploadsAndExitsCleanly) {
  KeepAllIngest ingest;
  NamespacedServer server("mgmt", kAnalyzerAddress, ingest);
  ASSERT_EQ(server.error(), "");

  const std::string path = WriteAgentConfig("h000", {{"interval: 100ms", "interval: 50ms"}});
  ASSERT_FALSE(path.empty());
  ASSERT_TRUE(agent_.Start("h000", path));
  // About 400 probes from 4 NICs at 50 ms each, and the metrics server is up.
  ASSERT_TRUE(Eventually([&] { return ingest.result_count() >= 400; }, 20s)) << agent_.Log();

  // /metrics is served on h000's management address, reachable only from there.
  const auto metrics = Shell("ip netns exec " + testbed::Prefix() +
                             "h000 curl -sS --max-time 5 http://198.19.129.0:9100/metrics");
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

  ASSERT_TRUE(TerminatesCleanly(agent_));

  ASSERT_EQ(ingest.hellos().size(), 1U);
  const v1::AgentHello hello = ingest.hellos().front();
  EXPECT_EQ(hello.agent_id(), "h000");
  EXPECT_EQ(hello.nics_size(), 4);

  const std::vector<v1::ProbeResult> results = ingest.results();
  EXPECT_GE(results.size(), 400U);
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> per_pair;
  std::map<std::pair<std::uint32_t, std::uint64_t>, int> per_sequence;
  std::vector<std::int64_t> networks;
  for (const v1::ProbeResult& r : results) {
    ++per_pair[{r.src_nic(), r.dst_nic()}];
    ++per_sequence[{r.src_nic(), r.sequence()}];
    EXPECT_FALSE(r.timeout()) << r.ShortDebugString();
    EXPECT_NE(r.src_nic(), r.dst_nic());
    EXPECT_EQ(r.send_timestamp_source(), v1::TIMESTAMP_SOURCE_KERNEL) << r.ShortDebugString();
    EXPECT_EQ(r.recv_timestamp_source(), v1::TIMESTAMP_SOURCE_KERNEL) << r.ShortDebugString();
    const std::int64_t network = r.nic_recv_ns() - r.nic_send_ns();
    const std::int64_t total = r.app_recv_ns() - r.app_send_ns();
    // Each probe: after it left, and within the probe timeout (500 ms, the
    // testbed's): a slower one is a timeout, not a result. A busy machine may
    // hold one packet in a softirq for milliseconds; the median is below.
    EXPECT_GT(network, 0) << r.ShortDebugString();
    EXPECT_LT(network, 500'000'000) << r.ShortDebugString();
    networks.push_back(network);
    EXPECT_GE(total, network) << r.ShortDebugString();
    EXPECT_GE(r.src_port(), 49152U);
    EXPECT_EQ(r.dst_port(), 4791U);
  }
  // veths through four namespaces: tens of microseconds; 10 ms is headroom
  // for a loaded 2-core machine (the figures are bench/'s to measure).
  ASSERT_FALSE(networks.empty());
  std::nth_element(networks.begin(), networks.begin() + networks.size() / 2, networks.end());
  EXPECT_LT(networks[networks.size() / 2], 10'000'000);
  EXPECT_EQ(per_pair.size(), 12U);
  for (const auto& [key, count] : per_sequence) {
    EXPECT_EQ(count, 1) << "NIC " << key.first << " sequence " << key.second;
  }
}

// The analyzer stand-in of the restart tests. IngestStore (tests/agent/upload)
// is its durable database: it deduplicates on (agent, boot, batch_seq), counts
// every result per (agent, boot, src_nic, sequence) and outlives each server,
// as the analyzer's RocksDB outlives a restart. Per server lifetime this also
// notes the Hello replies it gave and when each newly stored result was sent.
struct IngestBehavior {
  // Record every batch but acknowledge only this many: the analyzer dies
  // between "durable" and "acknowledged" for the rest.
  std::uint64_t ack_limit = UINT64_MAX;
  // False: Hello answers last_durable_batch_seq 0 (an analyzer that lost its
  // index), so the agent must resend what it holds and dedup must catch it.
  bool report_last_durable = true;
};

class DurableIngest final : public v1::AgentIngest::Service {
 public:
  DurableIngest(IngestStore& store, IngestBehavior behavior) : store_(store), behavior_(behavior) {}

  grpc::Status Hello(grpc::ServerContext*, const v1::AgentHello* request,
                     v1::HelloReply* reply) override {
    reply->set_schema_version(v1::SCHEMA_VERSION_1);
    reply->set_analyzer_version("test");
    if (behavior_.report_last_durable) {
      reply->set_last_durable_batch_seq(
          store_.LastDurable(request->agent_id(), request->boot_id()));
    }
    std::lock_guard lock(mu_);
    hello_replies_.push_back(reply->last_durable_batch_seq());
    return grpc::Status::OK;
  }

  grpc::Status Upload(grpc::ServerContext*,
                      grpc::ServerReaderWriter<v1::UploadAck, v1::UploadBatch>* stream) override {
    v1::UploadBatch batch;
    while (stream->Read(&batch)) {
      const bool fresh = store_.Record(batch);
      {
        std::lock_guard lock(mu_);
        if (fresh) {
          for (const v1::ProbeResult& r : batch.results()) send_times_.push_back(r.send_time_ns());
        }
        if (acks_ >= behavior_.ack_limit) continue;
        ++acks_;
      }
      v1::UploadAck ack;
      ack.set_batch_seq(batch.batch_seq());
      ack.set_status(fresh ? v1::UploadAck::STATUS_ACCEPTED : v1::UploadAck::STATUS_DUPLICATE);
      if (!stream->Write(ack)) break;
    }
    return grpc::Status::OK;
  }

  std::vector<std::uint64_t> hello_replies() const {
    std::lock_guard lock(mu_);
    return hello_replies_;
  }
  std::vector<std::int64_t> send_times() const {
    std::lock_guard lock(mu_);
    return send_times_;
  }

 private:
  IngestStore& store_;
  const IngestBehavior behavior_;
  mutable std::mutex mu_;
  std::uint64_t acks_ = 0;
  std::vector<std::uint64_t> hello_replies_;
  std::vector<std::int64_t> send_times_;
};

// The real agent (50 ms interval, 200 ms batches, default reconnect backoff)
// against an analyzer that records batches 1..10+ but acknowledges only 1..8,
// is shut down mid-stream, and ~2 s later comes back on the same address with
// the same store, answering Hello as `restarted` says. After SIGTERM and a
// clean exit, every source NIC's stored sequences must be exactly 1..N, each
// once. Returns (batches stored before the restart, duplicate batches seen).
class AgentRestartTestbed : public testbed::FabricTest {
 protected:
  static constexpr std::uint64_t kAcked = 8;

  std::pair<std::uint64_t, std::uint64_t> RunRestart(IngestBehavior restarted) {
    IngestStore store;  // durable: outlives both servers
    DurableIngest first(store, {.ack_limit = kAcked});
    DurableIngest second(store, restarted);
    auto server = std::make_unique<NamespacedServer>("mgmt", kAnalyzerAddress, first);
    EXPECT_EQ(server->error(), "");

    const std::string path = WriteAgentConfig(
        "h000",
        {{"interval: 100ms", "interval: 50ms"}, {"batch_max_age: 1s", "batch_max_age: 200ms"}});
    EXPECT_FALSE(path.empty());
    if (HasFailure()) return {};
    const auto started = std::chrono::steady_clock::now();
    EXPECT_TRUE(agent_.Start("h000", path));
    // Durable but never acknowledged: batches kAcked+1 and kAcked+2 at least.
    if (!Eventually([&] { return store.batch_count() >= kAcked + 2; }, 20s)) {
      ADD_FAILURE() << "no upload before the restart\n" << agent_.Log();
      return {};
    }

    // The analyzer goes away mid-stream and comes back ~2 s later; meanwhile
    // the agent keeps probing and buffering.
    server->Shutdown();
    const std::int64_t down_ns = RealtimeNs();
    const std::size_t batches_before = store.batch_count();
    std::this_thread::sleep_for(2s);  // the outage itself, not a wait for an outcome
    server = std::make_unique<NamespacedServer>("mgmt", kAnalyzerAddress, second);
    if (!server->error().empty()) {
      ADD_FAILURE() << "restart: " << server->error();
      return {};
    }
    const std::int64_t up_ns = RealtimeNs();
    EXPECT_EQ(store.batch_count(), batches_before) << "uploads reached no server";

    // It reconnects after its backoff, uploads what it buffered, then more.
    if (!Eventually(
            [&] {
              return !second.hello_replies().empty() && store.batch_count() >= batches_before + 15;
            },
            20s)) {
      ADD_FAILURE() << "no upload after the restart\n" << agent_.Log();
      return {};
    }
    EXPECT_TRUE(TerminatesCleanly(agent_));
    const double run_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const std::string log = agent_.Log();
    EXPECT_NE(log.find("batches acknowledged"), std::string::npos) << log;
    EXPECT_EQ(log.find("never acknowledged"), std::string::npos) << log;

    // One boot of h000; its batches are 1..B without a gap.
    const std::map<IngestStore::ResultKey, int> results = store.results();
    std::set<std::pair<std::string, std::uint64_t>> boots;
    for (const auto& [key, count] : results) boots.insert({std::get<0>(key), std::get<1>(key)});
    EXPECT_EQ(boots.size(), 1U);
    if (boots.size() != 1) return {};
    const auto [agent_id, boot] = *boots.begin();
    EXPECT_EQ(agent_id, "h000");
    EXPECT_EQ(store.LastDurable(agent_id, boot), store.batch_count());

    // Per source NIC: sequences exactly 1..N, none missing, none twice.
    std::map<std::uint32_t, std::vector<std::uint64_t>> sequences;
    for (const auto& [key, count] : results) {
      const auto& [agent, boot_id, src, sequence] = key;
      EXPECT_EQ(count, 1) << "NIC " << src << " sequence " << sequence << " stored " << count
                          << " times";
      sequences[src].push_back(sequence);  // in sequence order per NIC (map order)
    }
    EXPECT_EQ(sequences.size(), 4U);
    // 20 probes/s per NIC for the whole run, outage included (a generous floor).
    const auto min_per_nic = static_cast<std::size_t>(run_s * 20 * 0.5);
    std::size_t total = 0;
    for (const auto& [src, seqs] : sequences) {
      EXPECT_EQ(seqs.front(), 1U) << "NIC " << src;
      EXPECT_EQ(seqs.back(), seqs.size())
          << "NIC " << src << ": " << seqs.size() << " distinct sequences up to " << seqs.back();
      EXPECT_GE(seqs.size(), min_per_nic) << "NIC " << src << " over " << run_s << " s";
      total += seqs.size();
    }

    EXPECT_EQ(first.hello_replies(), std::vector<std::uint64_t>{0}) << "one fresh start";
    const std::vector<std::uint64_t> replies = second.hello_replies();
    EXPECT_EQ(replies.size(), 1U) << "one reconnect";
    // Probing went on while the analyzer was down: results sent then arrived later.
    const std::vector<std::int64_t> later = second.send_times();
    const auto during_outage = std::count_if(later.begin(), later.end(), [&](std::int64_t t) {
      return t > down_ns + 200'000'000 && t < up_ns - 200'000'000;
    });
    // 4 NICs x 20/s over the 1.6 s well inside the outage is 128; half is plenty.
    EXPECT_GE(during_outage, 64) << "results sent during the outage";

    std::printf(
        "restart: %zu results over %.1f s, %zu batches (%zu stored before the restart, %llu "
        "acknowledged), Hello reply after restart: durable up to %llu, %llu duplicate batches, "
        "%lld results sent during the outage\n",
        total, run_s, store.batch_count(), batches_before, static_cast<unsigned long long>(kAcked),
        static_cast<unsigned long long>(replies.empty() ? 0 : replies.front()),
        static_cast<unsigned long long>(store.duplicate_batches()),
        static_cast<long long>(during_outage));
    return {batches_before, store.duplicate_batches()};
  }
};

// The restarted analyzer says how far its store goes: the agent skips the
// durable but unacknowledged batches instead of resending them.
TEST_F(AgentRestartTestbed, AnalyzerRestartWithHelloSkipLosesAndDuplicatesNoResult) {
  const auto [before, duplicates] = RunRestart({.report_last_durable = true});
  if (HasFatalFailure() || before == 0) return;
  EXPECT_GE(before, kAcked + 2);
  EXPECT_EQ(duplicates, 0U) << "the Hello reply covered every stored batch";
}

// The restarted analyzer lost its index (Hello says 0): the agent resends every
// batch it holds unacknowledged and ingest deduplicates them.
TEST_F(AgentRestartTestbed, AnalyzerRestartWithResendLosesAndDuplicatesNoResult) {
  const auto [before, duplicates] = RunRestart({.report_last_durable = false});
  if (HasFatalFailure() || before == 0) return;
  // Batches kAcked+1..before were stored but never acknowledged: each came twice.
  EXPECT_GE(duplicates, before - kAcked);
  EXPECT_LE(duplicates, before);
}

TEST_F(AgentTestbed, GraySpineLinkTimesOutExactlyTheFiveTuplesOverIt) {
  // 100% drop on p0r0-s00 both ways, link up, before the agent starts: every
  // result the agent reports was sent with the fault in place.
  ASSERT_TRUE(Shell(Fabric("fault add gray --link p0r0-s00") + " >&2"));

  KeepAllIngest ingest;
  NamespacedServer server("mgmt", kAnalyzerAddress, ingest);
  ASSERT_EQ(server.error(), "");
  const std::string path = WriteAgentConfig(
      "h000",
      {{"interval: 100ms", "interval: 50ms"}, {"batch_max_age: 1s", "batch_max_age: 200ms"}});
  ASSERT_FALSE(path.empty());
  ASSERT_TRUE(agent_.Start("h000", path));
  // ~6 s at 20 probes/s from each of 4 NICs.
  ASSERT_TRUE(Eventually([&] { return ingest.result_count() >= 480; }, 25s)) << agent_.Log();
  ASSERT_TRUE(TerminatesCleanly(agent_));

  ASSERT_EQ(ingest.hellos().size(), 1U);
  const v1::AgentHello hello = ingest.hellos().front();
  ASSERT_EQ(hello.nics_size(), 4);
  std::map<std::uint32_t, v1::Nic> nics;
  for (const v1::Nic& nic : hello.nics()) nics[nic.id()] = nic;
  ASSERT_EQ(nics.size(), 4U);

  const std::vector<v1::ProbeResult> results = ingest.results();
  const auto tuple_of = [&](const v1::ProbeResult& r) {
    const v1::Nic& src = nics.at(r.src_nic());
    const v1::Nic& dst = nics.at(r.dst_nic());
    return FiveTuple{src.ip(), dst.ip(), src.rail(), dst.rail(), r.src_port()};
  };
  std::set<FiveTuple> tuples;
  for (const v1::ProbeResult& r : results) {
    ASSERT_TRUE(nics.contains(r.src_nic()) && nics.contains(r.dst_nic())) << r.ShortDebugString();
    tuples.insert(tuple_of(r));
  }
  const auto crosses = testbed::CrossesLink(tuples, "h000", 0, "s00");
  ASSERT_TRUE(crosses);

  std::size_t crossing = 0;
  std::size_t timeouts = 0;
  std::set<FiveTuple> crossing_tuples;
  std::map<std::pair<std::uint32_t, std::uint64_t>, int> per_sequence;
  std::vector<std::int64_t> networks;
  for (const v1::ProbeResult& r : results) {
    const FiveTuple t = tuple_of(r);
    const bool over = crosses->at(t);
    EXPECT_EQ(r.timeout(), over) << (over ? "crosses p0r0-s00 but arrived: "
                                          : "does not cross p0r0-s00 but timed out: ")
                                 << r.ShortDebugString();
    crossing += over ? 1 : 0;
    timeouts += r.timeout() ? 1 : 0;
    if (over) crossing_tuples.insert(t);
    ++per_sequence[{r.src_nic(), r.sequence()}];
  }
  for (const auto& [key, count] : per_sequence) {
    EXPECT_EQ(count, 1) << "NIC " << key.first << " sequence " << key.second;
  }
  std::printf(
      "gray p0r0-s00: %zu results over %zu 5-tuples; %zu cross the link (%zu 5-tuples), %zu "
      "timed out\n",
      results.size(), tuples.size(), crossing, crossing_tuples.size(), timeouts);
  // A quarter of the probes cross it: nic0's half via s00, and half of those to nic0.
  EXPECT_GE(crossing, results.size() / 8);
  EXPECT_LE(crossing, results.size() / 2);
  EXPECT_GE(crossing_tuples.size(), 10U);
  for (const std::uint32_t rail : {0U, 1U, 2U, 3U}) {
    // Every NIC's probes cross it somewhere: nic0's on the way up, the others' to nic0.
    EXPECT_TRUE(std::any_of(crossing_tuples.begin(), crossing_tuples.end(),
                            [&](const FiveTuple& t) { return t.src_rail == rail; }))
        << "no crossing 5-tuple from rail " << rail;
  }

  // `fabric truth-path` agrees with the switches' batched answers (spot check:
  // one crossing and one other 5-tuple).
  const auto spot = [&](bool want) {
    for (const auto& [t, over] : *crosses) {
      if (over != want) continue;
      const auto truth = testbed::TruthPathCrosses(t, 0, "s00");
      ASSERT_TRUE(truth) << "truth-path " << t.src_ip << " " << t.dst_ip << " " << t.sport;
      EXPECT_EQ(*truth, want) << t.src_ip << " -> " << t.dst_ip << " sport " << t.sport;
      return;
    }
    ADD_FAILURE() << "no 5-tuple with crosses=" << want;
  };
  spot(true);
  spot(false);
}

}  // namespace
}  // namespace hostmesh::agent
