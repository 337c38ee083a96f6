// The builder thread with fake jobs: jobs run off the caller's thread, in
// order; results are taken once; Forget drops a NIC's jobs and results and
// waits out its running job; Stop drops what is left. No sleeps: the test
// synchronizes on on_done and on promises.
#include "agent/verbs/background_builder.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace hostmesh::agent::verbs {
namespace {

struct Job {
  int src;
  int value;
};
struct Result {
  int src;
  int value;
  std::thread::id ran_on;
};

// Counts on_done calls; WaitFor blocks until n have happened.
struct DoneCounter {
  std::mutex mu;
  std::condition_variable cv;
  int count = 0;
  void Bump() {
    std::lock_guard lock(mu);
    ++count;
    cv.notify_all();
  }
  void WaitFor(int n) {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return count >= n; });
  }
};

TEST(BackgroundBuilder, RunsJobsOffTheCallersThreadInOrder) {
  DoneCounter done;
  BackgroundBuilder<Job, Result> builder(
      [](const Job& j) {
        return Result{j.src, j.value * 10, std::this_thread::get_id()};
      },
      [&] { done.Bump(); });
  for (int i = 1; i <= 5; ++i) builder.Submit({0, i});
  done.WaitFor(5);
  const std::vector<Result> results = builder.TakeDone();
  ASSERT_EQ(results.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(results[static_cast<std::size_t>(i)].value, (i + 1) * 10);
    EXPECT_NE(results[static_cast<std::size_t>(i)].ran_on, std::this_thread::get_id());
  }
  EXPECT_TRUE(builder.TakeDone().empty());
}

TEST(BackgroundBuilder, ForgetDropsANicsJobsAndWaitsOutItsRunningJob) {
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  DoneCounter done;
  BackgroundBuilder<Job, Result> builder(
      [&](const Job& j) {
        if (j.value == 1) {  // the first job blocks until the test lets it go
          started.set_value();
          released.wait();
        }
        return Result{j.src, j.value, std::this_thread::get_id()};
      },
      [&] { done.Bump(); });
  builder.Submit({7, 1});  // NIC 7, running
  started.get_future().wait();
  builder.Submit({7, 2});  // NIC 7, queued
  builder.Submit({8, 3});  // NIC 8, queued
  // Job 1 is let go only once Forget has taken NIC 7's queued job out (3
  // jobs left: 2 -> 3 -> 2), so Forget is then waiting for job 1.
  ASSERT_EQ(builder.queued(), 3u);
  std::thread releasing([&] {
    while (builder.queued() != 2) std::this_thread::yield();
    release.set_value();
  });
  const std::vector<Job> dropped = builder.Forget([](const auto& x) { return x.src == 7; });
  releasing.join();
  ASSERT_EQ(dropped.size(), 1u);  // the queued one; the running one was waited out
  EXPECT_EQ(dropped[0].value, 2);
  done.WaitFor(2);  // job 1 (dropped after it ran) and NIC 8's job 3
  const std::vector<Result> results = builder.TakeDone();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].src, 8);
}

TEST(BackgroundBuilder, StopDropsWhatIsLeft) {
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  BackgroundBuilder<Job, Result> builder(
      [&](const Job& j) {
        if (j.value == 1) {
          started.set_value();
          released.wait();
        }
        return Result{j.src, j.value, std::this_thread::get_id()};
      },
      nullptr);
  builder.Submit({0, 1});
  started.get_future().wait();
  builder.Submit({0, 2});
  EXPECT_EQ(builder.queued(), 2u);
  std::thread stopping([&] { builder.Stop(); });
  release.set_value();
  stopping.join();
  EXPECT_TRUE(builder.TakeDone().empty());
  builder.Submit({0, 3});  // after Stop: ignored
  EXPECT_EQ(builder.queued(), 0u);
}

}  // namespace
}  // namespace hostmesh::agent::verbs
