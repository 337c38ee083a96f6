// The analyzer's YAML config (analyzer/config/analyzer_config.h). A bad file
// must be refused with config::ConfigError naming key and line, never with
// another exception or a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analyzer/config/analyzer_config.h"
#include "common/config/config_error.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)hostmesh::analyzer::ParseAnalyzerConfig(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  } catch (const hostmesh::config::ConfigError& error) {
    FUZZ_CHECK(!error.issues().empty());
  }
  return 0;
}
