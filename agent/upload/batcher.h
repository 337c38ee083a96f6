#pragma once

#include <google/protobuf/arena.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "agent/core/probe_types.h"
#include "agent/upload/shared_batch.h"
#include "common/base/clock.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::agent::upload {

// Who the batches belong to: the analyzer deduplicates on (agent_id, boot_id,
// batch_seq), so these never change for the life of a Batcher.
struct BatchIdentity {
  std::string agent_id;
  std::uint64_t boot_id = 0;
};

// Groups probe results, path reports and NIC telemetry into UploadBatch messages.
// A batch closes when it holds `max_items` items (all kinds together) or when its oldest item is
// `max_age` old, so a quiet agent still uploads within max_age. Closed batches get
// batch_seq 1, 2, 3, ... with no gaps: the analyzer reads a gap as lost data.
// Each batch is built in a protobuf arena of its own: adding an item is a bump
// of a pointer rather than a heap allocation, and the whole batch is freed at
// once when the last holder lets go.
class Batcher {
 public:
  // A `max_items` of 0 is taken as 1.
  Batcher(const Clock& clock, BatchIdentity identity, std::uint32_t max_items,
          std::chrono::nanoseconds max_age);

  // Each returns the batch this item filled, if it did (else null).
  SharedBatch Add(const v1::ProbeResult& result);
  SharedBatch Add(const v1::PathReport& path);
  SharedBatch Add(const v1::NicTelemetry& telemetry);
  // A flight record closes its batch at once: the analyzer asked for it, and
  // a batch carries at most one (the bound is kMaxFlightRecordsPerBatch).
  SharedBatch Add(const v1::FlightRecord& record);
  // A result appended to the batch's packed records (UploadBatch.packed_results):
  // a few varints, no message per result.
  SharedBatch AddResult(const ProbeResult& result);

  // When the open batch reaches max_age; nullopt while nothing is open. The I/O
  // loop sleeps until then.
  std::optional<MonoTime> Due() const;
  // Closes the open batch if it is due by the clock (else null).
  SharedBatch CloseIfDue();
  // Closes the open batch whatever its age (shutdown flush); null when empty.
  SharedBatch Close();

  // Stamped on every batch closed from now on (UploadBatch.load_shedding);
  // nullopt: none (self-protection off).
  void SetLoadShedding(std::optional<v1::LoadShedding> state) { shedding_ = std::move(state); }

  std::uint64_t last_batch_seq() const { return last_seq_; }
  std::uint32_t open_items() const { return items_; }

 private:
  // A batch and the arena it lives in.
  struct Building {
    explicit Building(const google::protobuf::ArenaOptions& options) : arena(options) {}
    google::protobuf::Arena arena;
    v1::UploadBatch* batch = nullptr;
  };
  std::optional<v1::LoadShedding> shedding_;
  // The open batch, started on the first item.
  v1::UploadBatch& Open();
  // Starts the age timer on the first item; closes when full.
  SharedBatch Added();

  const Clock& clock_;
  BatchIdentity identity_;
  std::uint32_t max_items_;
  std::chrono::nanoseconds max_age_;
  std::shared_ptr<Building> open_;  // null while no item is waiting
  std::uint32_t items_ = 0;
  MonoTime first_item_at_{};
  std::uint64_t last_seq_ = 0;
  // The open batch's packed records (PackedResults.records in its arena),
  // written in place without a bounds check per varint: the string is sized
  // ahead of the writes and cut to what was written when the batch closes.
  std::string* records_ = nullptr;
  std::size_t records_used_ = 0;
  std::size_t records_reserve_;  // the size a batch's records start at
  std::uint32_t packed_count_ = 0;
  std::int64_t previous_send_ns_ = 0;  // the last record's
};

}  // namespace hostmesh::agent::upload
