#include "analyzer/store/store.h"

#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <set>
#include <system_error>
#include <unordered_set>

#include "analyzer/store/chunk_codec.h"
#include "analyzer/store/result_codec.h"
#include "analyzer/store/retention_filter.h"
#include "analyzer/store/rocks_values.h"
#include "analyzer/store/store_keys.h"

namespace hostmesh::analyzer::store {

namespace {

// Length-delimited messages of one chunk, read like ResultChunkReader.
template <typename Message>
class DelimitedReader {
 public:
  explicit DelimitedReader(std::string_view chunk) : in_(chunk) {}
  bool Next(Message& out) {
    if (in_.empty() || corrupt_) return false;
    corrupt_ = !ReadDelimited(in_, out);
    return !corrupt_;
  }
  bool corrupt() const { return corrupt_; }

 private:
  std::string_view in_;
  bool corrupt_ = false;
};

// Order matches Store::Family.
constexpr const char* kFamilyNames[] = {
    "default", "raw_results", "path_reports",  "ledger",   "hellos",
    "windows", "incidents",   "nic_telemetry", "evidence", "flight_records"};

rocksdb::CompressionType FirstSupported(std::initializer_list<rocksdb::CompressionType> types) {
  const auto supported = rocksdb::GetSupportedCompressions();
  for (auto type : types) {
    if (std::find(supported.begin(), supported.end(), type) != supported.end()) return type;
  }
  return rocksdb::kNoCompression;
}

// Where a chunk scan starts: the bucket holding `from` (a chunk starting
// earlier in that bucket may hold results at or after `from`).
std::string ScanStart(std::int64_t from_ns) {
  if (from_ns < std::numeric_limits<std::int64_t>::min() + kRawBucket.count()) return {};
  return TimeKey(BucketStart(from_ns));
}

// Nearly always one bucket, at most two: a batch covers about a second.
template <typename Message, typename TimeOf, typename Encode>
void AddChunks(const google::protobuf::RepeatedPtrField<Message>& items, TimeOf time_of,
               Encode encode, const v1::UploadBatch& batch,
               std::vector<std::pair<std::string, std::string>>& chunks, std::size_t& bytes) {
  if (items.empty()) return;
  std::map<std::int64_t, std::vector<const Message*>> by_bucket;
  for (const Message& item : items) by_bucket[BucketStart(time_of(item))].push_back(&item);
  for (const auto& [bucket, members] : by_bucket) {
    std::string key = ChunkKey(bucket, batch.agent_id(), batch.boot_id(), batch.batch_seq());
    std::string value;
    encode(std::span<const Message* const>(members), value);
    bytes += key.size() + value.size();
    chunks.emplace_back(std::move(key), std::move(value));
  }
}

}  // namespace

Store::Store(const Clock& clock, StoreOptions options)
    : clock_(clock), options_(std::move(options)) {}

std::unique_ptr<Store> Store::Open(const Clock& clock, StoreOptions options, std::string& error) {
  std::unique_ptr<Store> store(new Store(clock, std::move(options)));
  const StoreStatus status = store->OpenDb();
  if (!status.ok()) {
    error = status.error;
    return nullptr;
  }
  return store;
}

// A family's compression, compaction and retention filter.
rocksdb::ColumnFamilyOptions Store::FamilyOptions(Family f, rocksdb::CompressionType fast,
                                                  rocksdb::CompressionType raw) {
  rocksdb::ColumnFamilyOptions o;
  o.compression = fast;
  RetentionRule rule;
  switch (f) {
    case kTelemetry:
      rule = {RecordTime::kKeyPrefix, options_.raw_retention, kRawBucket};
      break;
    case kRawResults:
    case kPathReports:
      o.compression = raw;
      o.compression_opts.level = 1;  // ZSTD 1: half the CPU of 3 for 3% more bytes here
      o.write_buffer_size = options_.raw_write_buffer_bytes;
      if (options_.raw_fifo) {
        // Write amplification 1: at fleet rate a levelled family would
        // recompress every byte at each level it passes. Files go by age
        // (ttl, on file creation time: data is no younger than its file);
        // EnforceRetention's DeleteRange still hides older records at once.
        // Intra-L0 compactions merge small flushes so files stay few.
        o.compaction_style = rocksdb::kCompactionStyleFIFO;
        o.compaction_options_fifo.max_table_files_size = std::numeric_limits<std::uint64_t>::max();
        o.compaction_options_fifo.allow_compaction = true;
        o.ttl = static_cast<std::uint64_t>(
            std::chrono::ceil<std::chrono::seconds>(options_.raw_retention + kRawBucket).count());
        o.periodic_compaction_seconds = 0;
      }
      rule = {RecordTime::kKeyPrefix, options_.raw_retention, kRawBucket};
      break;
    case kWindows:
    case kIncidents:
      o.compression = raw;  // written once a window, kept a month: small beats fast
      rule = {RecordTime::kKeyPrefix, options_.summary_retention, {}};
      break;
    case kEvidence:
      // Rewritten while an incident is young, then read rarely: kept by the
      // time of its last write, not by the incident's.
    case kFlightRecords:
      // Kept with the incidents they explain; aged by when they were stored.
      o.compression = raw;
      rule = {RecordTime::kValuePrefix, options_.summary_retention, {}};
      break;
    case kLedger:
    case kHellos: {
      // Point lookups on every batch (duplicate check): bloom filters.
      rocksdb::BlockBasedTableOptions table;
      table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
      o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
      rule = {RecordTime::kValuePrefix, options_.ledger_retention, {}};
      break;
    }
    case kDefault:
    case kFamilyCount:
      return o;
  }
  filters_.push_back(std::make_shared<RetentionFilterFactory>(clock_, rule));
  o.compaction_filter_factory = filters_.back();
  return o;
}

StoreStatus Store::OpenDb() {
  std::error_code ec;
  std::filesystem::create_directories(options_.data_dir, ec);
  if (ec) return {"cannot create " + options_.data_dir.string() + ": " + ec.message()};

  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.max_background_jobs = 2;
  // The WAL holds every commit: closing need not flush (and a crash does not).
  db_options.avoid_flush_during_shutdown = true;
  db_options.keep_log_file_num = 5;
  db_options.max_log_file_size = 16 << 20;

  const rocksdb::CompressionType fast =
      FirstSupported({rocksdb::kLZ4Compression, rocksdb::kSnappyCompression});
  const rocksdb::CompressionType raw =
      options_.raw_compression == RawCompression::kSmall
          ? FirstSupported({rocksdb::kZSTD, rocksdb::kLZ4Compression, rocksdb::kSnappyCompression})
          : fast;
  static_assert(std::size(kFamilyNames) == kFamilyCount);
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (int f = kDefault; f < kFamilyCount; ++f) {
    descriptors.emplace_back(kFamilyNames[f], FamilyOptions(static_cast<Family>(f), fast, raw));
  }
  // Families a newer version added must be opened too, or RocksDB refuses.
  std::vector<std::string> existing;
  if (rocksdb::DB::ListColumnFamilies(db_options, options_.data_dir.string(), &existing).ok()) {
    for (const std::string& name : existing) {
      const bool known = std::any_of(std::begin(kFamilyNames), std::end(kFamilyNames),
                                     [&](const char* n) { return name == n; });
      if (!known) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
    }
  }

  rocksdb::DB* db = nullptr;
  const rocksdb::Status s =
      rocksdb::DB::Open(db_options, options_.data_dir.string(), descriptors, &handles_, &db);
  if (!s.ok()) return FromRocks(s, "cannot open store " + options_.data_dir.string());
  db_.reset(db);
  return {};
}

Store::~Store() {
  if (!db_) return;
  for (rocksdb::ColumnFamilyHandle* handle : handles_) db_->DestroyColumnFamilyHandle(handle);
  db_->Close();
}

PreparedBatch Store::Prepare(const v1::UploadBatch& batch) {
  PreparedBatch out;
  out.agent_id = batch.agent_id();
  out.boot_id = batch.boot_id();
  out.batch_seq = batch.batch_seq();
  out.results = static_cast<std::uint32_t>(batch.results_size());
  out.paths = static_cast<std::uint32_t>(batch.paths_size());
  out.telemetry = static_cast<std::uint32_t>(batch.telemetry_size());
  AddChunks(
      batch.results(), [](const v1::ProbeResult& r) { return r.send_time_ns(); }, EncodeResultChunk,
      batch, out.result_chunks, out.bytes);
  AddChunks(
      batch.paths(), [](const v1::PathReport& p) { return p.time_ns(); },
      [](std::span<const v1::PathReport* const> paths, std::string& value) {
        for (const v1::PathReport* p : paths) AppendDelimited(value, *p);
      },
      batch, out.path_chunks, out.bytes);
  AddChunks(
      batch.telemetry(), [](const v1::NicTelemetry& t) { return t.end_ns(); },
      [](std::span<const v1::NicTelemetry* const> items, std::string& value) {
        for (const v1::NicTelemetry* t : items) AppendDelimited(value, *t);
      },
      batch, out.telemetry_chunks, out.bytes);
  for (const v1::FlightRecord& record : batch.flight_records()) {
    std::string key =
        FlightRecordKey(record.incident_id(), batch.agent_id(), batch.boot_id(), batch.batch_seq());
    std::string value = record.SerializeAsString();
    out.bytes += key.size() + value.size() + 8;
    out.flight_records.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

bool Store::LedgerHas(const std::string& key) const {
  std::string ignored;
  if (!db_->KeyMayExist(rocksdb::ReadOptions(), cf(kLedger), key, &ignored)) return false;
  return db_->Get(rocksdb::ReadOptions(), cf(kLedger), key, &ignored).ok();
}

std::vector<CommitOutcome> Store::Commit(std::span<const PreparedBatch* const> batches) {
  std::vector<CommitOutcome> outcomes(batches.size());
  // Held across check and write, so no other commit can store the same key in
  // between: this is what makes the duplicate check atomic.
  std::lock_guard lock(commit_mu_);
  rocksdb::WriteBatch write;
  std::unordered_set<std::string> in_group;
  const std::int64_t now = Ns(clock_.RealtimeNow());
  bool any = false;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const PreparedBatch& b = *batches[i];
    std::string ledger_key = LedgerKey(b.agent_id, b.boot_id, b.batch_seq);
    if (in_group.count(ledger_key) != 0 || LedgerHas(ledger_key)) {
      outcomes[i].status = CommitStatus::kDuplicate;
      continue;
    }
    for (const auto& [key, value] : b.result_chunks) write.Put(cf(kRawResults), key, value);
    for (const auto& [key, value] : b.path_chunks) write.Put(cf(kPathReports), key, value);
    for (const auto& [key, value] : b.telemetry_chunks) write.Put(cf(kTelemetry), key, value);
    for (const auto& [key, value] : b.flight_records) {
      std::string stored;
      stored.reserve(8 + value.size());
      AppendTime(stored, now);
      stored += value;
      write.Put(cf(kFlightRecords), key, stored);
    }
    std::string entry;
    AppendTime(entry, now);
    AppendU32(entry, b.results);
    AppendU32(entry, b.paths);
    write.Put(cf(kLedger), ledger_key, entry);
    in_group.insert(std::move(ledger_key));
    outcomes[i].status = CommitStatus::kStored;
    any = true;
  }
  if (!any) return outcomes;
  rocksdb::WriteOptions sync;
  sync.sync = true;
  const rocksdb::Status s = db_->Write(sync, &write);
  if (!s.ok()) {
    for (CommitOutcome& o : outcomes) {
      if (o.status == CommitStatus::kStored) o = {CommitStatus::kFailed, s.ToString()};
    }
  }
  return outcomes;
}

CommitOutcome Store::Commit(const PreparedBatch& batch) {
  const PreparedBatch* one[] = {&batch};
  return Commit(one).front();
}

std::uint64_t Store::LastDurableBatchSeq(std::string_view agent_id, std::uint64_t boot_id) const {
  const std::string prefix = LedgerPrefix(agent_id, boot_id);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf(kLedger)));
  it->SeekForPrev(prefix + std::string(8, '\xff'));
  if (!it->Valid() || !it->key().starts_with(prefix)) return 0;
  return LedgerKeySeq(ToView(it->key()));
}

