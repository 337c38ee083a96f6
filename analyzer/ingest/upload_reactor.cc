#include "analyzer/ingest/upload_reactor.h"

#include <utility>

namespace hostmesh::analyzer::ingest {

UploadReactor::UploadReactor(IngestHandler& handler) : handler_(handler) {
  handler_.stats().streams_open.Increment();
  reading_ = true;
  StartRead(&read_.get());
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
  store::OwnedBatch batch = std::exchange(read_, store::OwnedBatch::OnArena());
  std::optional<v1::UploadAck> rejected = handler_.Screen(batch.get());

  std::unique_lock lock(mu_);
  reading_ = false;
  // Until the commit is queued no other thread may start the next read (its
  // batch would overtake this one in the committer) nor Finish (it would
  // delete `this` under us): handling_read_ holds both off.
  handling_read_ = true;
  const std::uint64_t slot = first_slot_ + slots_.size();
  // After a store failure the stream is ending: later batches are dropped
  // unacked, and the agent resends them.
  const bool commit = !rejected && !store_error_;
  if (rejected || commit) slots_.push_back(Slot{std::move(rejected)});
  if (commit) ++committing_;
  lock.unlock();
  if (commit) {
    // The callback may even run inline (committer stopped): it cannot Finish.
    handler_.Commit(lane_, std::move(batch),
                    [this, slot](std::optional<v1::UploadAck> ack, const std::string& error) {
                      OnCommitted(slot, std::move(ack), error);
                    });
  }
  lock.lock();
  handling_read_ = false;
  Actions actions = NextLocked();
  lock.unlock();
  Perform(std::move(actions));
}

void UploadReactor::OnCommitted(std::uint64_t slot, std::optional<v1::UploadAck> ack,
                                const std::string& error) {
  std::unique_lock lock(mu_);
  --committing_;
  if (ack) {
    // Slots are gone when the stream broke (writes_over_): nobody to tell.
    if (slot >= first_slot_ && slot - first_slot_ < slots_.size()) {
      slots_[slot - first_slot_].ack = std::move(ack);
    }
  } else if (!store_error_) {
    store_error_ = error;
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
    // After a store failure only the acks decided before it go out: the failed
    // batch never gets one, so it blocks the ones behind it, as it should.
    actions.write = std::move(*slots_.front().ack);
    slots_.pop_front();
    ++first_slot_;
    writing_ = true;
  }
  const bool broken = writes_over_ || store_error_.has_value();
  if (!broken && !reads_over_ && !reading_ && !handling_read_ &&
      slots_.size() < handler_.options().max_in_flight_per_stream) {
    reading_ = true;
    actions.read = true;
  }
  // A broken stream finishes with a read still pending: Finish fails it, and
  // OnDone waits for that reaction.
  const bool drained = slots_.empty() || (broken && !slots_.front().ack);
  if ((reads_over_ || broken) && !handling_read_ && !writing_ && committing_ == 0 && drained) {
    finished_ = true;
    actions.finish = store_error_ ? grpc::Status(grpc::StatusCode::UNAVAILABLE, *store_error_)
                                  : grpc::Status::OK;
  }
  return actions;
}

void UploadReactor::Perform(Actions actions) {
  if (actions.read) StartRead(&read_.get());
  if (actions.write) {
    write_buffer_ = std::move(*actions.write);
    StartWrite(&write_buffer_);
  }
  if (actions.finish) Finish(*actions.finish);  // the last touch of `this`
}

}  // namespace hostmesh::analyzer::ingest
