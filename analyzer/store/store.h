// The analyzer's embedded RocksDB store (key layout: store_keys.h).
//
// Durability: a batch's result chunks, path chunks and its ledger entry go in
// ONE rocksdb::WriteBatch written with WriteOptions::sync, so "committed"
// means in the fsynced WAL and a batch is either wholly there or absent after a
// crash. Throughput comes from committing many batches (of many streams) in one
// synced write (GroupCommitter), not from giving up the fsync.
//
// Idempotency: Commit checks each batch's ledger key and writes under one
// mutex, so a (agent, boot, batch_seq) is stored at most once however many
// streams resend it, including twice inside one group.
#pragma once

#include <rocksdb/db.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/base/clock.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::analyzer::store {

// How the raw families (results, path reports) are compressed on disk.
enum class RawCompression {
  kFast,   // LZ4 (or Snappy): cheapest to write
  kSmall,  // ZSTD: written once and rarely read, so smaller files are worth the CPU
};

struct StoreOptions {
  std::filesystem::path data_dir;                                  // created if missing
  std::chrono::nanoseconds raw_retention = std::chrono::hours{6};  // results and path reports
  std::chrono::nanoseconds summary_retention =
      std::chrono::days{30};  // window summaries, incidents
  // Ledger and hellos: long enough for an agent to resend from its spool.
  std::chrono::nanoseconds ledger_retention = std::chrono::hours{24};
  std::size_t raw_write_buffer_bytes = 64 << 20;
  RawCompression raw_compression = RawCompression::kSmall;
  // Raw families as a FIFO: files are written once by the flush and dropped
  // whole when older than raw_retention (no compaction rewrites them), rather
  // than levelled like the other families.
  bool raw_fifo = true;
};

// What a column family holds: live SST files (compressed) and memtables.
struct FamilyUsage {
  std::string name;
  std::uint64_t sst_bytes = 0;
  std::uint64_t memtable_bytes = 0;
  std::uint64_t keys = 0;  // RocksDB's estimate
  // Since the store was opened: bytes written by flushes and compactions, and
  // the CPU seconds they took.
  std::uint64_t written_bytes = 0;
  double compaction_cpu_seconds = 0;
};

// A batch encoded for writing: done on the caller's thread (serialization is
// the costly part), so the single committing thread only checks and puts.
struct PreparedBatch {
  std::string agent_id;
  std::uint64_t boot_id = 0;
  std::uint64_t batch_seq = 0;
  std::uint32_t results = 0;
  std::uint32_t paths = 0;
  std::uint32_t telemetry = 0;
  std::vector<std::pair<std::string, std::string>> result_chunks;  // key, value
  std::vector<std::pair<std::string, std::string>> path_chunks;
  std::vector<std::pair<std::string, std::string>> telemetry_chunks;
  // Flight records by FlightRecordKey, their encoded FlightRecord (the commit
  // puts the time it stores them in front, for retention).
  std::vector<std::pair<std::string, std::string>> flight_records;
  std::size_t bytes = 0;  // keys plus values
};

enum class CommitStatus {
  kStored,     // durable now
  kDuplicate,  // was durable already; nothing written
  kFailed,     // the write failed; nothing of it is durable
};

struct CommitOutcome {
  CommitStatus status = CommitStatus::kFailed;
  std::string error;  // for kFailed
};

// One stored copy of a probe result, as a scan hands it out.
struct StoredResult {
  std::string_view agent_id;
  std::uint64_t boot_id = 0;
  std::uint64_t batch_seq = 0;
  const v1::ProbeResult* result = nullptr;
};
struct StoredPath {
  std::string_view agent_id;
  std::uint64_t boot_id = 0;
  std::uint64_t batch_seq = 0;
  const v1::PathReport* path = nullptr;
};
struct StoredFlightRecord {
  std::string_view agent_id;
  std::uint64_t boot_id = 0;
  std::uint64_t batch_seq = 0;
  WallTime stored_at{};
  const v1::FlightRecord* record = nullptr;
};
struct StoredTelemetry {
  std::string_view agent_id;
  std::uint64_t boot_id = 0;
  std::uint64_t batch_seq = 0;
  const v1::NicTelemetry* telemetry = nullptr;
};

