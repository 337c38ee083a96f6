// Group commit: one thread takes every batch queued since its last write and
// commits them in one synced WriteBatch, so N concurrent streams pay for one
// fsync instead of N. While a group's fsync runs the next group gathers; under
// load groups grow by themselves, at low load a batch waits for at most one
// fsync. Callers never block on the disk (gRPC callback threads must not).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "analyzer/store/store.h"
#include "common/base/clock.h"

namespace hostmesh::analyzer::store {

struct GroupCommitOptions {
  std::size_t max_group_batches = 512;
  std::size_t max_group_bytes = 64 << 20;
};

// The batches of one upload stream. After a failed write every later batch of
// its lane fails too, unwritten: an agent then learns (HelloReply) a durable
// prefix with no holes, and resends from the first failure.
struct CommitLane {
  bool failed = false;  // touched only by the committer thread
};

struct CommitReport {
  CommitOutcome outcome;
  std::chrono::nanoseconds latency{0};  // from Submit to durable (or failed)
  std::size_t group_batches = 0;        // batches in the write that carried it
};

class GroupCommitter {
 public:
  // Runs on the committer thread after the write returned. `batch` is the one
  // submitted, still intact (a result sink may read it); must not block.
  using Done = std::function<void(const CommitReport& report, v1::UploadBatch& batch)>;

  GroupCommitter(const Clock& clock, Store& store, GroupCommitOptions options = {});
  // Commits what is queued, then stops.
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Encodes the batch on the caller's thread and queues it. After Stop, `done`
  // runs at once with kFailed.
  void Submit(std::shared_ptr<CommitLane> lane, v1::UploadBatch batch, Done done);

  // Commits everything queued, then joins the thread. Idempotent.
  void Stop();

  std::uint64_t groups_written() const;

 private:
  struct Job {
    std::shared_ptr<CommitLane> lane;
    v1::UploadBatch batch;
    PreparedBatch prepared;
    Done done;
    MonoTime submitted;
  };
  void Run();
  void CommitGroup(std::deque<Job>& group);

  const Clock& clock_;
  Store& store_;
  const GroupCommitOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stop_ = false;
  std::uint64_t groups_ = 0;
  std::thread thread_;
};

}  // namespace hostmesh::analyzer::store