StoreStatus Store::PutHello(const v1::AgentHello& hello) {
  std::string value;
  AppendTime(value, Ns(clock_.RealtimeNow()));
  hello.AppendToString(&value);
  return FromRocks(db_->Put(rocksdb::WriteOptions(), cf(kHellos),
                            HelloKey(hello.agent_id(), hello.boot_id()), value),
                   "store hello");
}

std::optional<v1::AgentHello> Store::GetHello(std::string_view agent_id,
                                              std::uint64_t boot_id) const {
  std::string value;
  if (!db_->Get(rocksdb::ReadOptions(), cf(kHellos), HelloKey(agent_id, boot_id), &value).ok()) {
    return std::nullopt;
  }
  v1::AgentHello hello;
  if (value.size() < 8 ||
      !hello.ParseFromArray(value.data() + 8, static_cast<int>(value.size() - 8))) {
    return std::nullopt;
  }
  return hello;
}

StoreStatus Store::ScanChunks(
    Family family, WallTime from, WallTime to, const std::vector<std::string>* agents,
    const std::function<bool(std::string_view, std::string_view)>& visit) const {
  const std::int64_t from_ns = Ns(from);
  const std::int64_t to_ns = Ns(to);
  // The span in unsigned arithmetic: exact for any to_ns > from_ns, never overflows.
  const bool seek =
      agents != nullptr && from_ns < to_ns &&
      from_ns >= std::numeric_limits<std::int64_t>::min() + kRawBucket.count() &&
      static_cast<std::uint64_t>(to_ns) - static_cast<std::uint64_t>(BucketStart(from_ns)) <
          static_cast<std::uint64_t>(kMaxSeekBuckets * kRawBucket.count());
  if (seek) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf(family)));
    for (std::int64_t bucket = BucketStart(from_ns); bucket < to_ns; bucket += kRawBucket.count()) {
      for (const std::string& agent : *agents) {
        std::string prefix = TimeKey(bucket);
        AppendAgent(prefix, agent);
        for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
          if (!visit(ToView(it->key()), ToView(it->value())))
            return FromRocks(it->status(), "scan");
        }
        if (!it->status().ok()) return FromRocks(it->status(), "scan");
      }
    }
    return {};
  }
  const std::string upper = TimeKey(to_ns);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read;
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, cf(family)));
  for (it->Seek(ScanStart(from_ns)); it->Valid(); it->Next()) {
    if (agents != nullptr) {
      const auto parts = ParseChunkKey(ToView(it->key()));
      if (!parts || std::find(agents->begin(), agents->end(), parts->agent_id) == agents->end()) {
        continue;
      }
    }
    if (!visit(ToView(it->key()), ToView(it->value()))) break;
  }
  return FromRocks(it->status(), "scan");
}

