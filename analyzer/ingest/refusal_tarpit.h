// Upload streams refused for what their peer did (bytes that are no batch,
// another agent's id, over its quota or its stream limit), and Hellos refused
// for another host's name or a malformed Hello, are finished after a delay,
// not at once. Refusing costs the analyzer about half a millisecond
// of CPU per stream; a peer that reopens refused streams as fast as it can
// would otherwise take the CPU the fleet's acks need (bench/ingest_bench
// --hostile). Held, a refused stream still occupies its place among its
// certificate's streams (grpc.max_streams_per_agent) and its connection's
// (GRPC_ARG_MAX_CONCURRENT_STREAMS), so a peer gets a handful of refusals a
// second per connection. An honest agent refused (over its quota) backs off
// anyway; it only learns a second later.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace hostmesh::analyzer::ingest {

class RefusalTarpit {
 public:
  explicit RefusalTarpit(std::chrono::milliseconds delay);
  ~RefusalTarpit();  // Release()s first
  RefusalTarpit(const RefusalTarpit&) = delete;
  RefusalTarpit& operator=(const RefusalTarpit&) = delete;

  // Runs `finish` on the tarpit's thread once the delay has passed, or at
  // once (on the caller's) after Release.
  void Hold(std::function<void()> finish);
  // Runs whatever is held now, and from then on runs at once what is held
  // (the server is shutting down and waits for every call to finish).
  void Release();
  std::size_t held() const;

 private:
  using Due = std::chrono::steady_clock::time_point;
  void Run();

  const std::chrono::milliseconds delay_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<Due, std::function<void()>>> held_;  // in due order: one delay for all
  bool released_ = false;
  std::thread thread_;
};

}  // namespace hostmesh::analyzer::ingest
