#pragma once

// The analyzer's pure pipeline: results and paths in, one WindowReport per
// judged window out. No I/O, no threads, no clock of its own: the caller passes
// the analyzer's current time to Advance, so tests run in virtual time.
//
// Windows are by event time (the probe's send time), so a batch uploaded late
// lands in the window its probes belong to. A window [start, end) is judged
// once the watermark — the analyzer's time minus the grace period — passes its
// end; until then late batches still count. Results for a judged window are
// counted as late and dropped, never folded into a later window.
//
// Usage (ingest thread or a single owner; the class is not thread-safe):
//   Analysis a(config, fabric);
//   a.AddPath(path); a.AddResult(result);  ...
//   for (auto& report : a.Advance(now_ns)) incidents.Update(report);

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "analyzer/analysis/config.h"
#include "analyzer/analysis/path_table.h"
#include "analyzer/analysis/route_watch.h"
#include "analyzer/analysis/shedding_book.h"
#include "analyzer/analysis/types.h"
#include "analyzer/analysis/window_accumulator.h"
#include "analyzer/analysis/window_judge.h"
#include "analyzer/analysis/window_report.h"

namespace hostmesh::analysis {

struct AnalysisStats {
  std::uint64_t accepted = 0;
  std::uint64_t late = 0;     // for a window already judged
  std::uint64_t future = 0;   // stamped beyond now + max_future
  std::uint64_t invalid = 0;  // nic id out of range, src == dst, no send time
  // The sending NIC could not send them: not loss, so not in any window.
  std::uint64_t send_failed = 0;
  std::uint64_t paths = 0;
  std::uint64_t windows_judged = 0;
  // Untraced when added, placed on a path reported before the window closed.
  std::uint64_t resolved_late = 0;
  // Untraced results a window could not keep per 5-tuple (UntracedTuples::kMaxTuples).
  std::uint64_t untraced_overflow = 0;
  // Probes through watched links whose source port was past PortTally's cap
  // (the ACL rule reads the ports tallied).
  std::uint64_t port_probes_untallied = 0;
  // 5-tuples whose path was forgotten, neither reported nor probed for path_ttl.
  std::uint64_t paths_aged_out = 0;
  // New 5-tuples refused because their host held max_paths_per_host, and
  // 5-tuples of such hosts evicted early (path_table.h).
  std::uint64_t paths_refused_host_cap = 0;
  std::uint64_t paths_evicted_host_cap = 0;
  // Interned fabric paths freed once no 5-tuple and no open window used them.
  std::uint64_t path_middles_freed = 0;
  // Gauges as of the last Advance: 5-tuples with a path, and the path table's bytes.
  std::uint64_t paths_live = 0;
  std::uint64_t path_table_bytes = 0;
  // Fresh draws cut short past a rail switch awaiting their 5-tuple's next
  // outcome (route_watch.h), and those counted at once past the watch's cap.
  std::uint64_t route_draws_awaiting = 0;
  std::uint64_t route_draws_overflow = 0;
};

enum class AddStatus : std::uint8_t { kAccepted, kLate, kFuture, kInvalid, kSendFailed };

class Analysis {
 public:
  explicit Analysis(AnalysisConfig config = {}, FabricMap fabric = {});
  Analysis(const Analysis&) = delete;
  Analysis& operator=(const Analysis&) = delete;

  // A path report. It applies to results of its 5-tuple added from now on,
  // and to those already in a window still open that had no path yet.
  void AddPath(const PathRecord& path);
  // The rails of a host's NICs (rails[nic]; from the agent's Hello), for the
  // per-rail SLA; without them a NIC's rail is taken to be its id.
  void SetRails(HostId host, std::vector<int> rails);
  // The fabric's links and switch count anew (rails stay), for a fabric
  // learned while the analysis runs: ids are only ever added, and a link's
  // ends may become known or move to the switch another was merged into.
  void SetFabric(std::vector<FabricMap::LinkEnds> links, std::size_t switch_count);
  // After a restart: windows ending at or before end_ns were judged already
  // (their reports are stored), so judging resumes with the next one.
  void ResumeAfter(std::int64_t end_ns);
  AddStatus AddResult(const ProbeRecord& result);
  // An agent's load-shedding state from a batch created at at_ns
  // (shedding_book.h); `cpu` when a CPU signal set it.
  void NoteShedding(HostId host, std::int64_t at_ns, double fraction, std::int64_t since_ns,
                    const std::string& cause, bool cpu) {
    shedding_.Note(host, at_ns, fraction, since_ns, cause, cpu);
  }
  // AddResult of each, in order; loads the path table's slots a few results
  // ahead, so a batch costs far fewer cache misses than one result at a time.
  void AddResults(std::span<const ProbeRecord> results);

  // Judges every open window whose end + grace <= now_ns, oldest first, and
  // ages the path table out by now_ns.
  std::vector<WindowReport> Advance(std::int64_t now_ns);

  // Start of the oldest window still open to results.
  std::int64_t watermark_ns() const { return judged_before_ns_; }
  const AnalysisStats& stats() const { return stats_; }
  const PathTable& paths() const { return paths_; }
  const AnalysisConfig& config() const { return config_; }
  const FabricMap& fabric() const { return fabric_; }
  std::size_t open_windows() const { return windows_.size(); }
  std::size_t open_window_bytes() const;

 private:
  WindowAccumulator& WindowFor(std::int64_t start_ns);
  // Stamped beyond now + max_future (never before the first Advance).
  bool Future(std::int64_t t_ns) const;

  AnalysisConfig config_;
  FabricMap fabric_;
  PathTable paths_;
  RouteWatch routes_;
  WindowJudge judge_;
  SheddingBook shedding_;
  std::map<std::int64_t, std::unique_ptr<WindowAccumulator>> windows_;  // by start
  WindowAccumulator* last_ = nullptr;  // the window of the previous result
  std::int64_t judged_before_ns_ = 0;  // windows starting before this are judged
  std::int64_t now_ns_ = 0;            // last Advance; 0 before the first
  bool started_ = false;               // a window was judged
  std::int64_t slow_threshold_ns_;
  // The last judged window's loss culprits, watched for flapping in new windows.
  FlapWatchList flap_watch_;
  AnalysisStats stats_;
};

}  // namespace hostmesh::analysis
