// Which (agent, boot) pairs said Hello, and what: every batch is checked
// against its NICs, and goes to the analysis with its Hello (IngestSink), so
// the committer thread never reads a Hello from the store. The latest boot of
// each agent is kept in memory (a validated Hello: at most max_hello_bytes,
// about 1 KiB for 8 NICs); other boots (and agents that said Hello to an
// analyzer before a restart) are looked up in the store once and then cached.
#pragma once

#include <cstdint>
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
  explicit AgentDirectory(const store::Store& store) : store_(store) {}

  void Remember(const v1::AgentHello& hello);
  // Null when (agent, boot) never said Hello.
  std::shared_ptr<const KnownAgent> Find(std::string_view agent_id, std::uint64_t boot_id);

 private:
  struct Entry {
    std::uint64_t boot_id = 0;
    std::shared_ptr<const KnownAgent> agent;
  };
  const store::Store& store_;
  std::shared_mutex mu_;
  std::unordered_map<std::string, Entry> latest_;  // by agent_id
};

}  // namespace hostmesh::analyzer::ingest
