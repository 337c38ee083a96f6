#include "analyzer/ingest/upload_reactor.h"

#include <grpcpp/support/proto_buffer_reader.h>

#include <algorithm>
#include <utility>

#include "analyzer/ingest/batch_header.h"

namespace hostmesh::analyzer::ingest {

namespace {

// What a batch holds in memory on its arena (about twice its wire size).
std::size_t MemoryBytes(const v1::UploadBatch& batch, std::size_t wire_bytes) {
  const google::protobuf::Arena* arena = batch.GetArena();
  return std::max<std::size_t>(arena != nullptr ? arena->SpaceAllocated() : 0, wire_bytes);
}

bool Parse(grpc::ByteBuffer& buffer, v1::UploadBatch& batch) {
  grpc::ProtoBufferReader reader(&buffer);
  return batch.ParseFromZeroCopyStream(&reader) && reader.status().ok();
}

bool ParseHeader(grpc::ByteBuffer& buffer, v1::UploadBatch& header) {
  grpc::ProtoBufferReader reader(&buffer);
  return ReadBatchHeader(reader, header) && reader.status().ok();
}

}  // namespace

UploadReactor::UploadReactor(IngestHandler& handler, RefusalTarpit& tarpit, PeerIdentity peer)
    : handler_(handler),
      tarpit_(tarpit),
      peer_(std::move(peer)),
      peer_key_(StreamsPerPeer::KeyOf(peer_)) {
  handler_.stats().streams_open.Increment();
  // Refusals before a byte is read: the agent backs off and keeps its data.
  std::optional<std::string> refused = handler_.OpenStream(peer_key_, peer_);
  counted_ = !refused;
  if (refused) {
    Refuse(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, std::move(*refused)));
    return;
  }
  // Counted while held in the tarpit: a place of its certificate's.
  if (handler_.InDebt(peer_key_, peer_)) {
    handler_.stats().streams_over_quota.Increment();
    Refuse(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "this certificate's agents are over their byte quota "
                        "(grpc.agent_bytes_per_second); retry after a backoff"));
    return;
  }
  reading_ = true;
  StartRead(&read_buffer_);
}

void UploadReactor::Refuse(grpc::Status status) {
  finished_ = true;
  FinishRefused(std::move(status));
}

void UploadReactor::FinishRefused(grpc::Status status) {
  tarpit_.Hold([this, status = std::move(status)] { Finish(status); });
}

// What becomes of a batch read: garbage, denied, over quota, rejected item
// by item, refused for memory, or taken into the in-flight budget to commit.
UploadReactor::ReadVerdict UploadReactor::Judge(store::OwnedBatch& batch, std::size_t wire_bytes,
                                                bool parsed) {
  ReadVerdict v;
  if (!parsed) {
    handler_.stats().streams_garbage.Increment();
    handler_.ChargeRefused(peer_, "", wire_bytes);  // the stream ends either way
    v.refused = true;
    v.failure = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                             "a message of " + std::to_string(wire_bytes) +
                                 " bytes on the Upload stream is not a hostmesh.v1.UploadBatch");
  } else {
    v.screened = handler_.Screen(batch.get(), wire_bytes, peer_);
    if (v.screened.denied) {
      v.refused = true;
      v.failure = grpc::Status(grpc::StatusCode::PERMISSION_DENIED, *v.screened.denied);
    } else if (v.screened.over_quota) {
      v.refused = true;
      v.failure = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, *v.screened.over_quota);
    } else if (!v.screened.rejected) {
      v.bytes = MemoryBytes(batch.get(), wire_bytes);
      v.taken = handler_.TakeInFlight(v.bytes);
      if (!v.taken) {
        handler_.stats().streams_overloaded.Increment();
        v.failure = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                 "the analyzer holds its limit of batches not yet durable (" +
                                     std::to_string(handler_.options().max_in_flight_bytes) +
                                     " bytes); retry after a backoff");
      }
    }
  }
  return v;
}

