#pragma once

// An operator's capture of the flight recorder (SIGUSR2): the record as JSON
// lines, one event per line (fields in docs/agent.md#flight-recorder), in
// <dir>/flight-<UTC time>.jsonl, written whole or not at all (a temporary
// file renamed into place), keeping at most `keep` such files.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "common/base/clock.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::agent::recorder {

// One event as a JSON object (no newline).
std::string FlightEventJson(const v1::FlightEvent& event);

// "flight-20240101T000000.123Z.jsonl" for `at`: names sort by time.
std::string CaptureFileName(WallTime at);

// Writes `record` to `dir` (created if missing) and removes the oldest
// capture files beyond `keep`. The file's path, or nullopt with `error` set.
std::optional<std::filesystem::path> WriteLocalCapture(const v1::FlightRecord& record,
                                                       const std::filesystem::path& dir,
                                                       WallTime at, std::size_t keep,
                                                       std::string* error);

}  // namespace hostmesh::agent::recorder
