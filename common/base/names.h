// Names that travel: host names, agent ids and NIC names end up in metric
// labels, store keys, file names and on-call pages. One rule for the agent's
// config and the analyzer's ingest: 1 to kMaxNameBytes printable ASCII
// characters, no spaces. Never truncated: a name over the limit is refused,
// since a truncated one could be another agent's.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace hostmesh {

inline constexpr std::size_t kMaxNameBytes = 253;  // a DNS name's limit

// nullopt when `value` is a good name of at most `max_bytes`; else why not,
// without the field's name (the caller says which field). A hostile value is
// quoted only in part.
std::optional<std::string> CheckName(std::string_view value, std::size_t max_bytes = kMaxNameBytes);

}  // namespace hostmesh
