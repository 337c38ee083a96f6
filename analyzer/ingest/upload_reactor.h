// One Upload stream. Reads run ahead of the store by up to
// max_in_flight_per_stream batches (and max_in_flight_bytes_per_stream); acks
// go out in the order the batches came in (a rejected batch waits behind the
// ones still committing).
//
// Messages arrive as raw bytes and are parsed here: a message that is not an
// UploadBatch ends the stream with INVALID_ARGUMENT (gRPC's own parser would
// make it look like the agent's half-close), a batch the peer may not send
// with PERMISSION_DENIED, and one past the global in-flight limit with
// RESOURCE_EXHAUSTED; the acks already decided go out first.
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
#include "analyzer/ingest/peer_identity.h"
#include "analyzer/ingest/refusal_tarpit.h"
#include "hostmesh/v1/ingest.grpc.pb.h"

namespace hostmesh::analyzer::ingest {

class UploadReactor final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // Streams refused for what their peer did end through `tarpit`.
  UploadReactor(IngestHandler& handler, RefusalTarpit& tarpit, PeerIdentity peer);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  // What OnReadDone does with a batch read (Judge).
  struct ReadVerdict {
    IngestHandler::Screened screened;
    std::size_t bytes = 0;  // taken from the in-flight budget
    bool taken = false;
    std::optional<grpc::Status> failure;
    bool refused = false;  // for what the peer sent
  };
  ReadVerdict Judge(store::OwnedBatch& batch, std::size_t wire_bytes, bool parsed);
  // A batch read, its ack not yet written.
  struct Slot {
    std::optional<v1::UploadAck> ack;  // set once decided
    // Of a batch taken to commit: its ack carries the agent's pending
    // capture requests (capture_outbox.h). Empty for a rejected batch, whose
    // agent id nothing vouches for.
    std::string agent_id;
  };
  // What to start once mu_ is released.
  struct Actions {
    bool read = false;
    std::optional<v1::UploadAck> write;
    std::optional<grpc::Status> finish;
    bool refused = false;  // finish through the tarpit
  };

  void OnCommitted(std::uint64_t slot, std::size_t bytes, std::optional<v1::UploadAck> ack,
                   const std::string& error);
  // Ends the stream after what is decided: no more reads, then Finish(status);
  // `refused`: for what the peer sent, so through the tarpit.
  void FailLocked(grpc::Status status, bool refused = false);
  // At the stream's start, before anything is read.
  void Refuse(grpc::Status status);
  // Finish(status) after the refusal delay (refusal_tarpit.h).
  void FinishRefused(grpc::Status status);
  Actions NextLocked();
  void Perform(Actions actions);

  IngestHandler& handler_;
  RefusalTarpit& tarpit_;
  const PeerIdentity peer_;
  const std::string peer_key_;  // StreamsPerPeer::KeyOf(peer_)
  bool counted_ = false;        // in its credential's open streams
  const std::shared_ptr<store::CommitLane> lane_ = std::make_shared<store::CommitLane>();
  grpc::ByteBuffer read_buffer_;   // owned by the read in progress
  grpc::ByteBuffer write_buffer_;  // owned by the write in progress

  std::mutex mu_;
  std::deque<Slot> slots_;
  std::uint64_t first_slot_ = 0;  // number of slots_.front()
  std::size_t committing_ = 0;
  std::size_t committing_bytes_ = 0;
  bool reading_ = false;        // a read is outstanding in gRPC
  bool handling_read_ = false;  // OnReadDone is queueing a batch
  bool writing_ = false;
  bool reads_over_ = false;              // the agent half-closed, or the stream broke
  bool writes_over_ = false;             // a write failed: the stream is gone
  std::optional<grpc::Status> failure_;  // why the stream ends early
  bool refused_ = false;                 // ...for what the peer sent
  bool finished_ = false;
};

}  // namespace hostmesh::analyzer::ingest
