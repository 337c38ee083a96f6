#pragma once

// The fabric half of a DiagnosisContext, from the inventory or the fabric
// learned from traceroutes (topology/learned_graph.h: its NIC links run from
// the host's NIC, named as in the Hello, to the rail switch's port): which
// NICs are cabled to each switch and which NIC ends each access link (by host
// and interface name), the link ends, and names for sentences. Built once per
// topology; the analyzer and the fleet simulator both use it, each with its
// own way to name hosts' agents.

#include <functional>
#include <memory>
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
  // `topology` must outlive the context.
  explicit FabricContext(const topology::Topology& topology);
  // Keeps the topology alive (a learned fabric is rebuilt as it grows).
  explicit FabricContext(std::shared_ptr<const topology::Topology> topology);

  // agent_of: the agent id of a host device name ("" when none reports);
  // nic_of: the agent and NIC of an analysis RNIC; host_name: an analysis
  // host's name for sentences.
  DiagnosisContext Context(
      std::function<std::string(const std::string&)> agent_of,
      std::function<std::optional<NicRef>(analysis::HostId, analysis::NicId)> nic_of,
      std::function<std::string(analysis::HostId)> host_name) const;

 private:
  using HostNic = std::pair<std::string, std::string>;  // (host device name, interface name)

  std::shared_ptr<const topology::Topology> owned_;  // null for an inventory
  const topology::Topology& topology_;
  std::vector<analysis::FabricMap::LinkEnds> links_;
  // By switch DeviceId: the NICs cabled to it.
  std::vector<std::vector<HostNic>> switch_nics_;
  // By LinkId: the NIC at the host end of a NIC access link.
  std::vector<std::optional<HostNic>> link_nics_;
};

}  // namespace hostmesh::analyzer::diagnosis
