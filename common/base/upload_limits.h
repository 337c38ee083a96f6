#pragma once

// What one upload batch may hold: the analyzer refuses more (batch_validator.h)
// and the agent's config cannot ask for more (upload.batch_max_results), so an
// agent never builds a batch the analyzer would throw away.

#include <cstddef>

namespace hostmesh {

inline constexpr std::size_t kMaxResultsPerBatch = 20'000;
inline constexpr std::size_t kMaxPathsPerBatch = 20'000;
// 20,000 results of about 120 bytes and a fresh start's path reports fit
// well under it.
inline constexpr std::size_t kMaxBatchBytes = std::size_t{8} << 20;

}  // namespace hostmesh