// Errors on the data path are values: ok() or a message.
struct StoreStatus {
  std::string error;
  bool ok() const { return error.empty(); }
};

class Store {
 public:
  // nullptr with `error` set when the directory cannot be opened (start-up).
  static std::unique_ptr<Store> Open(const Clock& clock, StoreOptions options, std::string& error);
  // Closes without flushing memtables: the WAL already holds every commit.
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Thread-safe and pure: encodes one batch for Commit.
  static PreparedBatch Prepare(const v1::UploadBatch& batch);

  // Checks and writes a group of batches in one synced WriteBatch; one outcome
  // per input, in order. If the write fails, every batch to be stored fails.
  std::vector<CommitOutcome> Commit(std::span<const PreparedBatch* const> batches);
  CommitOutcome Commit(const PreparedBatch& batch);

  // Largest batch_seq of (agent, boot) in the ledger, 0 if none.
  std::uint64_t LastDurableBatchSeq(std::string_view agent_id, std::uint64_t boot_id) const;

  // Hellos are informational (an agent says Hello on every connection), so
  // they are not synced on their own: the next synced batch carries them.
  StoreStatus PutHello(const v1::AgentHello& hello);
  std::optional<v1::AgentHello> GetHello(std::string_view agent_id, std::uint64_t boot_id) const;

  // Results with from <= send_time < to, in time-bucket order (within a bucket
  // by agent, boot, batch). `visit` returns false to stop early.
  StoreStatus ScanResults(WallTime from, WallTime to,
                          const std::function<bool(const StoredResult&)>& visit) const;
  StoreStatus ScanPaths(WallTime from, WallTime to,
                        const std::function<bool(const StoredPath&)>& visit) const;
  // NIC telemetry with from <= end_ns < to, in the same order.
  // The same for the given agents only (a seek per time bucket and agent, as
  // ScanTelemetryOf).
  StoreStatus ScanResultsOf(WallTime from, WallTime to, const std::vector<std::string>& agents,
                            const std::function<bool(const StoredResult&)>& visit) const;
  StoreStatus ScanTelemetry(WallTime from, WallTime to,
                            const std::function<bool(const StoredTelemetry&)>& visit) const;
  // The same for the given agents only: a seek per (time bucket, agent), so
  // the cost follows the agents read, not the fleet. Ranges longer than
  // kMaxSeekBuckets buckets scan every key instead (and skip other agents').
  static constexpr std::int64_t kMaxSeekBuckets = 360;
  StoreStatus ScanTelemetryOf(WallTime from, WallTime to, const std::vector<std::string>& agents,
                              const std::function<bool(const StoredTelemetry&)>& visit) const;
  // Stored results per agent, over everything retained.
  std::map<std::string, std::uint64_t> CountResultsByAgent() const;
  // Copies per (agent, boot, src_nic, sequence): every value is 1 unless a
  // result was stored twice. For tests and audits.
  using ResultIdentity = std::tuple<std::string, std::uint64_t, std::uint32_t, std::uint64_t>;
  std::map<ResultIdentity, std::uint32_t> CountResultCopies() const;

  // The analyzer's dense host ids, so that they, and the incidents naming
  // hosts by them, survive a restart. Kept for good (one entry per agent ever
  // seen); not synced on their own.
  StoreStatus PutAgentIndex(std::string_view agent_id, std::uint32_t index);
  std::vector<std::pair<std::string, std::uint32_t>> AgentIndex() const;

  // The fabric learned from traceroutes (no inventory), one record rewritten
  // as it grows and kept for good: its ids name links and switches in the
  // stored summaries and incidents. Not synced on its own.
  StoreStatus PutLearnedFabric(std::string_view bytes);
  std::optional<std::string> GetLearnedFabric() const;

  // The stored window summary with the latest window start, if any.
  std::optional<std::pair<WallTime, std::string>> LastWindowSummary() const;

