// Durable batches into the analysis. Ingest calls OnBatch on its committer
// thread, which converts the batch (host id, resolved paths) and queues it;
// the analyzer loop calls Advance once a second, which applies the queue to
// the Analysis and judges the windows due. The committer never waits for a
// judgement (closing a large window takes a quarter of a second, and store
// writes, hence agents' acks, would wait that long).
//
// Hosts get dense ids in the order agents first upload; NIC names, IPs and
// rails come from the agent's Hello, which ingest hands over with the batch
// (a replay at start reads it from the store, once per boot).
// Path reports become link lists through the topology's PathResolver when an
// inventory is loaded; those its answers contradict are kept in a
// DisagreementBook (logged once per place). Without an inventory the fabric is
// learned from the reports as they arrive (LearnedTopology) and they resolve
// on it; the analysis is given the learned links and switches, which grow, at
// each Advance.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/analysis/analysis.h"
#include "analyzer/api/api_snapshot.h"
#include "analyzer/diagnosis/send_failures.h"
#include "analyzer/feed/disagreement_book.h"
#include "analyzer/feed/feed_convert.h"
#include "analyzer/feed/learned_topology.h"
#include "analyzer/ingest/ingest_sink.h"
#include "analyzer/store/store.h"
#include "topology/path_resolver.h"
#include "topology/topology.h"

namespace hostmesh::analyzer::app {

struct FeedStats {
  std::uint64_t batches = 0;
  std::uint64_t paths_resolved = 0;
  std::uint64_t paths_unresolved = 0;  // bad addresses or hops the graph contradicts
  // Cut short (a gray link ate the rest) with several ways on: the previous path stands.
  std::uint64_t paths_cut_short = 0;
  // Cut short and continued by the one shortest way on (also in paths_resolved).
  std::uint64_t paths_continued = 0;
  std::uint64_t paths_disagreeing = 0;   // inventory: traces whose answers contradict it
  std::uint64_t no_hello = 0;            // replayed item of an (agent, boot) whose Hello is gone
  std::uint64_t index_write_errors = 0;  // a new host id not stored (warned)
  std::uint64_t queue_dropped = 0;       // results not analysed: the queue was full (warned)
  // Send failures the diagnosis did not get: of RNICs past the tally's cap (warned).
  std::uint64_t send_failures_untallied = 0;
};

class AnalysisFeed final : public ingest::IngestSink {
 public:
  // Results queued for the analysis beyond this many are dropped from it
  // (they stay in the store): the loop has stalled for seconds.
  static constexpr std::size_t kMaxQueuedResults = std::size_t{4} << 20;

  // `topology` may be null (no inventory: the fabric is learned); otherwise it
  // must outlive the feed.
  AnalysisFeed(store::Store& store, analysis::AnalysisConfig config,
               const topology::Topology* topology,
               std::size_t max_queued_results = kMaxQueuedResults);

  void OnBatch(const v1::UploadBatch& batch, const v1::AgentHello& hello) override;

  // Restart without an inventory: the fabric the previous run learned, before
  // anything is replayed. False with *error when it does not hold together.
  bool RestoreLearned(const topology::LearnedFabric& state, std::string* error);
  // Restart: the host ids of the previous run (from the store), then what was
  // durable but not yet judged, paths before results. Call before ingest starts.
  void RestoreHosts(const std::vector<std::pair<std::string, std::uint32_t>>& index);
  void ResumeAfter(std::int64_t end_ns);
  void ReplayPath(std::string_view agent_id, std::uint64_t boot_id, const v1::PathReport& path);
  void ReplayResult(std::string_view agent_id, std::uint64_t boot_id,
                    const v1::ProbeResult& result);

  // Judges the windows due at now_ns (wall clock).
  std::vector<analysis::WindowReport> Advance(std::int64_t now_ns);
  // The probes RNICs could not send in the window starting at window_start_ns
  // (for the diagnosis: the analysis keeps them out of loss); that window and
  // earlier ones are then forgotten.
  diagnosis::SendFailures TakeSendFailures(std::int64_t window_start_ns);

  // Shared and immutable: rebuilt only after an agent joined or rebooted.
  std::shared_ptr<const std::vector<api::HostInfo>> Hosts() const;
  // The agent id of a host id, "" when unknown.
  std::string AgentOf(analysis::HostId host) const;

