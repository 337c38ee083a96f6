#include "analyzer/store/group_committer.h"

#include <pthread.h>

#include <utility>
#include <vector>

namespace hostmesh::analyzer::store {

GroupCommitter::GroupCommitter(const Clock& clock, Store& store, GroupCommitOptions options)
    : clock_(clock), store_(store), options_(options) {
  // Named for top -H and profiles.
  completion_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "commit-done");
    RunCompletions();
  });
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "group-commit");
    Run();
  });
}

GroupCommitter::~GroupCommitter() {
  Stop();
}

void GroupCommitter::Submit(std::shared_ptr<CommitLane> lane, OwnedBatch batch, Done done) {
  Job job{std::move(lane), std::move(batch), {}, std::move(done), clock_.MonotonicNow()};
  job.prepared = Store::Prepare(job.batch.get());
  {
    std::lock_guard lock(mu_);
    if (!stop_) {
      queue_.push_back(std::move(job));
      cv_.notify_one();
      return;
    }
  }
  CommitReport report;
  report.outcome = {CommitStatus::kFailed, "the store is shutting down"};
  job.done(report, job.batch.get());
}

void GroupCommitter::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(written_mu_);
    committer_done_ = true;
  }
  written_cv_.notify_all();
  if (completion_thread_.joinable()) completion_thread_.join();
}

std::uint64_t GroupCommitter::groups_written() const {
  std::lock_guard lock(mu_);
  return groups_;
}

void GroupCommitter::Run() {
  for (;;) {
    std::deque<Job> group;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything is committed
      std::size_t bytes = 0;
      while (!queue_.empty() && group.size() < options_.max_group_batches &&
             (group.empty() || bytes + queue_.front().prepared.bytes <= options_.max_group_bytes)) {
        bytes += queue_.front().prepared.bytes;
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    Written written = CommitGroup(std::move(group));
    {
      std::lock_guard lock(written_mu_);
      written_.push_back(std::move(written));
    }
    written_cv_.notify_one();
  }
}

void GroupCommitter::RunCompletions() {
  for (;;) {
    Written group;
    {
      std::unique_lock lock(written_mu_);
      written_cv_.wait(lock, [this] { return committer_done_ || !written_.empty(); });
      if (written_.empty()) return;  // the committer is gone and every group is done
      group = std::move(written_.front());
      written_.pop_front();
    }
    for (std::size_t i = 0; i < group.jobs.size(); ++i) {
      group.jobs[i].done(group.reports[i], group.jobs[i].batch.get());
    }
  }
}

GroupCommitter::Written GroupCommitter::CommitGroup(std::deque<Job> group) {
  std::vector<const PreparedBatch*> writing;
  std::vector<std::size_t> index;  // group position of each written batch
  std::vector<CommitReport> reports(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (group[i].lane && group[i].lane->failed) {
      reports[i].outcome = {CommitStatus::kFailed, "an earlier batch of this stream failed"};
      continue;
    }
    writing.push_back(&group[i].prepared);
    index.push_back(i);
  }
  const std::vector<CommitOutcome> outcomes = store_.Commit(writing);
  for (std::size_t k = 0; k < outcomes.size(); ++k) reports[index[k]].outcome = outcomes[k];
  {
    std::lock_guard lock(mu_);
    ++groups_;
  }
  const MonoTime now = clock_.MonotonicNow();
  for (std::size_t i = 0; i < group.size(); ++i) {
    Job& job = group[i];
    // Here, not with the callbacks: the next group's check must see it.
    if (reports[i].outcome.status == CommitStatus::kFailed && job.lane) job.lane->failed = true;
    reports[i].latency = now - job.submitted;
    reports[i].group_batches = writing.size();
    job.prepared = {};  // its bytes are in the store now
  }
  return {std::move(group), std::move(reports)};
}

}  // namespace hostmesh::analyzer::store
