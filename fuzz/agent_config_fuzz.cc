// The agent's YAML config (agent/config/agent_config.h): text an operator (or
// a config-management tool) writes. A bad file must be refused with
// config::ConfigError naming key and line, never with another exception or a
// crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/config/agent_config.h"
#include "common/config/config_error.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto config = hostmesh::agent::ParseAgentConfig(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
    FUZZ_CHECK(!config.host.empty() && config.nics.size() >= 2);
  } catch (const hostmesh::config::ConfigError& error) {
    FUZZ_CHECK(!error.issues().empty());
  }
  return 0;
}