// The items of one chunked family whose time is in [from, to): each chunk's
// key parsed, its delimited messages decoded and filtered. `visit` returns
// false to stop.
template <typename Message, typename Reader, typename TimeOf, typename Visit>
StoreStatus Store::ScanItems(Family family, WallTime from, WallTime to,
                             const std::vector<std::string>* agents, std::string_view what,
                             TimeOf time_of, Visit visit) const {
  Message item;
  std::string error;
  StoreStatus status =
      ScanChunks(family, from, to, agents, [&](std::string_view key, std::string_view value) {
        const auto parts = ParseChunkKey(key);
        if (!parts) return true;  // not a chunk key: skip, never crash a rebuild
        Reader reader(value);
        while (reader.Next(item)) {
          const std::int64_t t = time_of(item);
          if (t < Ns(from) || t >= Ns(to)) continue;
          if (!visit(*parts, item)) return false;
        }
        if (reader.corrupt()) {
          error = "corrupt " + std::string(what) + " chunk of " + std::string(parts->agent_id) +
                  " batch " + std::to_string(parts->batch_seq);
        }
        return true;
      });
  if (status.ok() && !error.empty()) status.error = error;
  return status;
}

StoreStatus Store::ScanResults(WallTime from, WallTime to,
                               const std::function<bool(const StoredResult&)>& visit) const {
  return ScanItems<v1::ProbeResult, ResultChunkReader>(
      kRawResults, from, to, nullptr, "result",
      [](const v1::ProbeResult& r) { return r.send_time_ns(); },
      [&](const ChunkKeyParts& parts, const v1::ProbeResult& r) {
        return visit({parts.agent_id, parts.boot_id, parts.batch_seq, &r});
      });
}

