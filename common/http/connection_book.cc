#include "common/http/connection_book.h"

namespace hostmesh::http {

std::string_view PhaseName(ConnectionPhase phase) {
  switch (phase) {
    case ConnectionPhase::kRequest:
      return "request";
    case ConnectionPhase::kHandling:
      return "handling";
    case ConnectionPhase::kResponse:
      return "response";
    case ConnectionPhase::kIdle:
      return "idle";
  }
  return "unknown";
}

Admission ConnectionBook::Admit(const std::string& peer) {
  if (admitted_ >= limits_.max_connections) return Admission::kRefusedMaxConnections;
  std::size_t& from_peer = per_peer_[peer];
  if (from_peer >= limits_.max_connections_per_peer) {
    if (from_peer == 0) per_peer_.erase(peer);
    return Admission::kRefusedPerPeer;
  }
  ++from_peer;
  ++admitted_;
  return Admission::kAdmitted;
}

void ConnectionBook::Release(const std::string& peer) {
  const auto it = per_peer_.find(peer);
  if (it == per_peer_.end()) return;
  if (--it->second == 0) per_peer_.erase(it);
  if (admitted_ > 0) --admitted_;
}

void ConnectionBook::Cancel(const std::string& peer) {
  Release(peer);
}

void ConnectionBook::Opened(Id id, const std::string& peer, MonoTime now) {
  Connection& c = connections_[id];
  c.peer = peer;
  c.phase = ConnectionPhase::kRequest;
  c.deadline = now + limits_.timeout;
}

ConnectionBook::Connection* ConnectionBook::Find(Id id) {
  const auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : &it->second;
}

void ConnectionBook::RequestLineArrived(Id id) {
  if (Connection* c = Find(id)) c->phase = ConnectionPhase::kRequest;
}

void ConnectionBook::RequestReceived(Id id) {
  if (Connection* c = Find(id)) {
    c->phase = ConnectionPhase::kHandling;
    c->deadline.reset();
  }
}

void ConnectionBook::ResponseQueued(Id id, MonoTime now) {
  if (Connection* c = Find(id)) {
    c->phase = ConnectionPhase::kResponse;
    c->deadline = now + limits_.timeout;
  }
}

void ConnectionBook::RequestDone(Id id, MonoTime now) {
  if (Connection* c = Find(id)) {
    c->phase = ConnectionPhase::kIdle;
    c->deadline = now + limits_.timeout;
  }
}

void ConnectionBook::Closed(Id id) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Release(it->second.peer);
  connections_.erase(it);
}

std::vector<std::pair<ConnectionBook::Id, ConnectionPhase>> ConnectionBook::TakeOverdue(
    MonoTime now) {
  std::vector<std::pair<Id, ConnectionPhase>> overdue;
  for (auto& [id, c] : connections_) {
    if (!c.deadline || now < *c.deadline) continue;
    c.deadline.reset();  // reported once; it closes soon
    overdue.emplace_back(id, c.phase);
  }
  return overdue;
}

std::size_t ConnectionBook::admitted_from(const std::string& peer) const {
  const auto it = per_peer_.find(peer);
  return it == per_peer_.end() ? 0 : it->second;
}

}  // namespace hostmesh::http
