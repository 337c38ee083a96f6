// /api/v1/incidents/{id} and /api/v1/incidents/{id}/evidence: one incident,
// and the evidence the analyzer froze for it (analyzer/evidence). The
// evidence is read from the store per request; names of links, switches and
// RNICs come from the current snapshot.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/api/api_snapshot.h"
#include "hostmesh/v1/evidence.pb.h"

namespace hostmesh::analyzer::api {

struct EvidenceAnswer {
  bool found = false;
  std::string error;  // the store failed
  v1::evidence::EvidenceHeader header;
  std::vector<v1::evidence::EvidencePart> parts;
  // The involved agents' flight recorders (agent id, record), and why some
  // could not be read.
  std::vector<std::pair<std::string, v1::FlightRecord>> flight_records;
  std::string flight_record_error;
};
using EvidenceSource = std::function<EvidenceAnswer(std::uint64_t incident_id)>;

// What follows "/api/v1/incidents/": "12" or "12/evidence"; nullopt when not
// one of those (or the id is not a positive decimal number).
struct IncidentPath {
  std::uint64_t id = 0;
  bool evidence = false;
};
std::optional<IncidentPath> ParseIncidentPath(std::string_view rest);

// The incident as the list shows it, with the URL of its evidence; nullopt
// when the snapshot does not hold it (resolved longer ago than it shows).
std::optional<std::string> RenderIncident(const ApiSnapshot& snapshot, std::uint64_t id);
std::string RenderEvidence(const ApiSnapshot& snapshot, const EvidenceAnswer& evidence);

}  // namespace hostmesh::analyzer::api