StoreStatus Store::ScanResultsOf(WallTime from, WallTime to, const std::vector<std::string>& agents,
                                 const std::function<bool(const StoredResult&)>& visit) const {
  return ScanItems<v1::ProbeResult, ResultChunkReader>(
      kRawResults, from, to, &agents, "result",
      [](const v1::ProbeResult& r) { return r.send_time_ns(); },
      [&](const ChunkKeyParts& parts, const v1::ProbeResult& r) {
        return visit({parts.agent_id, parts.boot_id, parts.batch_seq, &r});
      });
}

StoreStatus Store::ScanPaths(WallTime from, WallTime to,
                             const std::function<bool(const StoredPath&)>& visit) const {
  return ScanItems<v1::PathReport, DelimitedReader<v1::PathReport>>(
      kPathReports, from, to, nullptr, "path", [](const v1::PathReport& p) { return p.time_ns(); },
      [&](const ChunkKeyParts& parts, const v1::PathReport& p) {
        return visit({parts.agent_id, parts.boot_id, parts.batch_seq, &p});
      });
}

StoreStatus Store::ScanTelemetry(WallTime from, WallTime to,
                                 const std::function<bool(const StoredTelemetry&)>& visit) const {
  return ScanTelemetryAmong(from, to, nullptr, visit);
}

