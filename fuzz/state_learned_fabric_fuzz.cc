// The stored learned fabric (analyzer/state/learned_fabric_codec.h) as a
// restart reads it back, damaged or written by another version: decoded, then
// imported and built into a graph as AnalysisFeed::RestoreLearned does, and
// turned into what the analysis and the API take of it (FabricMapFrom,
// ViewOf). A fabric that imports must export to one that imports again to
// the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analyzer/analysis/topology_adapter.h"
#include "analyzer/feed/learned_topology.h"
#include "analyzer/feed/topology_view.h"
#include "analyzer/state/learned_fabric_codec.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/quiet_protobuf_target.h"

using namespace hostmesh;
using namespace hostmesh::analyzer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto fabric =
      state::DecodeLearnedFabric(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!fabric) return 0;
  app::LearnedTopology learned;
  std::string error;
  if (!learned.Import(*fabric, &error)) {
    FUZZ_CHECK(!error.empty());
    return 0;
  }
  if (const auto graph = learned.Refresh(1)) {
    const analysis::FabricMap map = analysis::FabricMapFrom(*graph);
    (void)map;
    (void)app::ViewOf(*graph, true);
  }
  const topology::LearnedFabric exported = learned.Export();
  const auto decoded = state::DecodeLearnedFabric(state::EncodeLearnedFabric(exported));
  FUZZ_CHECK(decoded && *decoded == exported);
  app::LearnedTopology again;
  FUZZ_CHECK(again.Import(exported, &error));
  FUZZ_CHECK(again.Export() == exported);
  return 0;
}
