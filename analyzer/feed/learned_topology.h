// Without an inventory: the fabric learned from the path reports as they
// arrive (topology/learned_graph.h), each report resolved on it, and the graph
// rebuilt for the analysis and the API when learning changed it. Not
// thread-safe: the feed holds it under its lock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "analyzer/analysis/types.h"
#include "analyzer/feed/feed_convert.h"
#include "hostmesh/v1/ingest.pb.h"
#include "topology/learned_graph.h"

namespace hostmesh::analyzer::app {

class LearnedTopology {
 public:
  // From the stored state of a previous run; false with *error otherwise.
  bool Import(const topology::LearnedFabric& state, std::string* error);
  topology::LearnedFabric Export() const { return learner_.Export(); }

  // The host's NICs, names and rails from its agent's Hello.
  void AddHello(std::string_view host, const v1::AgentHello& hello);
  // Learns from one report of `host` and resolves it into `out`, with the
  // outcomes of ToPathRecord (feed_convert.h): kUnresolved for bad addresses
  // or a trace that breaks the addressing.
  PathConversion Convert(analysis::HostId host, std::string_view host_name,
                         const v1::PathReport& report, analysis::PathRecord& out);

  // The graph rebuilt when learning (or Import) changed it since the last
  // call; null otherwise. While a fabric is being learned it changes all the
  // time, and a build costs about 2 us per link (70 ms at 33k links, under
  // the feed's lock), so after a build the next waits kRebuildPerLink per
  // link, at least a second: the analysis and the API trail by that much,
  // the resolution of reports does not (it uses the learner itself, and the
  // last build only to fill silent hops).
  std::shared_ptr<const topology::Topology> Refresh(std::int64_t now_ns);
  static constexpr std::int64_t kMinRebuildInterval = 1'000'000'000;
  static constexpr std::int64_t kRebuildPerLink = 250'000;

  std::uint64_t version() const { return learner_.version(); }
  const topology::LearnerStats& stats() const { return learner_.stats(); }
  std::size_t link_count() const { return learner_.link_count(); }

 private:
  void Build();

  topology::FabricLearner learner_;
  std::shared_ptr<const topology::Topology> graph_;  // the last build: fills silent hops
  std::uint64_t built_version_ = 0;
  std::uint64_t handed_version_ = 0;  // of the last graph Refresh returned
  std::int64_t next_build_ns_ = 0;    // Refresh builds again from then on
  topology::ResolvedPath scratch_;
};

}  // namespace hostmesh::analyzer::app
