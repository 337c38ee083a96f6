// Checks one UploadBatch before it may touch the store. Pure: the agent's NICs
// and the time come in as arguments, so the rules are tested as a table.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/clock.h"
#include "common/base/upload_limits.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::analyzer::ingest {

// Each reason is a label value of hostmesh_ingest_batches_rejected_total.
enum class RejectReason {
  kSchemaVersion,    // not a schema version this analyzer knows
  kUnknownAgent,     // (agent, boot) never said Hello (or no agent id)
  kBadBatchSeq,      // batch_seq 0 (sequences start at 1)
  kFutureTimestamp,  // a time too far ahead of the analyzer's clock
  kPastTimestamp,    // a time older than the analyzer keeps (or 0)
  kUnknownNic,       // a NIC id the agent's Hello did not list
  kTooManyResults,
  kTooManyPaths,
  kTooLarge,  // encoded size over the limit
  kTooManyTelemetry,
  kBadTelemetry,  // NIC telemetry that ends before it starts
  kBadResult,     // an impossible result: two fates, times out of reach, no clock error bound
  kBadAgentId,    // an agent id that is empty, too long or not printable
  kBadPath,       // a path report with impossible fields (addresses, ports, hops)
  kTooManyFlightRecords,
  kBadFlightRecord,      // a flight record over its bounds or with impossible fields
  kBadLoadShedding,      // a rate fraction outside (0, 1], or a cause too long or not text
  kUnaskedFlightRecord,  // a flight record nobody asked this agent for (ingest_handler.h)
};
inline constexpr std::size_t kRejectReasonCount = 18;
std::string_view RejectReasonName(RejectReason reason);

struct Rejection {
  RejectReason reason;
  std::string message;  // names the offending field, item index and limit
};

struct ValidationLimits {
  std::size_t max_results = kMaxResultsPerBatch;
  std::size_t max_paths = kMaxPathsPerBatch;
  // One per NIC per telemetry period: a batch of a minute of 64 NICs read every second.
  std::size_t max_telemetry = 4'000;
  std::size_t max_batch_bytes = kMaxBatchBytes;
  // Agents' clocks are NTP-synced; minutes of skew means a broken clock.
  std::chrono::nanoseconds max_future = std::chrono::minutes{5};
  // Older than raw retention: it would be deleted on arrival.
  std::chrono::nanoseconds max_age = std::chrono::hours{24};
  // Every timestamp of a result lies this close to its send_time_ns: the
  // agent's probe timeout is at most 60 s, and the bound keeps every
  // difference the analysis takes far from int64 overflow.
  std::chrono::nanoseconds max_probe_span = std::chrono::minutes{10};
  // A trace has at most one hop per TTL; IP's TTL is 8 bits.
  std::size_t max_hops = 255;
  // Counters of one NIC read: about 30 kinds, some per PFC priority.
  std::size_t max_counter_deltas = 256;
  // What a Hello may announce: a host's NICs, and its encoded size.
  std::size_t max_nics = 256;
  std::size_t max_hello_bytes = 64 << 10;
  // Flight records (ingest.proto FlightRecord): how many a batch, and each one's size.
  std::size_t max_flight_records = kMaxFlightRecordsPerBatch;
  std::size_t max_flight_events = kMaxFlightEventsPerRecord;
  std::size_t max_flight_record_bytes = kMaxFlightRecordBytes;
  std::size_t max_flight_text_bytes = kMaxFlightTextBytes;
  // A record's range: an incident's, at most this long.
  std::chrono::nanoseconds max_flight_range = std::chrono::hours{1};
};

// The NIC ids one (agent, boot) announced in its Hello.
class AgentNics {
 public:
  explicit AgentNics(const v1::AgentHello& hello);
  bool Has(std::uint32_t id) const {
    return id < 64 ? ((low_ >> id) & 1) != 0 : std::binary_search(high_.begin(), high_.end(), id);
  }
  std::size_t size() const { return count_; }

 private:
  std::uint64_t low_ = 0;            // ids below 64: the usual case, one bit test
  std::vector<std::uint32_t> high_;  // sorted
  std::size_t count_ = 0;
};

// Turns the batch's packed results (UploadBatch.packed_results) into results,
// first of all: everything after reads results. A malformed record or too
// many results in all is the batch's rejection; a batch over max_batch_bytes
// is left alone for ValidateBatch to refuse.
std::optional<Rejection> ExpandPacked(v1::UploadBatch& batch, std::size_t encoded_bytes,
                                      const ValidationLimits& limits);

// nullopt: the batch may be stored. `agent` is null when (agent, boot) never
// said Hello. `encoded_bytes` is the batch's ByteSizeLong.
std::optional<Rejection> ValidateBatch(const v1::UploadBatch& batch, std::size_t encoded_bytes,
                                       const AgentNics* agent, WallTime now,
                                       const ValidationLimits& limits);

// Clears each pair of a validated batch's stamps whose receive reads before
// its send by more than the stated clock error (and 1 ms) allows: NIC stamps
// (nic_send_ns, nic_recv_ns) and application stamps. An honest agent sends
// such pairs: software stamps polled out of order (soft-RoCE), a clock step.
// The probe's fate still counts; its latency becomes unknown instead of a
// negative sample. Returns how many pairs were cleared.
std::size_t ClearContradictoryStamps(v1::UploadBatch& batch);

// The Hello's schema check: nullopt when known, else the error text.
std::optional<std::string> CheckSchemaVersion(v1::SchemaVersion version);

// Everything of a Hello but its schema version and who may send it: sizes
// first, then names (common/base/names.h), NIC ids unique, addresses that
// parse. nullopt when good, else the error naming the field.
std::optional<std::string> ValidateHello(const v1::AgentHello& hello, std::size_t encoded_bytes,
                                         const ValidationLimits& limits);

}  // namespace hostmesh::analyzer::ingest
