#include "analyzer/ingest/agent_directory.h"

#include <mutex>

namespace hostmesh::analyzer::ingest {
namespace {

// What an entry holds: its Hello, the NIC index built from it, the key and
// the map's node, about twice the Hello's wire size.
std::size_t EntryBytes(const v1::AgentHello& hello) {
  return 2 * hello.ByteSizeLong() + 2 * hello.agent_id().size() + 128;
}

}  // namespace

void AgentDirectory::PutLocked(const std::string& agent_id, Entry entry) {
  Entry& slot = latest_[agent_id];
  bytes_ -= slot.bytes;
  bytes_ += entry.bytes;
  slot = std::move(entry);
  std::size_t dropped = 0;
  // Whichever others come first: which agents a flood of made-up ids pushes
  // out does not matter, as long as memory stays bounded.
  for (auto it = latest_.begin(); bytes_ > max_bytes_ && it != latest_.end();) {
    if (it->first == agent_id) {
      ++it;
      continue;
    }
    bytes_ -= it->second.bytes;
    it = latest_.erase(it);
    ++dropped;
  }
  if (dropped > 0 && on_dropped_) on_dropped_(dropped);
}

void AgentDirectory::Remember(const v1::AgentHello& hello) {
  auto agent = std::make_shared<const KnownAgent>(hello);
  const std::size_t bytes = EntryBytes(hello);
  std::unique_lock lock(mu_);
  PutLocked(hello.agent_id(), Entry{hello.boot_id(), std::move(agent), bytes});
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
  const std::size_t bytes = EntryBytes(*hello);
  auto agent = std::make_shared<const KnownAgent>(std::move(*hello));
  const std::string key(agent_id);
  std::unique_lock lock(mu_);
  const auto it = latest_.find(key);
  // A stored older boot must not displace the newest one.
  if (it == latest_.end() || it->second.boot_id == boot_id) {
    PutLocked(key, Entry{boot_id, agent, bytes});
  }
  return agent;
}

std::size_t AgentDirectory::bytes() const {
  std::shared_lock lock(mu_);
  return bytes_;
}

}  // namespace hostmesh::analyzer::ingest
