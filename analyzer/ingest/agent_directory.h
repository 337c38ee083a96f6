// Which (agent, boot) pairs said Hello, and with which NICs: every batch is
// checked against it. The latest boot of each agent is kept in memory; other
// boots (and agents that said Hello to an analyzer before a restart) are
// looked up in the store once and then cached.
#pragma once

#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "analyzer/ingest/batch_validator.h"
#include "analyzer/store/store.h"

namespace hostmesh::analyzer::ingest {

class AgentDirectory {
 public:
  explicit AgentDirectory(const store::Store& store) : store_(store) {}

  void Remember(const v1::AgentHello& hello);
  // Null when (agent, boot) never said Hello.
  std::shared_ptr<const AgentNics> Find(std::string_view agent_id, std::uint64_t boot_id);

 private:
  struct Entry {
    std::uint64_t boot_id = 0;
    std::shared_ptr<const AgentNics> nics;
  };
  const store::Store& store_;
  std::shared_mutex mu_;
  std::unordered_map<std::string, Entry> latest_;  // by agent_id
};

}  // namespace hostmesh::analyzer::ingest
