// The learned fabric to and from its stored form
// (hostmesh.v1.state.LearnedFabric). Pure: the store holds the bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "topology/learned_graph.h"

namespace hostmesh::analyzer::state {

std::string EncodeLearnedFabric(const topology::LearnedFabric& fabric);
// nullopt when the bytes do not parse or name an unknown tier.
std::optional<topology::LearnedFabric> DecodeLearnedFabric(std::string_view bytes);

}  // namespace hostmesh::analyzer::state
