// Which probe 5-tuples an incident's evidence follows: for each link or
// switch target, a uniform sample of the live 5-tuples whose known path
// crosses it. Pure: reads the analysis's path table, owns nothing of it.
//
// The sample is bottom-k by a hash of the 5-tuple key: each target keeps the
// k crossing 5-tuples of smallest hash, so a target crossed by millions of
// 5-tuples costs k entries, and the same table gives the same sample.
//
// The table is read in slices (Step), so that a fleet's millions of
// 5-tuples never hold the analyzer's loop for long: a request is complete
// once the slices since it was added cover the table once. Requests added
// while a pass is under way join it and wrap around. Between slices the
// table may age out, add or move 5-tuples (a rehash): a pass then misses or
// repeats a few, which a sample can bear (repeats are dropped).
#pragma once

#include <cstdint>
#include <queue>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/analysis/path_table.h"
#include "analyzer/analysis/types.h"
#include "analyzer/evidence/evidence_targets.h"

namespace hostmesh::analyzer::evidence {

struct SampledTuple {
  std::uint64_t key = 0;                // PathTable::Key
  std::vector<analysis::LinkId> links;  // NIC link to NIC link (kUnknown where ambiguous)
};

struct TargetSample {
  std::vector<SampledTuple> tuples;  // by hash
  std::uint64_t crossing = 0;        // live 5-tuples seen crossing the target
  bool capped() const { return crossing > tuples.size(); }
};

class TupleSampler {
 public:
  struct Done {
    std::uint64_t owner = 0;
    std::vector<TargetSample> samples;  // parallel to the request's targets
  };

  // Samples `targets` for `owner` (an incident), `limits[i]` 5-tuples for
  // target i; RNIC and host targets get none (their probes are told by
  // their NICs, not their paths).
  void Add(std::uint64_t owner, std::vector<Target> targets, std::vector<std::uint32_t> limits);
  // Reads up to `slots` slots of the table; the requests whose pass is complete.
  std::vector<Done> Step(const analysis::PathTable& paths, const analysis::FabricMap& fabric,
                         std::size_t slots);
  bool idle() const { return requests_.empty(); }

 private:
  using HashedKey = std::pair<std::uint64_t, std::uint64_t>;  // (hash, 5-tuple key)
  struct Request {
    std::uint64_t owner = 0;
    std::vector<Target> targets;
    std::vector<std::uint32_t> limits;
    std::size_t remaining = 0;  // slots still to read; set at its first Step
    bool started = false;
    std::vector<std::priority_queue<HashedKey>> heaps;  // per target: its k smallest
    std::vector<std::uint64_t> crossing;
  };
  // The bits: one per (request, target) sampled by path.
  void Index(const analysis::FabricMap& fabric);
  const std::uint64_t* RowOf(const analysis::PathTable& paths, const analysis::FabricMap& fabric,
                             analysis::MiddleId middle);
  void Visit(const analysis::PathTable& paths, const analysis::FabricMap& fabric, std::uint64_t key,
             analysis::MiddleId middle);
  static std::vector<SampledTuple> Drain(const analysis::PathTable& paths,
                                         std::priority_queue<HashedKey>& heap);

  std::vector<Request> requests_;
  std::size_t cursor_ = 0;
  // The index, rebuilt when requests come or go.
  bool indexed_ = false;
  std::vector<std::pair<std::size_t, std::size_t>> bits_;  // bit -> (request, target)
  std::size_t words_ = 0;
  // The NIC links a target touches, and their bits.
  std::unordered_map<analysis::LinkId, std::vector<std::uint64_t>> nic_links_;
  // Per fabric part, its row of bits (row + 1; 0: not worked out), valid
  // while the table frees no part (whose id could then name another path).
  std::vector<std::uint32_t> row_of_;
  std::vector<std::uint64_t> rows_;
  std::uint64_t freed_seen_ = 0;
  std::vector<std::uint64_t> scratch_;
};

// One whole pass for `targets` at once (tests, tools).
std::vector<TargetSample> SampleTuples(const analysis::PathTable& paths,
                                       const analysis::FabricMap& fabric,
                                       std::span<const Target> targets,
                                       std::span<const std::uint32_t> limits);

}  // namespace hostmesh::analyzer::evidence
