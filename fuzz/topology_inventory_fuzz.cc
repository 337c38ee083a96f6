// The topology inventory loader (topology/inventory_loader.h): YAML describing
// switches, hosts, NICs and links, checked key by key and then cross-referenced
// and built into the graph. A bad inventory must be refused with
// config::ConfigError naming key and line, never with another exception or a
// crash; one that loads must resolve a path between two of its NICs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/config/config_error.h"
#include "fuzz/fuzz_check.h"
#include "topology/inventory_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)hostmesh::topology::LoadInventory(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  } catch (const hostmesh::config::ConfigError& error) {
    FUZZ_CHECK(!error.issues().empty());
  }
  return 0;
}
