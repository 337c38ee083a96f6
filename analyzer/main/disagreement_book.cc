#include "analyzer/main/disagreement_book.h"

#include <algorithm>

namespace hostmesh::analyzer::app {

bool DisagreementBook::Add(const topology::TraceDisagreement& d, const Trace& trace) {
  ++traces_[static_cast<std::size_t>(d.kind)];
  std::string key(topology::DisagreementKindName(d.kind));
  key += '|';
  key += d.key;
  auto it = places_.find(key);
  if (it == places_.end()) {
    if (places_.size() >= kMaxPlaces) {
      ++overflow_;
      return false;
    }
    api::TopologyDisagreement place;
    place.kind = std::string(topology::DisagreementKindName(d.kind));
    place.description = d.description;
    place.first_seen_ns = trace.time_ns;
    it = places_.emplace(std::move(key), std::move(place)).first;
  }
  api::TopologyDisagreement& place = it->second;
  ++place.traces;
  place.first_seen_ns = std::min(place.first_seen_ns, trace.time_ns);
  place.last_seen_ns = std::max(place.last_seen_ns, trace.time_ns);
  place.agent_id = trace.agent_id;
  place.src_ip = trace.src_ip;
  place.dst_ip = trace.dst_ip;
  place.src_port = trace.src_port;
  if (place.traces >= kConfirmingTraces) confirmed_.reset();
  return place.traces == kConfirmingTraces;
}

std::shared_ptr<const std::vector<api::TopologyDisagreement>> DisagreementBook::Confirmed() const {
  if (confirmed_) return confirmed_;
  std::vector<api::TopologyDisagreement> out;
  for (const auto& [key, place] : places_) {
    if (place.traces >= kConfirmingTraces) out.push_back(place);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.traces != b.traces) return a.traces > b.traces;
    return a.description < b.description;
  });
  confirmed_ = std::make_shared<const std::vector<api::TopologyDisagreement>>(std::move(out));
  return confirmed_;
}

}  // namespace hostmesh::analyzer::app
