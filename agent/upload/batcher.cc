#include "agent/upload/batcher.h"

#include <algorithm>
#include <utility>

#include "agent/upload/wire_messages.h"
#include "proto/wire/packed_results.h"

namespace hostmesh::agent::upload {
namespace {

// A full batch of 1000 results takes about 150 KB in its arena as messages
// (an older analyzer's), about 30 KB packed: a few blocks.
google::protobuf::ArenaOptions BatchArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 4096;
  options.max_block_size = 64 * 1024;
  return options;
}

// Room for the records of a second at 8 NICs x 10/s (about 30 bytes each).
// Past it a batch's records reserve what the last batch's took, a quarter
// more: the string reallocates (a copy) only when the rate rose. The spool's
// budget counts its capacity, slack included.
constexpr std::size_t kRecordsReserve = 4096;
// The records' size grows in steps this large within the reserve: each step
// zero-fills what it adds, and small fills take vector stores, not `rep stosb`.
constexpr std::size_t kRecordsStep = 1024;
static_assert(kRecordsStep >= wire::kMaxRecordBytes);

}  // namespace

Batcher::Batcher(const Clock& clock, BatchIdentity identity, std::uint32_t max_items,
                 std::chrono::nanoseconds max_age)
    : clock_(clock),
      identity_(std::move(identity)),
      max_items_(std::max<std::uint32_t>(max_items, 1)),
      max_age_(max_age),
      records_reserve_(kRecordsReserve) {}

v1::UploadBatch& Batcher::Open() {
  if (!open_) {
    open_ = std::make_shared<Building>(BatchArenaOptions());
    open_->batch = google::protobuf::Arena::CreateMessage<v1::UploadBatch>(&open_->arena);
    previous_send_ns_ = 0;
    records_ = nullptr;
    records_used_ = 0;
    packed_count_ = 0;
  }
  return *open_->batch;
}

SharedBatch Batcher::Add(const v1::ProbeResult& result) {
  *Open().add_results() = result;
  return Added();
}

SharedBatch Batcher::AddResult(const ProbeResult& result) {
  v1::UploadBatch& batch = Open();
  if (records_ == nullptr) {
    records_ = batch.mutable_packed_results()->mutable_records();
    records_->reserve(records_reserve_);
  }
  if (records_->size() - records_used_ < wire::kMaxRecordBytes) {
    records_->resize(records_->size() + kRecordsStep);
  }
  char* end =
      wire::WriteRecord(ToRecord(result), records_->data() + records_used_, previous_send_ns_);
  records_used_ = static_cast<std::size_t>(end - records_->data());
  ++packed_count_;
  return Added();
}

SharedBatch Batcher::Add(const v1::PathReport& path) {
  *Open().add_paths() = path;
  return Added();
}

SharedBatch Batcher::Add(const v1::NicTelemetry& telemetry) {
  *Open().add_telemetry() = telemetry;
  return Added();
}

SharedBatch Batcher::Add(const v1::FlightRecord& record) {
  *Open().add_flight_records() = record;
  Added();
  return Close();
}

SharedBatch Batcher::Added() {
  if (items_++ == 0) first_item_at_ = clock_.MonotonicNow();
  if (items_ >= max_items_) return Close();
  return nullptr;
}

std::optional<MonoTime> Batcher::Due() const {
  if (items_ == 0) return std::nullopt;
  return first_item_at_ + max_age_;
}

SharedBatch Batcher::CloseIfDue() {
  const std::optional<MonoTime> due = Due();
  if (!due || clock_.MonotonicNow() < *due) return nullptr;
  return Close();
}

SharedBatch Batcher::Close() {
  if (items_ == 0) return nullptr;
  std::shared_ptr<Building> closed = std::move(open_);
  items_ = 0;
  v1::UploadBatch& batch = *closed->batch;
  batch.set_schema_version(v1::SCHEMA_VERSION_1);
  batch.set_agent_id(identity_.agent_id);
  batch.set_boot_id(identity_.boot_id);
  batch.set_batch_seq(++last_seq_);
  batch.set_created_ns(clock_.RealtimeNow().time_since_epoch().count());
  if (shedding_) *batch.mutable_load_shedding() = *shedding_;
  if (packed_count_ > 0) {
    v1::PackedResults& packed = *batch.mutable_packed_results();
    packed.set_format(wire::kPackedResultsFormat);
    packed.set_count(packed_count_);
    records_->resize(records_used_);
    records_reserve_ = std::max(kRecordsReserve, records_used_ + records_used_ / 4);
    records_ = nullptr;
  }
  // Shares ownership of the arena: the batch lives as long as any holder.
  return SharedBatch(closed, closed->batch);
}

}  // namespace hostmesh::agent::upload