void UploadReactor::OnReadDone(bool ok) {
  if (!ok) {
    std::unique_lock lock(mu_);
    reading_ = false;
    reads_over_ = true;
    Actions actions = NextLocked();
    lock.unlock();
    Perform(std::move(actions));
    return;
  }
  const std::size_t wire_bytes = read_buffer_.Length();
  store::OwnedBatch batch = store::OwnedBatch::OnArena();
  // Over the size limit it is refused whatever it holds: its header is enough
  // for the refusal, its items are not parsed (batch_header.h).
  const bool parsed = wire_bytes > handler_.options().limits.max_batch_bytes
                          ? ParseHeader(read_buffer_, batch.get())
                          : Parse(read_buffer_, batch.get());
  read_buffer_.Clear();
  ReadVerdict verdict = Judge(batch, wire_bytes, parsed);
  IngestHandler::Screened& screened = verdict.screened;
  const std::size_t bytes = verdict.bytes;
  const bool taken = verdict.taken;
  std::optional<grpc::Status>& failure = verdict.failure;
  const bool refused = verdict.refused;

  std::unique_lock lock(mu_);
  reading_ = false;
  // Until the commit is queued no other thread may start the next read (its
  // batch would overtake this one in the committer) nor Finish (it would
  // delete `this` under us): handling_read_ holds both off.
  handling_read_ = true;
  if (failure) FailLocked(std::move(*failure), refused);
  const std::uint64_t slot = first_slot_ + slots_.size();
  // After a failure the stream is ending: later batches are dropped unacked,
  // and the agent resends them.
  const bool commit = taken && !failure_;
  if (screened.rejected || commit) {
    slots_.push_back(Slot{std::move(screened.rejected), commit ? batch.get().agent_id() : ""});
  }
  if (commit) {
    ++committing_;
    committing_bytes_ += bytes;
  } else if (taken) {
    handler_.GiveInFlight(bytes);
  }
  lock.unlock();
  if (commit) {
    // The callback may even run inline (committer stopped): it cannot Finish.
    handler_.Commit(
        lane_, std::move(batch), std::move(screened.agent),
        [this, slot, bytes](std::optional<v1::UploadAck> ack, const std::string& error) {
          OnCommitted(slot, bytes, std::move(ack), error);
        });
  }
  lock.lock();
  handling_read_ = false;
  Actions actions = NextLocked();
  lock.unlock();
  Perform(std::move(actions));
}

void UploadReactor::FailLocked(grpc::Status status, bool refused) {
  if (failure_) return;
  failure_ = std::move(status);
  refused_ = refused;
}

void UploadReactor::OnCommitted(std::uint64_t slot, std::size_t bytes,
                                std::optional<v1::UploadAck> ack, const std::string& error) {
  handler_.GiveInFlight(bytes);
  std::unique_lock lock(mu_);
  --committing_;
  committing_bytes_ -= bytes;
  if (ack) {
    // Slots are gone when the stream broke (writes_over_): nobody to tell.
    if (slot >= first_slot_ && slot - first_slot_ < slots_.size()) {
      slots_[slot - first_slot_].ack = std::move(ack);
    }
  } else {
    FailLocked(grpc::Status(grpc::StatusCode::UNAVAILABLE, error));
  }
  Actions actions = NextLocked();
  lock.unlock();
  Perform(std::move(actions));
}

void UploadReactor::OnWriteDone(bool ok) {
  std::unique_lock lock(mu_);
  writing_ = false;
  if (!ok) writes_over_ = true;
  Actions actions = NextLocked();
  lock.unlock();
  Perform(std::move(actions));
}

void UploadReactor::OnDone() {
  if (counted_) handler_.CloseStream(peer_key_);
  handler_.stats().streams_open.Decrement();
  delete this;
}

UploadReactor::Actions UploadReactor::NextLocked() {
  Actions actions;
  if (finished_) return actions;
  if (writes_over_) {
    first_slot_ += slots_.size();
    slots_.clear();  // nobody left to tell
  } else if (!writing_ && !slots_.empty() && slots_.front().ack) {
    // After a failure only the acks decided before it go out: a batch that
    // failed to commit never gets one, so it blocks the ones behind it.
    actions.write = std::move(*slots_.front().ack);
    if (CaptureOutbox* outbox = handler_.options().captures;
        outbox != nullptr && !slots_.front().agent_id.empty()) {
      outbox->AttachTo(slots_.front().agent_id, *actions.write);
    }
    slots_.pop_front();
    ++first_slot_;
    writing_ = true;
  }
  const bool broken = writes_over_ || failure_.has_value();
  const IngestOptions& options = handler_.options();
  if (!broken && !reads_over_ && !reading_ && !handling_read_ &&
      slots_.size() < options.max_in_flight_per_stream &&
      committing_bytes_ < options.max_in_flight_bytes_per_stream) {
    reading_ = true;
    actions.read = true;
  }
  // A broken stream finishes with a read still pending: Finish fails it, and
  // OnDone waits for that reaction.
  const bool drained = slots_.empty() || (broken && !slots_.front().ack);
  if ((reads_over_ || broken) && !handling_read_ && !writing_ && committing_ == 0 && drained) {
    finished_ = true;
    actions.finish = failure_ ? *failure_ : grpc::Status::OK;
    actions.refused = refused_;  // only ever set with failure_
  }
  return actions;
}

void UploadReactor::Perform(Actions actions) {
  if (actions.read) StartRead(&read_buffer_);
  if (actions.write) {
    write_buffer_.Clear();
    bool own_buffer = false;
    grpc::SerializationTraits<v1::UploadAck>::Serialize(*actions.write, &write_buffer_,
                                                        &own_buffer);
    StartWrite(&write_buffer_);
  }
  // The last touch of `this`.
  if (actions.finish && actions.refused) {
    FinishRefused(std::move(*actions.finish));
  } else if (actions.finish) {
    Finish(*actions.finish);
  }
}

}  // namespace hostmesh::analyzer::ingest
