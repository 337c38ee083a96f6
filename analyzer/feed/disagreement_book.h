// With an inventory: the places where traced paths contradict it
// (topology/trace_check.h), each kept once by its key with how many traces
// showed it and when. One trace is not enough to report a place: a route
// that changes between a trace's probes mixes two paths, and a link that
// flaps does so again and again. So a place is confirmed once two traces
// showed it and more traces contradict the inventory there than agree with
// it (a miscabled link shows in every trace through it, a mixed path in few).
// Pure: the feed logs and counts what Add returns.
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

  // One trace showing `d`. True when it confirms the place for the first time.
  bool Add(const topology::TraceDisagreement& d, const Trace& trace);
  // A trace that agrees with the inventory at `where` (AgreeingAddresses).
  void Agree(topology::Ipv4 where);
  // Whether any place is kept, i.e. agreeing traces are worth telling.
  bool watching() const { return !agreeing_.empty(); }

  // The confirmed places, most traces first; shared until the next change.
  std::shared_ptr<const std::vector<api::TopologyDisagreement>> Confirmed() const;
  // Every disagreeing trace, by kind (topology::DisagreementKind order).
  const std::array<std::uint64_t, topology::kDisagreementKinds>& traces() const { return traces_; }
  std::uint64_t overflow() const { return overflow_; }

 private:
  struct Place {
    api::TopologyDisagreement info;
    topology::Ipv4 where;
    bool confirmed_once = false;
  };
  bool Confirmed(const Place& place) const;

  std::unordered_map<std::string, Place> places_;  // by kind and key
  // Agreeing traces, for the addresses of the places only.
  std::unordered_map<topology::Ipv4, std::uint64_t> agreeing_;
  std::array<std::uint64_t, topology::kDisagreementKinds> traces_{};
  std::uint64_t overflow_ = 0;
  mutable std::shared_ptr<const std::vector<api::TopologyDisagreement>> confirmed_;  // null: stale
};

}  // namespace hostmesh::analyzer::app
