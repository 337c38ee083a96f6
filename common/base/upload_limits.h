#pragma once

// What one upload batch may hold: the analyzer refuses more (batch_validator.h)
// and the agent's config cannot ask for more (upload.batch_max_results), so an
// agent never builds a batch the analyzer would throw away.

#include <cstddef>

namespace hostmesh {

inline constexpr std::size_t kMaxResultsPerBatch = 20'000;
inline constexpr std::size_t kMaxPathsPerBatch = 20'000;
// 20,000 results of about 120 bytes and a fresh start's path reports fit
// well under it.
inline constexpr std::size_t kMaxBatchBytes = std::size_t{8} << 20;

// Flight records (ingest.proto FlightRecord): a record carries at most a
// ring's worth (the agent's default 1 MiB ring holds about 40,000 events),
// and a batch at most a few of them, well under kMaxBatchBytes.
inline constexpr std::size_t kMaxFlightRecordsPerBatch = 2;
inline constexpr std::size_t kMaxFlightEventsPerRecord = 50'000;
inline constexpr std::size_t kMaxFlightRecordBytes = std::size_t{2} << 20;
inline constexpr std::size_t kMaxFlightTextBytes = 512;
// The cause text of a batch's load-shedding state (ingest.proto LoadShedding).
inline constexpr std::size_t kMaxSheddingCauseBytes = 128;
inline constexpr std::size_t kMaxSheddingSignalBytes = 32;
// Capture requests one ack may carry.
inline constexpr std::size_t kMaxCapturesPerAck = 16;

}  // namespace hostmesh
