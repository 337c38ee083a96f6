#pragma once

// What the analysis consumes: plain structs, filled by ingest from the wire
// (hostmesh.v1.ProbeResult / PathReport) after it has mapped agent ids to dense
// HostIds and hop addresses to link ids (topology::PathResolver).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace hostmesh::analysis {

// Dense, assigned by ingest (agent id -> index); the analysis never sees names.
using HostId = std::uint32_t;
// A NIC of one host: hostmesh.v1.Nic.id (its index in the agent's NIC list).
using NicId = std::uint32_t;
// topology::LinkId: an index into the fabric's links.
using LinkId = std::uint32_t;
using SwitchId = std::uint32_t;
inline constexpr std::uint32_t kUnknown = std::numeric_limits<std::uint32_t>::max();

// NICs per host the analysis accepts (nic ids 0..kMaxNics-1); more is rejected.
inline constexpr NicId kMaxNics = 32;

// One probe's outcome (hostmesh.v1.ProbeResult). Timestamps are host realtime
// ns, 0 when unknown; send_time_ns is the event time that places it in a window.
struct ProbeRecord {
  HostId host = 0;
  NicId src_nic = 0;
  NicId dst_nic = 0;
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  std::uint64_t sequence = 0;
  std::int64_t send_time_ns = 0;
  std::int64_t t1_app_send_ns = 0;
  std::int64_t t2_nic_send_ns = 0;
  std::int64_t t3_nic_recv_ns = 0;
  std::int64_t t4_app_recv_ns = 0;
  bool timeout = false;
  // Never left the sending NIC (hostmesh.v1.ProbeResult.send_failed): not
  // network evidence, counted and kept out of the windows.
  bool send_failed = false;
};

// A link an ambiguous position of a path may be: one of several ECMP choices
// left open by a trace a gray link cut short (every way on from its last
// answer). A trace that reached its destination lists none: its silent hops
// are rate-limited switches, not gray ones.
struct PathCandidate {
  std::uint32_t position = 0;  // index into PathRecord::links
  LinkId link = kUnknown;
};

// The path one probe 5-tuple took (a resolved hostmesh.v1.PathReport): links
// from the source NIC's link to the destination NIC's link, in order; kUnknown
// where a silent hop left a position ambiguous, with the links that position
// may be in `candidates` (none when the resolver could not list them). A path
// stands for its 5-tuple until a newer report replaces it.
struct PathRecord {
  HostId host = 0;
  NicId src_nic = 0;
  NicId dst_nic = 0;
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  std::int64_t time_ns = 0;
  std::vector<LinkId> links{};
  std::vector<PathCandidate> candidates{};  // by position
};

// What the analysis needs of the fabric; topology_adapter.h fills it from a
// topology::Topology. Everything is optional: without it links are still ranked,
// but switches are not, and links no probe crossed cannot be listed.
struct FabricMap {
  struct LinkEnds {
    SwitchId lower = kUnknown;  // kUnknown for a host end
    SwitchId upper = kUnknown;
  };
  std::vector<LinkEnds> links{};  // indexed by LinkId
  std::size_t switch_count = 0;
  // rails[host][nic]: the rail of a NIC; a NIC not listed is on rail = nic id.
  std::vector<std::vector<int>> rails{};
};

// The rail of a host's NIC from the fabric map (its index where unknown).
inline int RailOf(const FabricMap& fabric, HostId host, NicId nic) {
  if (host < fabric.rails.size() && nic < fabric.rails[host].size()) {
    return fabric.rails[host][nic];
  }
  return static_cast<int>(nic);
}

// The same, within the rails a window counts (0 .. kMaxNics-1).
inline std::uint32_t ClampedRailOf(const FabricMap& fabric, HostId host, NicId nic) {
  return static_cast<std::uint32_t>(
      std::clamp(RailOf(fabric, host, nic), 0, static_cast<int>(kMaxNics) - 1));
}

}  // namespace hostmesh::analysis
