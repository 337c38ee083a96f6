#include "analyzer/feed/learned_topology.h"

#include <algorithm>

#include "analyzer/feed/feed_convert.h"

namespace hostmesh::analyzer::app {

bool LearnedTopology::Import(const topology::LearnedFabric& state, std::string* error) {
  if (!learner_.Import(state, error)) return false;
  Build();  // a replay of stored paths fills silent hops on it
  return true;
}

void LearnedTopology::AddHello(std::string_view host, const v1::AgentHello& hello) {
  for (const v1::Nic& nic : hello.nics()) {
    if (const auto ip = topology::ParseIpv4(nic.ip())) {
      learner_.AddNic(host, nic.name(), *ip, static_cast<int>(nic.rail()));
    }
  }
}

PathConversion LearnedTopology::Convert(analysis::HostId host, std::string_view host_name,
                                        const v1::PathReport& report, analysis::PathRecord& out) {
  topology::Ipv4 src, dst;
  topology::Hop hops[topology::PathResolver::kMaxHops];
  std::size_t n = 0;
  if (!ParseTrace(report, &src, &dst, hops, &n)) return PathConversion::kUnresolved;
  learner_.Add(host_name, src, dst, std::span<const topology::Hop>(hops, n), graph_.get(),
               &scratch_);
  if (scratch_.status == topology::PathStatus::kInconsistent) {
    return scratch_.truncated ? PathConversion::kCutShort : PathConversion::kUnresolved;
  }
  FillPathRecord(host, report, scratch_, out);
  if (scratch_.truncated && scratch_.status != topology::PathStatus::kOk) {
    return PathConversion::kCutShort;
  }
  if (!scratch_.truncated) out.candidates.clear();  // reached: see ToPathRecord
  return scratch_.truncated ? PathConversion::kContinued : PathConversion::kResolved;
}

void LearnedTopology::Build() {
  built_version_ = learner_.version();
  graph_ = std::make_shared<const topology::Topology>(learner_.Build());
}

std::shared_ptr<const topology::Topology> LearnedTopology::Refresh(std::int64_t now_ns) {
  if (learner_.version() == handed_version_) return nullptr;  // 0: nothing learned yet
  if (!graph_ || (built_version_ != learner_.version() && now_ns >= next_build_ns_)) {
    Build();
    next_build_ns_ =
        now_ns + std::max(kMinRebuildInterval,
                          static_cast<std::int64_t>(learner_.link_count()) * kRebuildPerLink);
  }
  if (built_version_ == handed_version_) return nullptr;
  handed_version_ = built_version_;
  return graph_;
}

}  // namespace hostmesh::analyzer::app
