// One Upload stream. Reads run ahead of the store by up to
// max_in_flight_per_stream batches; acks go out in the order the batches came
// in (a rejected batch waits behind the ones still committing).
//
// Batches are queued for commit in the order read (the next read starts only
// after the last batch is queued), so a stream's batches become durable in
// order and the sink sees them in order.
//
// Threads: gRPC reactions (OnReadDone, OnWriteDone, OnDone) and the committer's
// callback. Each computes what to start under mu_ and starts it after
// releasing it, because gRPC may run a reaction inline. Finish is issued only
// when no read, write or commit is outstanding, and is the last thing done with
// `this`: OnDone deletes the reactor.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "analyzer/ingest/ingest_handler.h"
#include "hostmesh/v1/ingest.grpc.pb.h"

namespace hostmesh::analyzer::ingest {

class UploadReactor final : public grpc::ServerBidiReactor<v1::UploadBatch, v1::UploadAck> {
 public:
  explicit UploadReactor(IngestHandler& handler);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  // A batch read, its ack not yet written.
  struct Slot {
    std::optional<v1::UploadAck> ack;  // set once decided
  };
  // What to start once mu_ is released.
  struct Actions {
    bool read = false;
    std::optional<v1::UploadAck> write;
    std::optional<grpc::Status> finish;
  };

  void OnCommitted(std::uint64_t slot, std::optional<v1::UploadAck> ack, const std::string& error);
  Actions NextLocked();
  void Perform(Actions actions);

  IngestHandler& handler_;
  const std::shared_ptr<store::CommitLane> lane_ = std::make_shared<store::CommitLane>();
  store::OwnedBatch read_ = store::OwnedBatch::OnArena();  // the read in progress (owned_batch.h)
  v1::UploadAck write_buffer_;                             // owned by the write in progress

  std::mutex mu_;
  std::deque<Slot> slots_;
  std::uint64_t first_slot_ = 0;  // number of slots_.front()
  std::size_t committing_ = 0;
  bool reading_ = false;        // a read is outstanding in gRPC
  bool handling_read_ = false;  // OnReadDone is queueing a batch
  bool writing_ = false;
  bool reads_over_ = false;   // the agent half-closed, or the stream broke
  bool writes_over_ = false;  // a write failed: the stream is gone
  std::optional<std::string> store_error_;
  bool finished_ = false;
};

}  // namespace hostmesh::analyzer::ingest