StoreStatus Store::ScanTelemetryOf(WallTime from, WallTime to,
                                   const std::vector<std::string>& agents,
                                   const std::function<bool(const StoredTelemetry&)>& visit) const {
  return ScanTelemetryAmong(from, to, &agents, visit);
}

StoreStatus Store::ScanTelemetryAmong(
    WallTime from, WallTime to, const std::vector<std::string>* agents,
    const std::function<bool(const StoredTelemetry&)>& visit) const {
  return ScanItems<v1::NicTelemetry, DelimitedReader<v1::NicTelemetry>>(
      kTelemetry, from, to, agents, "telemetry",
      [](const v1::NicTelemetry& t) { return t.end_ns(); },
      [&](const ChunkKeyParts& parts, const v1::NicTelemetry& t) {
        return visit({parts.agent_id, parts.boot_id, parts.batch_seq, &t});
      });
}

std::map<std::string, std::uint64_t> Store::CountResultsByAgent() const {
  std::map<std::string, std::uint64_t> counts;
  ScanResults(WallTime::min(), WallTime::max(), [&](const StoredResult& r) {
    ++counts[std::string(r.agent_id)];
    return true;
  });
  return counts;
}

std::map<Store::ResultIdentity, std::uint32_t> Store::CountResultCopies() const {
  std::map<ResultIdentity, std::uint32_t> counts;
  ScanResults(WallTime::min(), WallTime::max(), [&](const StoredResult& r) {
    ++counts[{std::string(r.agent_id), r.boot_id, r.result->src_nic(), r.result->sequence()}];
    return true;
  });
  return counts;
}

StoreStatus Store::PutWindowSummary(WallTime window_start, std::string_view scope,
                                    std::string_view bytes) {
  return FromRocks(db_->Put(rocksdb::WriteOptions(), cf(kWindows),
                            WindowKey(Ns(window_start), scope), ToSlice(bytes)),
                   "store window summary");
}

