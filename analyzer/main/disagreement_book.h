// With an inventory: the places where traced paths contradict it
// (topology/trace_check.h), each kept once by its key with how many traces
// showed it and when. One trace is not enough to report a place: a route
// that changes between a trace's probes mixes two paths, so a place is
// confirmed by the second trace that shows it. Pure: the feed logs and
// counts what Add returns.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/api/api_snapshot.h"
#include "topology/trace_check.h"

namespace hostmesh::analyzer::app {

class DisagreementBook {
 public:
  static constexpr std::uint64_t kConfirmingTraces = 2;
  // Places beyond this many are counted (overflow) but not kept.
  static constexpr std::size_t kMaxPlaces = 1024;

  struct Trace {
    std::string_view agent_id;
    std::string_view src_ip;
    std::string_view dst_ip;
    std::uint32_t src_port = 0;
    std::int64_t time_ns = 0;
  };

  // One trace showing `d`. True when it is the trace that confirms the place.
  bool Add(const topology::TraceDisagreement& d, const Trace& trace);

  // The confirmed places, most traces first; shared until the next change.
  std::shared_ptr<const std::vector<api::TopologyDisagreement>> Confirmed() const;
  // Every disagreeing trace, by kind (topology::DisagreementKind order).
  const std::array<std::uint64_t, topology::kDisagreementKinds>& traces() const { return traces_; }
  std::uint64_t overflow() const { return overflow_; }

 private:
  std::unordered_map<std::string, api::TopologyDisagreement> places_;  // by kind and key
  std::array<std::uint64_t, topology::kDisagreementKinds> traces_{};
  std::uint64_t overflow_ = 0;
  mutable std::shared_ptr<const std::vector<api::TopologyDisagreement>> confirmed_;  // null: stale
};

}  // namespace hostmesh::analyzer::app
