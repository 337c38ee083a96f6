// JSON bodies of the /api/v1/ endpoints, from a snapshot. Pure functions:
// tested on hand-built snapshots, field by field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/api/api_snapshot.h"
#include "analyzer/api/render_telemetry.h"

namespace hostmesh::analyzer::api {

// Which localization /api/v1/links ranks: timeouts, or slow probes (latency
// hotspots: probes over the window's slow threshold).
enum class LinkRanking { kLoss, kLatency };

std::string RenderStatus(const ApiSnapshot& snapshot, std::int64_t now_ns);
// `window_telemetry`: the NICs' counter deltas over the report's window
// (WindowTelemetryQuery), written beside each RNIC's verdict; null when the
// analyzer keeps no telemetry.
std::string RenderRnics(const ApiSnapshot& snapshot,
                        const TelemetryAnswer* window_telemetry = nullptr);
// The telemetry query RenderRnics reads: every NIC over the report's window
// (what diagnosis read of it). Nullopt before a window is judged.
std::optional<TelemetryQuery> WindowTelemetryQuery(const ApiSnapshot& snapshot);
// `suspicious_only`: just the links the better method blamed.
std::string RenderLinks(const ApiSnapshot& snapshot, bool suspicious_only,
                        LinkRanking ranking = LinkRanking::kLoss);
// Switches of the loss localization: the better method's order (links it
// blamed per switch, those links as evidence), paper votes and rank beside.
// `suspicious_only`: just the switches with two or more blamed links.
std::string RenderSwitches(const ApiSnapshot& snapshot, bool suspicious_only);
// Links crossed and never crossed by a traced probe in the latest window.
std::string RenderCoverage(const ApiSnapshot& snapshot);
// The fabric: the loaded inventory's or the learned one's devices and links,
// and which ("source"). Callers answer 404 (RenderError) when there is none.
std::string RenderTopology(const ApiSnapshot& snapshot);
// Where traced paths contradict the inventory: confirmed places, and every
// disagreeing trace counted by kind.
std::string RenderDisagreements(const ApiSnapshot& snapshot);
// {"error":"..."} for 4xx answers.
std::string RenderError(std::string_view message);
std::string RenderIncidents(const ApiSnapshot& snapshot);
std::string RenderSla(const ApiSnapshot& snapshot);

std::string_view RnicStateName(analysis::RnicState state);  // "ok", "lossy", "down"

}  // namespace hostmesh::analyzer::api
