// Group commit: one thread takes every batch queued since its last write and
// commits them in one synced WriteBatch, so N concurrent streams pay for one
// fsync instead of N. While a group's fsync runs the next group gathers; under
// load groups grow by themselves, at low load a batch waits for at most one
// fsync. Callers never block on the disk (gRPC callback threads must not).
//
// What follows a write (the Done callbacks: acks to the agents, the analysis
// feed, dropping the batches) runs on a second thread, group after group in
// commit order, so the next write need not wait for it: at 10,000 agents
// that work is as long as the write itself.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "analyzer/store/owned_batch.h"
#include "analyzer/store/store.h"
#include "common/base/clock.h"

namespace hostmesh::analyzer::store {

struct GroupCommitOptions {
  std::size_t max_group_batches = 4096;
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
  // Runs on the completion thread after the write returned, in commit order.
  // `batch` is the one submitted, still intact (a result sink may read it);
  // must not block.
  using Done = std::function<void(const CommitReport& report, v1::UploadBatch& batch)>;

  GroupCommitter(const Clock& clock, Store& store, GroupCommitOptions options = {});
  // Commits what is queued, then stops.
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Encodes the batch on the caller's thread and queues it. After Stop, `done`
  // runs at once with kFailed.
  void Submit(std::shared_ptr<CommitLane> lane, OwnedBatch batch, Done done);

  // Commits everything queued and runs its callbacks, then joins the threads.
  // Idempotent.
  void Stop();

  std::uint64_t groups_written() const;

 private:
  struct Job {
    std::shared_ptr<CommitLane> lane;
    OwnedBatch batch;
    PreparedBatch prepared;
    Done done;
    MonoTime submitted;
  };
  // A group whose write returned, waiting for its callbacks.
  struct Written {
    std::deque<Job> jobs;
    std::vector<CommitReport> reports;
  };
  void Run();
  void RunCompletions();
  Written CommitGroup(std::deque<Job> group);

  const Clock& clock_;
  Store& store_;
  const GroupCommitOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stop_ = false;
  std::uint64_t groups_ = 0;

  std::mutex written_mu_;
  std::condition_variable written_cv_;
  std::deque<Written> written_;
  bool committer_done_ = false;  // no more groups will be written

  std::thread thread_;
  std::thread completion_thread_;
};

}  // namespace hostmesh::analyzer::store
