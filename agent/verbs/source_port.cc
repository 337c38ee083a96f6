#include "agent/verbs/source_port.h"

namespace hostmesh::agent::verbs {

std::string_view SourcePortModeName(SourcePortMode mode) {
  return mode == SourcePortMode::kPerQp ? "qp" : "flow_label";
}

SourcePortMode SourcePortModeForVendor(std::uint32_t vendor_id) {
  return vendor_id == kRxeVendorId ? SourcePortMode::kPerQp : SourcePortMode::kFlowLabel;
}

}  // namespace hostmesh::agent::verbs