  // Without an inventory: the learned fabric as the API shows it (null until
  // the first Advance), and its version.
  std::shared_ptr<const api::InventoryView> LearnedView(std::uint64_t* version) const;
  // Without an inventory: the learned fabric the analysis judges on (null
  // until the first Advance that learned something): its ids are the reports'.
  std::shared_ptr<const topology::Topology> LearnedGraph() const;
  // The learned fabric and its version when that is not `stored_version`
  // (nullopt with an inventory, or unchanged): for the store.
  std::optional<std::pair<std::uint64_t, topology::LearnedFabric>> LearnedChangedSince(
      std::uint64_t stored_version) const;
  topology::LearnerStats learner_stats() const;
  // With an inventory: where traces contradict it.
  std::shared_ptr<const std::vector<api::TopologyDisagreement>> Disagreements() const;
  std::array<std::uint64_t, topology::kDisagreementKinds> DisagreeingTraces() const;

  // Applies what is queued first (like Advance, on the loop's thread).
  analysis::AnalysisStats analysis_stats();
  // Calls f(const analysis::Analysis&) under the analysis's lock, for what
  // reads it beside the judgement (the evidence keeper's path table pass).
  template <typename F>
  auto WithAnalysis(F&& f) {
    std::lock_guard lock(analysis_mu_);
    return f(static_cast<const analysis::Analysis&>(analysis_));
  }
  FeedStats stats() const;

 private:
  // Converted by ingest, applied by the loop; swapped, so both keep capacity.
  struct Queue {
    std::vector<std::pair<analysis::HostId, std::vector<int>>> rails;
    std::vector<analysis::PathRecord> paths;
    std::vector<analysis::ProbeRecord> results;
    // Agents' load-shedding states (UploadBatch.load_shedding), not replayed
    // at restart: the next live batch says it again.
    struct Shedding {
      analysis::HostId host;
      std::int64_t at_ns;
      double fraction;
      std::int64_t since_ns;
      std::string cause;
      bool cpu;
    };
    std::vector<Shedding> shedding;
  };
  // Under analysis_mu_: moves the queue into the analysis; at `now_ns` (0:
  // not now) also the learned fabric, if it changed and is due.
  void Drain(std::int64_t now_ns = 0);

  // Dense id of the agent, its NIC table refreshed from the Hello of a new
  // boot: `hello`, or when null (a replay) the one in the store.
  analysis::HostId HostFor(std::string_view agent_id, std::uint64_t boot_id,
                           const v1::AgentHello* hello);
  // The host's name, NICs and rails from its (new boot's) Hello.
  void TakeHello(analysis::HostId id, const v1::AgentHello& hello);
  void AddPath(analysis::HostId host, const v1::PathReport& report);
  // An unresolved report: what its answers say the inventory has wrong.
  void CheckAgainstInventory(analysis::HostId host, const v1::PathReport& report,
                             const ParsedTrace& parsed);
  // A resolved one, while some place is in doubt: where it agrees.
  void VouchForInventory(const ParsedTrace& parsed);
  void AddResult(analysis::HostId host, const v1::ProbeResult& result);
  // Under analysis_mu_: warns (at most once a minute) naming the agents whose
  // path reports met max_paths_per_host since the last warning.
  void WarnOfCrowdedHosts(std::int64_t now_ns);

  store::Store& store_;
  const topology::Topology* const topology_;
  const std::size_t max_queued_results_;
  std::optional<topology::PathResolver> resolver_;  // with an inventory

  // Lock order: analysis_mu_, then mu_.
  std::mutex analysis_mu_;  // the Analysis and applying_
  analysis::Analysis analysis_;
  Queue applying_;
  std::uint64_t crowded_refusals_warned_ = 0;
  std::int64_t crowded_warned_ns_ = 0;

  mutable std::mutex mu_;  // everything below
  Queue queue_;
  bool warned_full_ = false;
  std::unordered_map<std::string, analysis::HostId> host_ids_;  // by agent id
  std::vector<api::HostInfo> hosts_;                            // by HostId
  std::vector<std::uint64_t> boots_;                            // by HostId: Hello read for
  // By HostId: the load-shedding state (fraction, since) last queued.
  std::vector<std::pair<double, std::int64_t>> last_shedding_;
  mutable std::shared_ptr<const std::vector<api::HostInfo>> hosts_shared_;  // null: stale
  topology::ResolvedPath scratch_;
  FeedStats stats_;
  std::optional<LearnedTopology> learned_;  // without an inventory
  std::shared_ptr<const api::InventoryView> learned_view_;
  std::shared_ptr<const topology::Topology> learned_graph_;  // of learned_view_
  std::uint64_t learned_view_version_ = 0;
  DisagreementBook disagreements_;  // with one
  bool warned_places_full_ = false;
  diagnosis::SendFailureTally send_failures_;
  bool warned_send_failures_ = false;
};

}  // namespace hostmesh::analyzer::app
