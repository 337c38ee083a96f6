// An upload batch with the memory it lives in. Ingest parses each batch into
// an arena of its own: a batch of 80 results and their path reports is some
// 150 objects and strings, which on the heap cost as many mallocs to parse and
// as many frees to drop (a sixth of ingest's CPU at 10,000 agents); on an
// arena they are one block, dropped at once when the committer is done.
// Blocks come from a pool shared by all batches: taken by a gRPC thread,
// given back by the committer, so the heap neither grows nor shrinks (and
// the kernel zeroes no fresh pages) batch after batch.
#pragma once

#include <google/protobuf/arena.h>

#include <memory>
#include <utility>

#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::analyzer::store {

class OwnedBatch {
 public:
  // Arena blocks: a steady-state batch (80 results, a few path reports, about
  // 10 KiB of objects) fits one.
  static constexpr std::size_t kBlockBytes = 16 << 10;
  // Pooled blocks kept at most (the rest go back to the heap): 64 MiB.
  static constexpr std::size_t kMaxPooledBlocks = 4096;

  // An empty batch on a fresh arena (its first block taken on first use), to
  // parse into.
  static OwnedBatch OnArena();
  // A batch built on the heap (tests, tools).
  OwnedBatch(v1::UploadBatch batch)  // NOLINT: implicit on purpose, a batch is one
      : heap_(std::make_unique<v1::UploadBatch>(std::move(batch))), batch_(heap_.get()) {}
  OwnedBatch(OwnedBatch&&) noexcept = default;
  OwnedBatch& operator=(OwnedBatch&&) noexcept = default;

  v1::UploadBatch& get() { return *batch_; }
  const v1::UploadBatch& get() const { return *batch_; }

 private:
  OwnedBatch() = default;

  // Declared before batch_: an arena batch dies with its arena.
  std::unique_ptr<google::protobuf::Arena> arena_;
  std::unique_ptr<v1::UploadBatch> heap_;
  v1::UploadBatch* batch_ = nullptr;
};

}  // namespace hostmesh::analyzer::store
