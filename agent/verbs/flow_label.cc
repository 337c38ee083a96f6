#include "agent/verbs/flow_label.h"

namespace hostmesh::agent::verbs {

std::optional<std::uint32_t> FlowLabelForUdpSport(std::uint16_t sport) {
  if (sport < kRoceMinUdpSport) return std::nullopt;
  const std::uint32_t low = sport & 0x3FFFu;
  // Top bits 000001 flip the lowest port bit, so low bits 000..001 give 0xC000.
  if (low == 0) return (1u << 14) | 1u;
  return low;
}

}  // namespace hostmesh::agent::verbs
