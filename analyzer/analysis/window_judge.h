#pragma once

// Turns a closed window's counters into a WindowReport: RNIC status (paper rule
// and path-aware verdict), drop split, loss and latency localization (paper
// Algorithm 1 and the greedy inference of loss_inference.h), SLA quantiles,
// CPU-overload flags and coverage. Keeps what spans windows: sticky RNIC
// anomalies and the hosts seen so far.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analyzer/analysis/config.h"
#include "analyzer/analysis/latency_hotspots.h"
#include "analyzer/analysis/loss_inference.h"
#include "analyzer/analysis/path_table.h"
#include "analyzer/analysis/route_watch.h"
#include "analyzer/analysis/sequential_inference.h"
#include "analyzer/analysis/shedding_book.h"
#include "analyzer/analysis/types.h"
#include "analyzer/analysis/window_accumulator.h"
#include "analyzer/analysis/window_report.h"

namespace hostmesh::analysis {

SequentialParams SequentialParamsFrom(const AnalysisConfig& config);

struct ComponentIndex;  // component_index.h

class WindowJudge {
 public:
  WindowJudge(const AnalysisConfig& config, const FabricMap& fabric, const PathTable& paths,
              const RouteWatch& routes)
      : config_(config),
        fabric_(fabric),
        paths_(paths),
        routes_(routes),
        sequential_(SequentialParamsFrom(config)),
        evidence_(config.prior_background_loss) {}

  // `shedding` (may be null): the hosts' load-shedding states, for the
  // window's WindowReport::shedding and the processing flags.
  WindowReport Judge(const WindowAccumulator& window, SheddingBook* shedding = nullptr);

  int RailOf(HostId host, NicId nic) const { return analysis::RailOf(fabric_, host, nic); }

 private:
  // The phases of Judge, in order.
  void NoteHosts(const WindowAccumulator& w, WindowReport* out);
  ComponentIndex IndexOf(const WindowAccumulator& w,
                         const std::vector<HostId>& present_hosts) const;
  std::vector<std::vector<std::uint32_t>> SwitchParts(const ComponentIndex& ix) const;
  void JudgeLoss(const WindowAccumulator& w, const ComponentIndex& ix, WindowReport* out);
  void NoteFlaps(const WindowAccumulator& w, Localization* loss);
  void JudgeLatency(const WindowAccumulator& w, const ComponentIndex& ix, WindowReport* out);
  void NameLinkEnds(WindowReport* out) const;

  void JudgeRnics(const WindowAccumulator& w, const ComponentIndex& ix, const InferenceResult& loss,
                  WindowReport* out);
  void SplitDrops(const WindowAccumulator& w, const ComponentIndex& ix, WindowReport* out) const;
  Localization Localize(const WindowAccumulator& w, const ComponentIndex& ix,
                        const FailureGroups& groups, InferenceProblem& problem,
                        const InferenceResult& result, bool baseline_skips_rnics) const;
  // The phases of Localize.
  void NameCulprits(const ComponentIndex& ix, const FailureGroups& groups,
                    const InferenceProblem& problem, const InferenceResult& result,
                    std::vector<char>& culprit, std::vector<char>& link_culprit,
                    Localization* out) const;
  void RankLinks(const ComponentIndex& ix, const InferenceProblem& problem,
                 const InferenceResult& result, const std::vector<char>& link_culprit,
                 Localization* out) const;
  std::vector<std::uint64_t> RankByVotes(const WindowAccumulator& w, const ComponentIndex& ix,
                                         const FailureGroups& groups,
                                         const InferenceProblem& problem,
                                         const InferenceResult& result,
                                         const std::vector<char>& culprit,
                                         bool baseline_skips_rnics, Localization* out) const;
  void RankSwitches(const ComponentIndex& ix, const InferenceResult& result,
                    const std::vector<std::uint64_t>& switch_votes, Localization* out) const;
  void FlagProcessing(const WindowAccumulator& w, WindowReport* out) const;
  void DropChurnShadows(const WindowAccumulator& w, double background, Localization* loss);
  void ForgetShadows(const std::vector<char>& shadow, Localization* loss);
  // By switch: every watched up-link into it (two or more) among `unused`,
  // how many of them are, and the largest and second largest p-value of those.
  struct UnusedSwitches {
    std::vector<char> all;
    std::vector<std::uint32_t> count;
    std::vector<double> worst_p;
    std::vector<double> second_p;
  };
  // By link id: 1 for the links the loss verdict names, alone or as a
  // culprit switch's (RouteWatch::Unused's `failing`).
  std::vector<char> FailingLinks(const Localization& loss) const;
  // Notes the window's avoided links and switches in `coverage`; returns
  // them by switch, for NameWithdrawnLinks. Both read the route watch as of
  // the window's end (`end_ns`).
  UnusedSwitches NoteAvoided(const std::vector<char>& failing, std::int64_t end_ns,
                             Coverage* coverage) const;
  void NameWithdrawnLinks(const UnusedSwitches& avoided, const std::vector<char>& failing,
                          std::int64_t end_ns, Localization* loss) const;
  void NameDownSwitch(SwitchId id, double p_value, Localization* loss) const;
  UnusedSwitches SwitchesOf(const std::vector<WithdrawnLink>& unused) const;
  bool ShareASwitch(LinkId a, LinkId b) const;
  void CountCoverage(const WindowAccumulator& w, const ComponentIndex& ix, WindowReport* out) const;
  std::vector<LinkId> FullPath(HostId host, NicId src, NicId dst, MiddleId middle) const;

  const AnalysisConfig& config_;
  const FabricMap& fabric_;
  const PathTable& paths_;
  const RouteWatch& routes_;
  std::vector<char> known_hosts_;
  // RNIC key (host * kMaxNics + nic) -> end of its sticky anomaly.
  std::unordered_map<std::uint64_t, std::int64_t> verdict_until_;
  std::unordered_map<std::uint64_t, std::int64_t> paper_until_;
  // Loss evidence of every component across windows.
  SequentialParams sequential_;
  EvidenceBook evidence_;
  // Watched components that came back from a down episode in the last window.
  FlapHistory flap_history_;
  // Every directed link's usual latency excess.
  LatencyBaselines latency_baselines_;
  // The links named for latency in the last window, sorted (hysteresis).
  std::vector<LinkId> latency_named_;
};

}  // namespace hostmesh::analysis