StoreStatus Store::ScanWindowSummaries(
    WallTime from, WallTime to,
    const std::function<bool(WallTime, std::string_view, std::string_view)>& visit) const {
  const std::string upper = TimeKey(Ns(to));
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read;
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, cf(kWindows)));
  for (it->Seek(TimeKey(Ns(from))); it->Valid(); it->Next()) {
    const std::string_view key = ToView(it->key());
    if (key.size() < 8) continue;
    if (!visit(WallTime{std::chrono::nanoseconds{ReadTime(key)}}, key.substr(8),
               ToView(it->value()))) {
      break;
    }
  }
  return FromRocks(it->status(), "scan windows");
}

namespace {
constexpr std::string_view kAgentIndexPrefix = "agent_index/";
}  // namespace

StoreStatus Store::PutAgentIndex(std::string_view agent_id, std::uint32_t index) {
  std::string key(kAgentIndexPrefix);
  key.append(agent_id);
  std::string value;
  AppendU32(value, index);
  return FromRocks(db_->Put(rocksdb::WriteOptions(), cf(kDefault), key, value),
                   "store agent index");
}

std::vector<std::pair<std::string, std::uint32_t>> Store::AgentIndex() const {
  std::vector<std::pair<std::string, std::uint32_t>> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf(kDefault)));
  for (it->Seek(ToSlice(kAgentIndexPrefix)); it->Valid(); it->Next()) {
    const std::string_view key = ToView(it->key());
    if (!key.starts_with(kAgentIndexPrefix)) break;
    if (it->value().size() != 4) continue;
    out.emplace_back(std::string(key.substr(kAgentIndexPrefix.size())),
                     ReadU32(ToView(it->value())));
  }
  return out;
}

namespace {
constexpr std::string_view kLearnedFabricKey = "learned_fabric";
}  // namespace

StoreStatus Store::PutLearnedFabric(std::string_view bytes) {
  return FromRocks(
      db_->Put(rocksdb::WriteOptions(), cf(kDefault), ToSlice(kLearnedFabricKey), ToSlice(bytes)),
      "store learned fabric");
}

std::optional<std::string> Store::GetLearnedFabric() const {
  std::string value;
  const rocksdb::Status status =
      db_->Get(rocksdb::ReadOptions(), cf(kDefault), ToSlice(kLearnedFabricKey), &value);
  if (!status.ok()) return std::nullopt;
  return value;
}

std::optional<std::pair<WallTime, std::string>> Store::LastWindowSummary() const {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf(kWindows)));
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    const std::string_view key = ToView(it->key());
    if (key.size() < 8) continue;
    return std::make_pair(WallTime{std::chrono::nanoseconds{ReadTime(key)}},
                          std::string(ToView(it->value())));
  }
  return std::nullopt;
}

StoreStatus Store::PutIncident(WallTime opened, std::uint64_t incident_id, std::string_view bytes) {
  return FromRocks(db_->Put(rocksdb::WriteOptions(), cf(kIncidents),
                            IncidentKey(Ns(opened), incident_id), ToSlice(bytes)),
                   "store incident");
}

StoreStatus Store::DeleteIncident(WallTime at, std::uint64_t incident_id) {
  return FromRocks(
      db_->Delete(rocksdb::WriteOptions(), cf(kIncidents), IncidentKey(Ns(at), incident_id)),
      "delete incident");
}

StoreStatus Store::ScanIncidents(
    WallTime from, WallTime to,
    const std::function<bool(WallTime, std::uint64_t, std::string_view)>& visit) const {
  const std::string upper = TimeKey(Ns(to));
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read;
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, cf(kIncidents)));
  for (it->Seek(TimeKey(Ns(from))); it->Valid(); it->Next()) {
    const std::string_view key = ToView(it->key());
    if (key.size() != 16) continue;
    if (!visit(WallTime{std::chrono::nanoseconds{ReadTime(key)}}, ReadU64(key.substr(8)),
               ToView(it->value()))) {
      break;
    }
  }
  return FromRocks(it->status(), "scan incidents");
}

