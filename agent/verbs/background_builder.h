#pragma once

// Runs slow construction jobs (ibv_create_ah, which may resolve a neighbour)
// on a thread of its own, so the probing loop never waits for them. The loop
// submits jobs and takes the finished results when `on_done` (called on the
// worker after each result: the transport writes its wake-up eventfd) says
// there are some. Jobs run one at a time, in submission order.
//
// A job points at objects the loop owns (a protection domain): before one of
// them goes, Forget drops the jobs and results that use it and waits for a
// running one to finish. Templated so tests run it with fake jobs.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace hostmesh::agent::verbs {

template <typename Job, typename Result>
class BackgroundBuilder {
 public:
  using Make = std::function<Result(const Job&)>;

  BackgroundBuilder(Make make, std::function<void()> on_done)
      : make_(std::move(make)), on_done_(std::move(on_done)) {}
  ~BackgroundBuilder() { Stop(); }
  BackgroundBuilder(const BackgroundBuilder&) = delete;
  BackgroundBuilder& operator=(const BackgroundBuilder&) = delete;

  // Queues a job; the thread starts with the first.
  void Submit(Job job) {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    queue_.push_back(std::move(job));
    if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
    work_.notify_one();
  }

  // The results finished since the last call, in order.
  std::vector<Result> TakeDone() {
    std::lock_guard lock(mu_);
    return std::exchange(done_, {});
  }

  // Drops the queued jobs and finished results `matches` names (results are
  // destroyed here, on the caller's thread) and waits for a running job it
  // names to finish, whose result is dropped too. Returns the dropped jobs.
  template <typename Pred>
  std::vector<Job> Forget(Pred matches) {
    std::unique_lock lock(mu_);
    std::vector<Job> dropped;
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (matches(*it)) {
        dropped.push_back(std::move(*it));
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    idle_.wait(lock, [&] { return !running_ || !matches(*running_); });
    std::erase_if(done_, [&](const Result& r) { return matches(r); });
    return dropped;
  }

  // Joins the thread; queued jobs are dropped, finished results destroyed.
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stopped_ = true;
      queue_.clear();
      work_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
    std::lock_guard lock(mu_);
    done_.clear();
  }

  std::size_t queued() const {
    std::lock_guard lock(mu_);
    return queue_.size() + (running_ ? 1 : 0);
  }

 private:
  void Run() {
    std::unique_lock lock(mu_);
    for (;;) {
      work_.wait(lock, [&] { return stopped_ || !queue_.empty(); });
      if (stopped_) return;
      running_ = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      Result result = make_(*running_);
      lock.lock();
      done_.push_back(std::move(result));
      running_.reset();
      idle_.notify_all();
      lock.unlock();
      if (on_done_) on_done_();
      lock.lock();
    }
  }

  const Make make_;
  const std::function<void()> on_done_;
  mutable std::mutex mu_;
  std::condition_variable work_;
  std::condition_variable idle_;  // a running job finished
  std::deque<Job> queue_;
  std::optional<Job> running_;
  std::vector<Result> done_;
  bool stopped_ = false;
  std::thread thread_;  // last: started after everything it uses
};

}  // namespace hostmesh::agent::verbs
