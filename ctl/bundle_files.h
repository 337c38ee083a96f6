// What `hostmeshctl bundle` writes for one incident: its evidence as JSON and
// as CSV tables (probes, paths, verdicts, counters), the flight-recorder
// extracts of the agents involved, the analyzer's version and config with
// secrets left out, and a README saying what each file holds. Pure: from the
// API's answers to (name, contents) pairs; tested on fixture JSON.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ctl/json_reader.h"

namespace hostmesh::ctl {

struct BundleInputs {
  std::string incident;  // /api/v1/incidents/ID as served ("" when not among the recent ones)
  std::string evidence;  // /api/v1/incidents/ID/evidence as served
  std::string config;    // /api/v1/config as served ("" from an analyzer without it)
  std::string analyzer;  // the address it was read from
  std::int64_t made_ns = 0;
};

struct BundleFile {
  std::string name;  // relative, under the bundle's folder
  std::string contents;
};

// Nullopt with *error when `evidence` is not the API's evidence JSON.
std::optional<std::vector<BundleFile>> MakeBundle(std::uint64_t incident_id, const BundleInputs& in,
                                                  std::string* error);

// One CSV field: quoted when it holds a comma, a quote or a line break.
std::string CsvField(const std::string& text);

}  // namespace hostmesh::ctl
