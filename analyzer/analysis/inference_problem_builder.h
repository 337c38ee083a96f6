#pragma once

// A window's failures as an inference problem (loss_inference.h): every
// failure group (a NIC pair's probes of one traced path) with the components
// it crossed, the candidates of positions a trace left unknown weighted by
// their chance, and the ECMP groups of the pairs. Internal to the window judge.

#include "analyzer/analysis/component_index.h"
#include "analyzer/analysis/loss_inference.h"
#include "analyzer/analysis/path_table.h"
#include "analyzer/analysis/types.h"
#include "analyzer/analysis/window_accumulator.h"

namespace hostmesh::analysis {

// Fills `problem` with one kind of failure: timeouts (slow=false) or slow probes.
void BuildProblem(const WindowAccumulator& w, const PathTable& paths, const FabricMap& fabric,
                  const ComponentIndex& ix, const FailureGroups& groups, bool slow,
                  InferenceProblem* problem);

}  // namespace hostmesh::analysis
