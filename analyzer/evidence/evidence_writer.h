// Writes incidents' evidence into the store, on a thread of its own so that
// reading probes back from the store never delays the judging of windows.
// Each event (evidence_event.h) appends a window verdict to the incident's
// header and captures the probes of a time range: those of the followed
// 5-tuples (links, switches), or of the RNIC's or host's own probes, fitted to
// the incident's byte budget (probe_budget.h), with the NIC counters of the
// involved hosts. Headers of young incidents stay cached; a restarted writer
// reads them back from the store. The writer keeps all evidence under the
// disk cap by dropping the oldest incidents' first, and expires evidence
// summary_retention after its last write.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "analyzer/evidence/evidence_config.h"
#include "analyzer/evidence/evidence_event.h"
#include "analyzer/store/store.h"
#include "common/base/clock.h"
#include "hostmesh/v1/evidence.pb.h"

namespace hostmesh::analyzer::evidence {

struct EvidenceStats {
  std::atomic<std::uint64_t> events{0};
  std::atomic<std::uint64_t> captures{0};
  std::atomic<std::uint64_t> dropped_queue_full{0};  // events not applied (warned)
  std::atomic<std::uint64_t> dropped_disk_cap{0};    // incidents whose evidence went (warned)
  std::atomic<std::uint64_t> expired{0};             // incidents past retention
  std::atomic<std::uint64_t> store_errors{0};        // failed reads or writes (warned)
  std::atomic<std::uint64_t> thinned_probes{0};      // successes left out for the budget
  std::atomic<std::uint64_t> bytes{0};               // all evidence stored (gauge)
  std::atomic<std::uint64_t> incidents{0};           // incidents with evidence (gauge)
};

// An incident's evidence as stored.
struct StoredEvidence {
  v1::evidence::EvidenceHeader header;
  std::vector<v1::evidence::EvidencePart> parts;
  std::uint64_t bad_parts = 0;  // that did not parse
};
// nullopt when none is stored; *error set when the read failed.
std::optional<StoredEvidence> ReadEvidence(const store::Store& store, std::uint64_t incident_id,
                                           std::string* error);

class EvidenceWriter {
 public:
  // Events waiting beyond this many are dropped (counted, warned).
  static constexpr std::size_t kMaxQueued = 4096;
  // Verdicts kept per incident: the first and the last halves of it.
  static constexpr int kMaxVerdicts = 240;

  // `store` must outlive the writer. Reads every incident's evidence size.
  EvidenceWriter(store::Store& store, const Clock& clock, EvidenceConfig config);
  ~EvidenceWriter();  // stops the thread after what is queued
  EvidenceWriter(const EvidenceWriter&) = delete;
  EvidenceWriter& operator=(const EvidenceWriter&) = delete;

  void Start();  // the thread; without it, Apply is called by the owner
  // Queues an event for the thread; false (counted) when the queue is full.
  bool Submit(EvidenceEvent event);
  // Applies one event now, on the caller's thread.
  void Apply(const EvidenceEvent& event);
  // Deletes evidence last written more than the summary retention ago, and
  // counts every incident's bytes anew. Apply calls it hourly.
  void Expire();
  // Blocks until what was queued before the call is applied (tests, shutdown).
  void Drain();

  const EvidenceStats& stats() const { return stats_; }

 private:
  void Run();
  v1::evidence::EvidenceHeader& HeaderOf(const EvidenceEvent& event);
  void AddVerdict(v1::evidence::EvidenceHeader& header, const v1::evidence::WindowVerdict& v);
  void Follow(v1::evidence::EvidenceHeader& header, const EvidenceEvent& event);
  // The probes of the header's groups sent in [from, to), in store order;
  // adds RNIC and host groups' new 5-tuples to the header (counted in
  // `uncounted` past max_tuples). nullopt when the store failed.
  std::optional<std::vector<v1::evidence::Probe>> ScanProbes(v1::evidence::EvidenceHeader& header,
                                                             std::int64_t from, std::int64_t to,
                                                             std::uint64_t& uncounted);
  // Probes and counters of [from, to) as a part; false when the store failed.
  bool Capture(v1::evidence::EvidenceHeader& header, const EvidenceEvent& event, std::int64_t from,
               std::int64_t to);
  void Put(std::uint64_t id, std::uint32_t part, const std::string& bytes);
  void KeepUnderCap(std::uint64_t keep);
  void Forget(std::uint64_t id);

  store::Store& store_;
  const Clock& clock_;
  const EvidenceConfig config_;
  EvidenceStats stats_;

  // Writer's own (the thread, or the owner without one).
  std::unordered_map<std::uint64_t, v1::evidence::EvidenceHeader> headers_;
  std::map<std::uint64_t, std::uint64_t> sizes_;  // incident -> bytes of every part
  // Incident -> bytes of its header as last written or read, which the next
  // write replaces (only incidents whose header this writer has seen).
  std::unordered_map<std::uint64_t, std::uint64_t> header_bytes_;
  std::uint64_t total_bytes_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable drained_;
  std::deque<EvidenceEvent> queue_;
  std::uint64_t submitted_ = 0;  // under mu_
  std::uint64_t applied_ = 0;    // under mu_
  bool stop_ = false;
  bool warned_full_ = false;
  MonoTime next_expiry_{};  // the writer's
  std::thread thread_;
};

}  // namespace hostmesh::analyzer::evidence
