// The analyzer's diagnosis step on a real store (RocksDB in a temp dir): it
// reads the NIC telemetry of the hosts the open incidents involve, no more
// than its cap per window (counted), and without an inventory it takes the
// fabric context from the learned fabric.
#include "analyzer/feed/diagnosis_step.h"

#include <gtest/gtest.h>

#include <memory>

#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"

namespace hostmesh::analyzer::app {
namespace {

using analysis::Component;
using analysis::IncidentKind;
using testing::MakeBatch;
using testing::MakeHello;
using testing::TempDir;

constexpr std::int64_t kS = 1'000'000'000;
constexpr int kAgents = 4;

class DiagnosisStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    store::StoreOptions options;
    options.data_dir = dir_.path() / "db";
    store_ = store::Store::Open(clock_, options, error);
    ASSERT_TRUE(store_) << error;
    start_ns_ = clock_.RealtimeNow().time_since_epoch().count() / (10 * kS) * (10 * kS);
    for (int h = 0; h < kAgents; ++h) {
      const std::string agent = "a" + std::to_string(h);
      ASSERT_TRUE(store_->PutHello(MakeHello(agent, 7, 2)).ok());
      // nic1 of every agent counts symbol errors in the window.
      v1::UploadBatch batch = MakeBatch(agent, 7, 1, 0, clock_.RealtimeNow());
      v1::NicTelemetry* t = batch.add_telemetry();
      t->set_nic(1);
      t->set_start_ns(start_ns_);
      t->set_end_ns(start_ns_ + 10 * kS);
      t->set_port_state(4);
      v1::CounterDelta* d = t->add_deltas();
      d->set_counter(v1::NIC_COUNTER_SYMBOL_ERROR);
      d->set_delta(900);
      ASSERT_EQ(store_->Commit(store::Store::Prepare(batch)).status, store::CommitStatus::kStored);
      hosts_.push_back({agent, "host" + std::to_string(h), {{"nic0", "", 0}, {"nic1", "", 1}}});
    }
    report_.start_ns = start_ns_;
    report_.end_ns = start_ns_ + 20 * kS;
  }

  // Hosts 0..n-1 each lose probes on nic1: an open lossy-RNIC incident each.
  void LossyRnics(int n) {
    std::vector<analysis::Incident> open;
    for (int h = 0; h < n; ++h) {
      const Component rnic{Component::Kind::kRnic, analysis::kUnknown,
                           static_cast<analysis::HostId>(h), 1};
      analysis::Suspect s;
      s.component = rnic;
      s.failures = 20;
      s.good = 380;
      report_.loss.culprits.push_back(s);
      analysis::Incident inc;
      inc.id = static_cast<std::uint64_t>(h) + 1;
      inc.kind = IncidentKind::kRnicLossy;
      inc.suspect = rnic;
      inc.evidence.last_seen_ns = report_.end_ns;
      open.push_back(inc);
    }
    incidents_.Restore(std::move(open), static_cast<std::uint64_t>(n) + 1);
  }

  std::string TypeOf(std::uint64_t id) const { return incidents_.Find(id)->diagnosis.type; }

  TempDir dir_;
  VirtualClock clock_;
  std::unique_ptr<store::Store> store_;
  std::int64_t start_ns_ = 0;
  std::vector<api::HostInfo> hosts_;
  analysis::WindowReport report_;
  analysis::IncidentTracker incidents_;
};

TEST_F(DiagnosisStepTest, ReadsTheInvolvedHostsTelemetry) {
  LossyRnics(2);
  DiagnosisStep step(*store_, nullptr);
  step.Run(report_, hosts_, incidents_);
  EXPECT_EQ(TypeOf(1), "corruption") << incidents_.Find(1)->diagnosis.evidence;
  EXPECT_EQ(TypeOf(2), "corruption");
  EXPECT_EQ(step.telemetry_hosts_capped(), 0u);
  EXPECT_EQ(step.telemetry_errors(), 0u);
}

TEST_F(DiagnosisStepTest, PastTheCapTheOtherHostsAreLeftOutAndCounted) {
  LossyRnics(3);
  DiagnosisStep step(*store_, nullptr, /*max_telemetry_hosts=*/2);
  step.Run(report_, hosts_, incidents_);
  EXPECT_EQ(TypeOf(1), "corruption");
  EXPECT_EQ(TypeOf(2), "corruption");
  EXPECT_EQ(TypeOf(3), "unclassified") << "host 2's counters were not read";
  EXPECT_EQ(step.telemetry_hosts_capped(), 1u);
  step.Run(report_, hosts_, incidents_);
  EXPECT_EQ(step.telemetry_hosts_capped(), 2u) << "counted in every capped window";
}

TEST_F(DiagnosisStepTest, WithoutAnInventoryTheLearnedFabricGivesTheContext) {
  LossyRnics(1);
  DiagnosisStep step(*store_, nullptr);
  step.Run(report_, hosts_, incidents_);
  EXPECT_FALSE(step.has_fabric_context()) << "nothing learned yet";
  topology::TopologyBuilder b;
  b.AddDevice({.name = "host0", .tier = topology::Tier::kHost});
  auto learned = std::make_shared<const topology::Topology>(std::move(b).Finish());
  step.Run(report_, hosts_, incidents_, learned);
  EXPECT_TRUE(step.has_fabric_context());
  EXPECT_EQ(TypeOf(1), "corruption");
}

}  // namespace
}  // namespace hostmesh::analyzer::app
