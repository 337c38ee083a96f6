#include "analyzer/ingest/peer_identity.h"

#include <algorithm>

namespace hostmesh::analyzer::ingest {

PeerIdentity PeerIdentity::FromSans(const std::vector<std::string>& dns_sans,
                                    const std::vector<std::string>& uri_sans,
                                    std::string_view spiffe_trust_domain) {
  std::vector<std::string> names;
  for (const std::string& dns : dns_sans) {
    if (!dns.empty()) names.push_back(dns);
  }
  if (!spiffe_trust_domain.empty()) {
    const std::string prefix = "spiffe://" + std::string(spiffe_trust_domain) + "/host/";
    for (const std::string& uri : uri_sans) {
      if (uri.size() > prefix.size() && uri.compare(0, prefix.size(), prefix) == 0 &&
          uri.find('/', prefix.size()) == std::string::npos) {
        names.push_back(uri.substr(prefix.size()));
      }
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return PeerIdentity(false, std::move(names));
}

bool PeerIdentity::MaySpeakFor(std::string_view name) const {
  return anyone_ || std::binary_search(names_.begin(), names_.end(), name);
}

std::string PeerIdentity::Describe() const {
  if (anyone_) return "anyone (insecure ingest)";
  if (names_.empty()) return "a certificate that names no host";
  std::string text = "a certificate for ";
  // A hostile certificate may carry thousands of SANs: a few make the point.
  constexpr std::size_t kShown = 4;
  for (std::size_t i = 0; i < names_.size() && i < kShown; ++i) {
    if (i > 0) text += ", ";
    text += "'" + names_[i].substr(0, 64) + "'";
  }
  if (names_.size() > kShown) text += " and " + std::to_string(names_.size() - kShown) + " more";
  return text;
}

}  // namespace hostmesh::analyzer::ingest
