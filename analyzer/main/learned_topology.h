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
#include "hostmesh/v1/ingest.pb.h"
#include "topology/learned_graph.h"

namespace hostmesh::analyzer::app {

class LearnedTopology {
 public:
  enum class Outcome : std::uint8_t {
    kResolved,
    kUnresolved,  // bad addresses, or a trace that breaks the addressing
    // Cut short with more than one way on: the 5-tuple's previous path (from
    // before a gray link ate its trace) says more, so it stands.
    kCutShort,
  };

  // From the stored state of a previous run; false with *error otherwise.
  bool Import(const topology::LearnedFabric& state, std::string* error);
  topology::LearnedFabric Export() const { return learner_.Export(); }

  // The host's NICs, names and rails from its agent's Hello.
  void AddHello(std::string_view host, const v1::AgentHello& hello);
  // Learns from one report of `host` and resolves it into `out`.
  Outcome Convert(analysis::HostId host, std::string_view host_name, const v1::PathReport& report,
                  analysis::PathRecord& out);

  // The graph rebuilt when learning (or Import) changed it since the last
  // call; null otherwise.
  std::shared_ptr<const topology::Topology> Refresh();

  std::uint64_t version() const { return learner_.version(); }
  const topology::LearnerStats& stats() const { return learner_.stats(); }
  std::size_t link_count() const { return learner_.link_count(); }

 private:
  void Build();

  topology::FabricLearner learner_;
  std::shared_ptr<const topology::Topology> graph_;  // the last build: fills silent hops
  std::uint64_t built_version_ = 0;
  std::uint64_t handed_version_ = 0;  // of the last graph Refresh returned
  topology::ResolvedPath scratch_;
};

}  // namespace hostmesh::analyzer::app
