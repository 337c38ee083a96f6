#include "analyzer/ingest/streams_per_peer.h"

#include <algorithm>
#include <vector>

namespace hostmesh::analyzer::ingest {

std::string StreamsPerPeer::KeyOf(const PeerIdentity& peer) {
  if (peer.anyone()) return {};
  std::vector<std::string> names = peer.names();
  std::sort(names.begin(), names.end());
  // A name holds no NUL (certificate SANs are host names and URIs), so the
  // joined list is one key per set of names; the prefix keeps an unnamed
  // certificate's key apart from the plaintext one.
  std::string key = "cert:";
  for (const std::string& n : names) {
    key += n;
    key.push_back('\0');
  }
  return key;
}

bool StreamsPerPeer::TryOpen(const std::string& key) {
  if (key.empty() || max_ == 0) return true;
  std::lock_guard lock(mu_);
  std::size_t& open = open_[key];
  if (open >= max_) return false;
  ++open;
  return true;
}

void StreamsPerPeer::Close(const std::string& key) {
  if (key.empty() || max_ == 0) return;
  std::lock_guard lock(mu_);
  const auto it = open_.find(key);
  if (it == open_.end()) return;
  if (--it->second == 0) open_.erase(it);  // a fleet's churn must not grow the map
}

std::size_t StreamsPerPeer::Open(const std::string& key) const {
  std::lock_guard lock(mu_);
  const auto it = open_.find(key);
  return it == open_.end() ? 0 : it->second;
}

}  // namespace hostmesh::analyzer::ingest
