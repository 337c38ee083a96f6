#include "analyzer/ingest/refusal_tarpit.h"

#include <pthread.h>

#include <vector>

namespace hostmesh::analyzer::ingest {

RefusalTarpit::RefusalTarpit(std::chrono::milliseconds delay)
    : delay_(delay), thread_([this] { Run(); }) {}

RefusalTarpit::~RefusalTarpit() {
  Release();
  thread_.join();
}

void RefusalTarpit::Hold(std::function<void()> finish) {
  {
    std::lock_guard lock(mu_);
    if (!released_) {
      held_.emplace_back(std::chrono::steady_clock::now() + delay_, std::move(finish));
      cv_.notify_one();
      return;
    }
  }
  finish();
}

void RefusalTarpit::Release() {
  std::deque<std::pair<Due, std::function<void()>>> now;
  {
    std::lock_guard lock(mu_);
    released_ = true;
    now.swap(held_);
    cv_.notify_one();
  }
  for (auto& [due, finish] : now) finish();
}

std::size_t RefusalTarpit::held() const {
  std::lock_guard lock(mu_);
  return held_.size();
}

void RefusalTarpit::Run() {
  pthread_setname_np(pthread_self(), "ingest-tarpit");
  std::unique_lock lock(mu_);
  while (!released_) {
    if (held_.empty()) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, held_.front().first) == std::cv_status::no_timeout) continue;
    std::vector<std::function<void()>> due;
    const Due now = std::chrono::steady_clock::now();
    while (!held_.empty() && held_.front().first <= now) {
      due.push_back(std::move(held_.front().second));
      held_.pop_front();
    }
    lock.unlock();
    for (auto& finish : due) finish();
    lock.lock();
  }
}

}  // namespace hostmesh::analyzer::ingest
