// Which (agent, boot) pairs said Hello, and what: every batch is checked
// against its NICs, and goes to the analysis with its Hello (IngestSink), so
// the committer thread never reads a Hello from the store. The latest boot of
// each agent is kept in memory (a validated Hello: at most max_hello_bytes,
// about 1 KiB for 8 NICs); other boots (and agents that said Hello to an
// analyzer before a restart) are looked up in the store once and then cached.
// What it keeps is bounded in bytes (a fleet of 10,000 agents holds about
// 10 MB): past the bound, other agents' entries are dropped and read back from
// the store when their next batch comes, so peers that make up agent ids (only
// possible under grpc.insecure; a certificate names its agents) cost the
// analyzer store reads, never its memory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analyzer/ingest/batch_validator.h"
#include "analyzer/store/store.h"

namespace hostmesh::analyzer::ingest {

// What one (agent, boot) said in its Hello.
struct KnownAgent {
  explicit KnownAgent(v1::AgentHello said) : hello(std::move(said)), nics(hello) {}
  v1::AgentHello hello;
  AgentNics nics;  // its NIC ids, for ValidateBatch
};

class AgentDirectory {
 public:
  // `on_dropped(n)` (may be empty) hears of every n entries dropped to stay
  // within `max_bytes`; it runs under the directory's lock.
  explicit AgentDirectory(const store::Store& store, std::size_t max_bytes = std::size_t{64} << 20,
                          std::function<void(std::size_t)> on_dropped = {})
      : store_(store), max_bytes_(max_bytes), on_dropped_(std::move(on_dropped)) {}

  void Remember(const v1::AgentHello& hello);
  // Null when (agent, boot) never said Hello.
  std::shared_ptr<const KnownAgent> Find(std::string_view agent_id, std::uint64_t boot_id);

  std::size_t bytes() const;

 private:
  struct Entry {
    std::uint64_t boot_id = 0;
    std::shared_ptr<const KnownAgent> agent;
    std::size_t bytes = 0;
  };
  // Puts `entry` under `agent_id` and drops others while over max_bytes_.
  void PutLocked(const std::string& agent_id, Entry entry);

  const store::Store& store_;
  const std::size_t max_bytes_;
  const std::function<void(std::size_t)> on_dropped_;
  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, Entry> latest_;  // by agent_id
  std::size_t bytes_ = 0;
};

}  // namespace hostmesh::analyzer::ingest
