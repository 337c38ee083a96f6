// Window summaries and incidents to and from their stored form
// (hostmesh/v1/analyzer_state.proto). Pure: the store holds the bytes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/analysis/incidents.h"
#include "analyzer/analysis/window_report.h"
#include "hostmesh/v1/analyzer_state.pb.h"

namespace hostmesh::analyzer::state {

// The agent id of a dense host id ("" when unknown): summaries name hosts by
// both, so they stay readable whatever happens to the id table.
using AgentOf = std::function<std::string(analysis::HostId)>;

v1::state::WindowSummary SummaryOf(const analysis::WindowReport& report, const AgentOf& agent_of);
std::string EncodeWindowSummary(const analysis::WindowReport& report, const AgentOf& agent_of);
// nullopt when the bytes do not parse.
std::optional<v1::state::WindowSummary> DecodeWindowSummary(std::string_view bytes);

// A stored SLA row as the analysis had it (drop rates recomputed).
analysis::SlaRow SlaRowOf(const v1::state::SlaRow& row);

std::string EncodeIncident(const analysis::Incident& incident);
// nullopt when the bytes do not parse or name an unknown incident kind.
std::optional<analysis::Incident> DecodeIncident(std::string_view bytes);

}  // namespace hostmesh::analyzer::state
