#pragma once

// NicDelta -> hostmesh.v1.NicTelemetry, the per-NIC counter deltas the agent
// uploads in its batches.

#include <cstdint>

#include "agent/telemetry/nic_reading.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::agent::telemetry {

v1::NicCounter ToProto(NicCounter counter);
v1::NicTelemetry ToProto(std::uint32_t nic_id, const NicDelta& delta);

}  // namespace hostmesh::agent::telemetry
