// Which probe 5-tuples an incident's evidence follows: for each link or
// switch target, a uniform sample of the live 5-tuples whose known path
// crosses it, drawn in one pass over the path table for every target at once.
// Pure: reads the analysis's path table, owns nothing.
//
// The sample is bottom-k by a hash of the 5-tuple key: each target keeps the
// k crossing 5-tuples of smallest hash, so a target crossed by millions of
// 5-tuples costs k entries, and the same table gives the same sample.
#pragma once

#include <cstdint>
#include <span>
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
  std::uint64_t crossing = 0;        // live 5-tuples crossing the target
  bool capped() const { return crossing > tuples.size(); }
};

// One sample per target, in target order; RNIC and host targets get none
// (their probes are told by their NICs, not their paths). `limits[i]`: the
// sample size of target i.
std::vector<TargetSample> SampleTuples(const analysis::PathTable& paths,
                                       const analysis::FabricMap& fabric,
                                       std::span<const Target> targets,
                                       std::span<const std::uint32_t> limits);

}  // namespace hostmesh::analyzer::evidence
