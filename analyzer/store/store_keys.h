// Key layout of the analyzer's RocksDB store. Integers are big-endian so that
// bytewise key order is numeric order; times are int64 ns since the Unix epoch
// with the sign bit flipped, so negative times still sort first.
//
//   column family   key                                              value
//   raw_results     bucket(8) agent_len(2) agent boot(8) batch_seq(8) delimited ProbeResults
//   path_reports    bucket(8) agent_len(2) agent boot(8) batch_seq(8) delimited PathReports
//   ledger          agent_len(2) agent boot(8) batch_seq(8)          stored_at(8) results(4)
//   paths(4) hellos          agent_len(2) agent boot(8)                        received_at(8)
//   AgentHello windows         window_start(8) scope                             caller's bytes
//   incidents       opened(8) incident_id(8)                          caller's bytes
//   nic_telemetry   bucket(8) agent_len(2) agent boot(8) batch_seq(8) delimited NicTelemetry
//   default         "agent_index/" agent                              host id(4)
//   default         "learned_fabric"                                  LearnedFabric
//   evidence        incident_id(8) part(4)                            written_at(8) bytes
//   flight_records  incident_id(8) agent_len(2) agent boot(8) batch_seq(8)
//                                                                    stored_at(8) FlightRecord
//
// Raw results and path reports are stored as one chunk per (time bucket,
// batch): the results of one batch whose event time (ProbeResult.send_time_ns,
// PathReport.time_ns) falls in the same kRawBucket. A batch of 1000 results
// is then one or two puts instead of 1000, which is what lets one synced
// writer keep up with 300k results/s; a time-range scan seeks to the bucket
// holding its start and filters results inside the first and last chunk.
// Because time leads the key, retention is one DeleteRange (and the compaction
// filter drops whatever is left in older files). NIC telemetry (counter
// deltas, NicTelemetry.end_ns for the time) is chunked the same way in a
// family of its own with the raw retention.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hostmesh::analyzer::store {

// Fixed on purpose: a scan relies on it to find the chunk holding its start, so
// changing it needs a migration of existing data.
inline constexpr std::chrono::nanoseconds kRawBucket = std::chrono::seconds{10};

// Start of the bucket holding `time_ns` (floor, also for negative times;
// INT64_MIN for the times whose floor is below it).
std::int64_t BucketStart(std::int64_t time_ns);

void AppendU16(std::string& out, std::uint16_t v);
void AppendU32(std::string& out, std::uint32_t v);
void AppendU64(std::string& out, std::uint64_t v);
void AppendTime(std::string& out, std::int64_t time_ns);
std::uint32_t ReadU32(std::string_view in);  // the first 4 bytes
std::uint64_t ReadU64(std::string_view in);  // the first 8 bytes
std::int64_t ReadTime(std::string_view in);  // the first 8 bytes

// agent_len(2) agent: agent ids are at most kMaxAgentIdBytes (the ingest
// validator enforces it; longer ids are cut here, never overflow the length).
inline constexpr std::size_t kMaxAgentIdBytes = 255;
void AppendAgent(std::string& out, std::string_view agent_id);

// The 8-byte key prefix of a time, for seeks and DeleteRange bounds.
std::string TimeKey(std::int64_t time_ns);

std::string ChunkKey(std::int64_t bucket_ns, std::string_view agent_id, std::uint64_t boot_id,
                     std::uint64_t batch_seq);
std::string LedgerPrefix(std::string_view agent_id, std::uint64_t boot_id);
std::string LedgerKey(std::string_view agent_id, std::uint64_t boot_id, std::uint64_t batch_seq);
std::string HelloKey(std::string_view agent_id, std::uint64_t boot_id);
std::string WindowKey(std::int64_t window_start_ns, std::string_view scope);
std::string IncidentKey(std::int64_t opened_ns, std::uint64_t incident_id);
// Part 0 is an incident's evidence header, parts 1.. its captured probes.
std::string EvidenceKey(std::uint64_t incident_id, std::uint32_t part);
// Flight records are read by incident: its id leads the key.
std::string FlightRecordKey(std::uint64_t incident_id, std::string_view agent_id,
                            std::uint64_t boot_id, std::uint64_t batch_seq);
std::string FlightRecordPrefix(std::uint64_t incident_id);

// The parts of a flight_records key; nullopt if malformed.
struct FlightRecordKeyParts {
  std::uint64_t incident_id = 0;
  std::string_view agent_id;  // points into the key
  std::uint64_t boot_id = 0;
  std::uint64_t batch_seq = 0;
};
std::optional<FlightRecordKeyParts> ParseFlightRecordKey(std::string_view key);

// The parts of a raw_results / path_reports key; nullopt if malformed.
struct ChunkKeyParts {
  std::int64_t bucket_ns = 0;
  std::string_view agent_id;  // points into the key
  std::uint64_t boot_id = 0;
  std::uint64_t batch_seq = 0;
};
std::optional<ChunkKeyParts> ParseChunkKey(std::string_view key);

// The batch_seq at the end of a ledger key.
std::uint64_t LedgerKeySeq(std::string_view key);

}  // namespace hostmesh::analyzer::store