StoreStatus Store::ScanFlightRecords(
    std::uint64_t incident_id, const std::function<bool(const StoredFlightRecord&)>& visit) const {
  const std::string prefix = FlightRecordPrefix(incident_id);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf(kFlightRecords)));
  std::size_t corrupt = 0;
  v1::FlightRecord record;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    const std::string_view value = ToView(it->value());
    const std::optional<FlightRecordKeyParts> key = ParseFlightRecordKey(ToView(it->key()));
    if (!key || value.size() < 8 ||
        !record.ParseFromArray(value.data() + 8, static_cast<int>(value.size() - 8))) {
      ++corrupt;
      continue;
    }
    const StoredFlightRecord stored{key->agent_id, key->boot_id, key->batch_seq,
                                    WallTime{std::chrono::nanoseconds{ReadTime(value)}}, &record};
    if (!visit(stored)) break;
  }
  if (!it->status().ok()) return FromRocks(it->status(), "scan flight records");
  if (corrupt != 0) {
    return {std::to_string(corrupt) + " flight records of incident " + std::to_string(incident_id) +
            " do not parse"};
  }
  return {};
}

StoreStatus Store::EnforceRetention() {
  const std::int64_t now = Ns(clock_.RealtimeNow());
  struct Expiry {
    Family family;
    std::int64_t cutoff;
  };
  const Expiry expiries[] = {
      {kRawResults, now - options_.raw_retention.count() - kRawBucket.count()},
      {kPathReports, now - options_.raw_retention.count() - kRawBucket.count()},
      {kTelemetry, now - options_.raw_retention.count() - kRawBucket.count()},
      {kWindows, now - options_.summary_retention.count()},
      {kIncidents, now - options_.summary_retention.count()},
  };
  for (const Expiry& e : expiries) {
    const std::string end = TimeKey(e.cutoff);
    const rocksdb::Slice end_slice(end);
    // One range tombstone: the cost does not grow with the records it covers.
    rocksdb::Status s = db_->DeleteRange(rocksdb::WriteOptions(), cf(e.family), "", end);
    if (!s.ok()) return FromRocks(s, "retention delete");
    const bool fifo = options_.raw_fifo && (e.family == kRawResults || e.family == kPathReports);
    if (fifo) {
      // FIFO drops its files by age by itself (a manual compaction would merge
      // them); whole files older than the cutoff outside level 0 (levelled
      // before this store became a FIFO) go here.
      s = rocksdb::DeleteFilesInRange(db_.get(), cf(e.family), nullptr, &end_slice, false);
      if (!s.ok()) return FromRocks(s, "retention file delete");
      continue;
    }
    s = db_->CompactRange(rocksdb::CompactRangeOptions(), cf(e.family), nullptr, &end_slice);
    if (!s.ok()) return FromRocks(s, "retention compaction");
  }
  return {};
}

std::vector<FamilyUsage> Store::Usage() const {
  std::vector<FamilyUsage> out;
  for (int f = kDefault; f < kFamilyCount; ++f) {
    FamilyUsage u;
    u.name = kFamilyNames[f];
    db_->GetIntProperty(cf(static_cast<Family>(f)), "rocksdb.live-sst-files-size", &u.sst_bytes);
    db_->GetIntProperty(cf(static_cast<Family>(f)), "rocksdb.cur-size-all-mem-tables",
                        &u.memtable_bytes);
    db_->GetIntProperty(cf(static_cast<Family>(f)), "rocksdb.estimate-num-keys", &u.keys);
    std::map<std::string, std::string> stats;
    if (db_->GetMapProperty(cf(static_cast<Family>(f)), rocksdb::DB::Properties::kCFStats,
                            &stats)) {
      const auto number = [&](const char* key) {
        const auto it = stats.find(key);
        return it == stats.end() ? 0.0 : std::strtod(it->second.c_str(), nullptr);
      };
      u.written_bytes = static_cast<std::uint64_t>(number("compaction.Sum.WriteGB") * (1 << 30));
      u.compaction_cpu_seconds = number("compaction.Sum.CompMergeCPU");
    }
    out.push_back(std::move(u));
  }
  return out;
}

StoreStatus Store::Compact() {
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    const rocksdb::Status s =
        db_->CompactRange(rocksdb::CompactRangeOptions(), handle, nullptr, nullptr);
    if (!s.ok()) return FromRocks(s, "compaction");
  }
  return {};
}

}  // namespace hostmesh::analyzer::store
