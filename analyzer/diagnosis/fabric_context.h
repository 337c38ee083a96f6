#pragma once

// The fabric half of a DiagnosisContext, from the inventory: which NICs are
// cabled to each switch (by host and interface name), the link ends, and
// names for sentences. Built once per topology; the analyzer and the fleet
// simulator both use it, each with its own way to name hosts' agents.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/analysis/incidents.h"
#include "analyzer/diagnosis/incident_diagnosis.h"
#include "topology/topology.h"

namespace hostmesh::analyzer::diagnosis {

class FabricContext {
 public:
  explicit FabricContext(const topology::Topology& topology);

  // agent_of: the agent id of a host device name ("" when none reports);
  // nic_of: the agent and NIC of an analysis RNIC; host_name: an analysis
  // host's name for sentences.
  DiagnosisContext Context(
      std::function<std::string(const std::string&)> agent_of,
      std::function<std::optional<NicRef>(analysis::HostId, analysis::NicId)> nic_of,
      std::function<std::string(analysis::HostId)> host_name) const;

 private:
  const topology::Topology& topology_;
  std::vector<analysis::FabricMap::LinkEnds> links_;
  // By switch DeviceId: (host device name, interface name) of the NICs cabled to it.
  std::vector<std::vector<std::pair<std::string, std::string>>> switch_nics_;
};

}  // namespace hostmesh::analyzer::diagnosis
