#include "analyzer/ingest/agent_directory.h"

#include <mutex>

namespace hostmesh::analyzer::ingest {

void AgentDirectory::Remember(const v1::AgentHello& hello) {
  auto agent = std::make_shared<const KnownAgent>(hello);
  std::unique_lock lock(mu_);
  latest_[hello.agent_id()] = Entry{hello.boot_id(), std::move(agent)};
}

std::shared_ptr<const KnownAgent> AgentDirectory::Find(std::string_view agent_id,
                                                       std::uint64_t boot_id) {
  {
    std::shared_lock lock(mu_);
    // C++20 heterogeneous lookup needs a transparent hash; agent ids are short.
    const auto it = latest_.find(std::string(agent_id));
    if (it != latest_.end() && it->second.boot_id == boot_id) return it->second.agent;
  }
  std::optional<v1::AgentHello> hello = store_.GetHello(agent_id, boot_id);
  if (!hello) return nullptr;
  auto agent = std::make_shared<const KnownAgent>(std::move(*hello));
  std::unique_lock lock(mu_);
  Entry& entry = latest_[std::string(agent_id)];
  // A stored older boot must not displace the newest one.
  if (!entry.agent || entry.boot_id == boot_id) entry = Entry{boot_id, agent};
  return agent;
}

}  // namespace hostmesh::analyzer::ingest
