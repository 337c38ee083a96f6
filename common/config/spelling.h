#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hostmesh::config {

// Edits (insert, delete, substitute, swap two neighbours) that turn a into b.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate close enough to `word` to be what the operator meant, for a
// "did you mean" hint: at most one edit per three characters (at least one).
std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates);

}  // namespace hostmesh::config
