#include "agent/upload/batcher.h"

#include <algorithm>
#include <utility>

namespace hostmesh::agent::upload {

Batcher::Batcher(const Clock& clock, BatchIdentity identity, std::uint32_t max_items,
                 std::chrono::nanoseconds max_age)
    : clock_(clock),
      identity_(std::move(identity)),
      max_items_(std::max<std::uint32_t>(max_items, 1)),
      max_age_(max_age) {}

std::optional<v1::UploadBatch> Batcher::Add(v1::ProbeResult result) {
  *open_.add_results() = std::move(result);
  return Added();
}

std::optional<v1::UploadBatch> Batcher::Add(v1::PathReport path) {
  *open_.add_paths() = std::move(path);
  return Added();
}

std::optional<v1::UploadBatch> Batcher::Added() {
  if (items_++ == 0) first_item_at_ = clock_.MonotonicNow();
  if (items_ >= max_items_) return Close();
  return std::nullopt;
}

std::optional<MonoTime> Batcher::Due() const {
  if (items_ == 0) return std::nullopt;
  return first_item_at_ + max_age_;
}

std::optional<v1::UploadBatch> Batcher::CloseIfDue() {
  const std::optional<MonoTime> due = Due();
  if (!due || clock_.MonotonicNow() < *due) return std::nullopt;
  return Close();
}

std::optional<v1::UploadBatch> Batcher::Close() {
  if (items_ == 0) return std::nullopt;
  v1::UploadBatch batch = std::move(open_);
  open_ = v1::UploadBatch{};
  items_ = 0;
  batch.set_schema_version(v1::SCHEMA_VERSION_1);
  batch.set_agent_id(identity_.agent_id);
  batch.set_boot_id(identity_.boot_id);
  batch.set_batch_seq(++last_seq_);
  batch.set_created_ns(clock_.RealtimeNow().time_since_epoch().count());
  return batch;
}

}  // namespace hostmesh::agent::upload