  // Opaque summaries from the analysis, kept summary_retention.
  StoreStatus PutWindowSummary(WallTime window_start, std::string_view scope,
                               std::string_view bytes);
  StoreStatus ScanWindowSummaries(WallTime from, WallTime to,
                                  const std::function<bool(WallTime, std::string_view scope,
                                                           std::string_view bytes)>& visit) const;
  // Incidents are keyed by a time the caller chooses (the analyzer: its last
  // activity, so retention keeps a long-open incident) and their id.
  StoreStatus PutIncident(WallTime at, std::uint64_t incident_id, std::string_view bytes);
  StoreStatus DeleteIncident(WallTime at, std::uint64_t incident_id);
  StoreStatus ScanIncidents(
      WallTime from, WallTime to,
      const std::function<bool(WallTime, std::uint64_t id, std::string_view bytes)>& visit) const;

  // The evidence of incidents (first-failure capture, analyzer/evidence): part
  // 0 a header rewritten as the incident goes on, parts 1.. captured probes.
  // Each record is kept summary_retention after it was last written (its
  // write time leads the value; the compaction filter drops it).
  StoreStatus PutEvidence(std::uint64_t incident_id, std::uint32_t part, std::string_view bytes);
  // An incident's parts in part order; bytes without the write time.
  StoreStatus ScanEvidence(
      std::uint64_t incident_id,
      const std::function<bool(std::uint32_t part, std::string_view bytes)>& visit) const;
  // Every incident's stored evidence: its size (keys and values) and when it
  // was last written, in id order.
  StoreStatus ScanEvidenceSizes(
      const std::function<bool(std::uint64_t incident_id, std::uint64_t bytes, WallTime written)>&
          visit) const;
  StoreStatus DeleteEvidence(std::uint64_t incident_id);
  // The flight records agents uploaded for `incident_id` (by agent, boot,
  // batch), kept summary_retention from when they were stored. `visit`
  // returns false to stop early; a record that does not parse is skipped
  // and named in the status.
  StoreStatus ScanFlightRecords(std::uint64_t incident_id,
                                const std::function<bool(const StoredFlightRecord&)>& visit) const;

  // Deletes what is past retention now (one DeleteRange per time-keyed family)
  // and compacts the deleted ranges away; the compaction filters also expire
  // ledger and hello entries. Call periodically (hourly is plenty).
  StoreStatus EnforceRetention();
  // Flushes and compacts every family in full (the retention filters run on
  // everything): reclaims space after a long outage, or on an operator's call.
  StoreStatus Compact();

  // Per column family, for /metrics and capacity planning.
  std::vector<FamilyUsage> Usage() const;

  const StoreOptions& options() const { return options_; }

 private:
  enum Family {
    kDefault,
    kRawResults,
    kPathReports,
    kLedger,
    kHellos,
    kWindows,
    kIncidents,
    kTelemetry,
    kEvidence,
    kFlightRecords,
    kFamilyCount,
  };
  Store(const Clock& clock, StoreOptions options);
  StoreStatus OpenDb();
  rocksdb::ColumnFamilyOptions FamilyOptions(Family f, rocksdb::CompressionType fast,
                                             rocksdb::CompressionType raw);
  rocksdb::ColumnFamilyHandle* cf(Family f) const { return handles_[f]; }
  bool LedgerHas(const std::string& key) const;
  // Chunks of every agent, or of `agents` only when not null.
  StoreStatus ScanChunks(
      Family family, WallTime from, WallTime to, const std::vector<std::string>* agents,
      const std::function<bool(std::string_view key, std::string_view value)>& visit) const;
  template <typename Message, typename Reader, typename TimeOf, typename Visit>
  StoreStatus ScanItems(Family family, WallTime from, WallTime to,
                        const std::vector<std::string>* agents, std::string_view what,
                        TimeOf time_of, Visit visit) const;
  StoreStatus ScanTelemetryAmong(WallTime from, WallTime to, const std::vector<std::string>* agents,
                                 const std::function<bool(const StoredTelemetry&)>& visit) const;

  const Clock& clock_;
  const StoreOptions options_;
  std::vector<std::shared_ptr<rocksdb::CompactionFilterFactory>> filters_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // indexed by Family
  std::mutex commit_mu_;
};

}  // namespace hostmesh::analyzer::store
