#include "analyzer/feed/disagreement_book.h"

#include <algorithm>

namespace hostmesh::analyzer::app {

bool DisagreementBook::Confirmed(const Place& place) const {
  const auto agreeing = agreeing_.find(place.where);
  return place.info.traces >= kConfirmingTraces &&
         place.info.traces > (agreeing == agreeing_.end() ? 0 : agreeing->second);
}

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
    Place place;
    place.info.kind = std::string(topology::DisagreementKindName(d.kind));
    place.info.description = d.description;
    place.info.first_seen_ns = trace.time_ns;
    place.where = d.where;
    agreeing_.try_emplace(d.where, 0);
    it = places_.emplace(std::move(key), std::move(place)).first;
  }
  Place& place = it->second;
  api::TopologyDisagreement& info = place.info;
  ++info.traces;
  info.first_seen_ns = std::min(info.first_seen_ns, trace.time_ns);
  info.last_seen_ns = std::max(info.last_seen_ns, trace.time_ns);
  info.agent_id = trace.agent_id;
  info.src_ip = trace.src_ip;
  info.dst_ip = trace.dst_ip;
  info.src_port = trace.src_port;
  confirmed_.reset();
  if (place.confirmed_once || !Confirmed(place)) return false;
  place.confirmed_once = true;
  return true;
}

void DisagreementBook::Agree(topology::Ipv4 where) {
  const auto it = agreeing_.find(where);
  if (it == agreeing_.end()) return;
  ++it->second;
  confirmed_.reset();
}

std::shared_ptr<const std::vector<api::TopologyDisagreement>> DisagreementBook::Confirmed() const {
  if (confirmed_) return confirmed_;
  std::vector<api::TopologyDisagreement> out;
  for (const auto& [key, place] : places_) {
    if (!Confirmed(place)) continue;
    out.push_back(place.info);
    out.back().agreeing_traces = agreeing_.at(place.where);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.traces != b.traces) return a.traces > b.traces;
    return a.description < b.description;
  });
  confirmed_ = std::make_shared<const std::vector<api::TopologyDisagreement>>(std::move(out));
  return confirmed_;
}

}  // namespace hostmesh::analyzer::app
