#pragma once

// Everything one window keeps while it is open: counters per NIC pair and per
// fabric path, failure groups, and latency sketches per host and rail. Nothing
// is kept per probe, so a window of 16 million results costs memory in
// proportion to hosts, paths and failures, not to results.

#include <cstdint>
#include <vector>

#include "analyzer/analysis/flap_watch.h"
#include "analyzer/analysis/flat_map.h"
#include "analyzer/analysis/path_table.h"
#include "analyzer/analysis/quantile_sketch.h"
#include "analyzer/analysis/types.h"

namespace hostmesh::analysis {

struct PairCounts {
  std::uint32_t traced_ok = 0;
  std::uint32_t traced_timeout = 0;
  std::uint32_t traced_slow = 0;  // of traced_ok
  std::uint32_t untraced_ok = 0;
  std::uint32_t untraced_timeout = 0;
  std::uint32_t untraced_slow = 0;  // of untraced_ok

  std::uint64_t total() const {
    return std::uint64_t{traced_ok} + traced_timeout + untraced_ok + untraced_timeout;
  }
  std::uint64_t timeouts() const { return std::uint64_t{traced_timeout} + untraced_timeout; }
};

struct HostWindow {
  std::uint32_t nics = 0;  // pairs is nics x nics, src-major
  std::vector<PairCounts> pairs;
  QuantileSketch latency;
  QuantileSketch processing;
  std::uint64_t results = 0;  // send failures not included
  // By sending NIC: probes it could not send (ProbeRecord::send_failed). Not
  // in pairs: they crossed no link, so they are no loss.
  std::vector<std::uint32_t> send_failures;

  PairCounts& Pair(NicId src, NicId dst);
  const PairCounts& Pair(NicId src, NicId dst) const { return pairs[src * nics + dst]; }
};

// Failed (or slow) probes of one NIC pair over one fabric path.
struct FailureGroups {
  static std::uint64_t Key(HostId host, NicId src, NicId dst, MiddleId middle) {
    return (std::uint64_t{host} << 32) | (std::uint64_t{src} << 27) | (std::uint64_t{dst} << 22) |
           middle;
  }
  FlatMap index;  // key -> position
  std::vector<std::uint64_t> keys;
  std::vector<std::uint32_t> counts;

  void Add(std::uint64_t key, std::uint32_t n = 1) {
    auto [pos, inserted] = index.Insert(key, static_cast<std::uint32_t>(keys.size()));
    if (inserted) {
      keys.push_back(key);
      counts.push_back(0);
    }
    counts[*pos] += n;
  }
  // Moves n failures of `from` (which holds at least n) to `to`; a group
  // left at 0 stays, as a group with no failures.
  void Move(std::uint64_t from, std::uint64_t to, std::uint32_t n) {
    counts[*index.Find(from)] -= n;
    Add(to, n);
  }
};

// Untraced results per probe 5-tuple. The tracer reaches a new source port
// after the probes do, so a path that arrives while the window is still open
// places them when it is judged (WindowAccumulator::ResolveLatePaths).
struct UntracedTuples {
  // Beyond this many 5-tuples per window (an analyzer restarted with no paths
  // for a large fleet) results stay untraced rather than grow memory.
  static constexpr std::size_t kMaxTuples = std::size_t{1} << 22;
  struct Counts {
    std::uint32_t ok = 0;
    std::uint32_t timeout = 0;
    std::uint32_t slow = 0;
  };
  FlatMap index;                    // PathTable::Key -> position
  std::vector<std::uint64_t> keys;  // PathTable::Key
  std::vector<Counts> counts;
  std::uint64_t overflow = 0;  // results not tracked because of kMaxTuples

  Counts* At(std::uint64_t key);  // nullptr when full
};

class WindowAccumulator {
 public:
  WindowAccumulator(std::int64_t start_ns, std::int64_t end_ns, std::int64_t slow_threshold_ns,
                    const FlapWatchList& watch = {})
      : start_ns_(start_ns),
        end_ns_(end_ns),
        slow_threshold_ns_(slow_threshold_ns),
        flaps_(watch, start_ns) {}

  // Precondition: nic ids < kMaxNics, rail >= 0.
  void Add(const ProbeRecord& r, MiddleId middle, int rail);
  // A probe `nic` of `host` could not send (precondition: nic < kMaxNics).
  void AddSendFailure(HostId host, NicId nic);
  // Starts loading the untraced index's slot of a 5-tuple (PathTable::Key)
  // that has no path, for its Add soon after.
  void PrefetchUntraced(std::uint64_t key) const { untraced_.index.Prefetch(key); }
  // Counts the untraced results whose 5-tuple has a path now as traced over
  // it. Call once, just before the window is judged; returns the results moved.
  std::uint64_t ResolveLatePaths(const PathTable& paths);

  std::int64_t start_ns() const { return start_ns_; }
  std::int64_t end_ns() const { return end_ns_; }
  std::int64_t slow_threshold_ns() const { return slow_threshold_ns_; }
  std::uint64_t results() const { return results_; }

  const std::vector<HostWindow>& hosts() const { return hosts_; }
  const std::vector<QuantileSketch>& rail_latency() const { return rail_latency_; }
  const std::vector<QuantileSketch>& rail_processing() const { return rail_processing_; }
  // Traced probes per fabric path: not timed out, and of those slow.
  const std::vector<std::uint32_t>& middle_ok() const { return middle_ok_; }
  const std::vector<std::uint32_t>& middle_slow() const { return middle_slow_; }
  // Network latency of the traced probes per fabric path (latency_hotspots.h).
  const std::vector<QuantileSketch>& middle_latency() const { return middle_latency_; }
  const FailureGroups& timeouts() const { return timeouts_; }
  const FailureGroups& slow() const { return slow_; }
  const UntracedTuples& untraced() const { return untraced_; }
  // Outcomes in time order of the components watched for flapping.
  FlapRecorder& flaps() { return flaps_; }
  const FlapRecorder& flaps() const { return flaps_; }
  std::size_t memory_bytes() const;

 private:
  std::int64_t start_ns_;
  std::int64_t end_ns_;
  std::int64_t slow_threshold_ns_;
  std::uint64_t results_ = 0;
  std::vector<HostWindow> hosts_;
  std::vector<QuantileSketch> rail_latency_;
  std::vector<QuantileSketch> rail_processing_;
  std::vector<std::uint32_t> middle_ok_;
  std::vector<std::uint32_t> middle_slow_;
  std::vector<QuantileSketch> middle_latency_;
  FailureGroups timeouts_;
  FailureGroups slow_;
  UntracedTuples untraced_;
  FlapRecorder flaps_;
};

}  // namespace hostmesh::analysis
