#include "topology/inventory_loader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "common/config/config_error.h"
#include "common/config/yaml_loader.h"
#include "topology/inventory_schema.h"

namespace hostmesh::topology {

namespace {

// Calls visit(key) for "a" and visit(index) for "[3]" in "a[3].b".
template <typename KeyFn, typename IndexFn>
void WalkPath(std::string_view path, KeyFn on_key, IndexFn on_index) {
  size_t pos = 0;
  while (pos < path.size()) {
    if (path[pos] == '.') {
      ++pos;
    } else if (path[pos] == '[') {
      const size_t close = path.find(']', pos);
      size_t index = 0;
      for (size_t i = pos + 1; i < close; ++i)
        index = index * 10 + static_cast<size_t>(path[i] - '0');
      if (!on_index(index)) return;
      pos = close + 1;
    } else {
      const size_t end = path.find_first_of(".[", pos);
      if (!on_key(path.substr(pos, end - pos))) return;
      pos = end == std::string_view::npos ? path.size() : end;
    }
  }
}

// Positions of key paths in the parsed document, for the cross-reference
// issues found after the read.
Locator DocumentLocator(std::shared_ptr<const config::YamlDocument> doc) {
  return [doc = std::move(doc)](std::string_view path) {
    if (doc == nullptr) return std::pair{0, 0};
    config::YamlNode node = doc->root();
    YAML::Mark mark = node.Mark();
    const auto step = [&](const config::YamlNode& next) {
      node = next;
      if (!node.IsNull()) mark = node.Mark();
      return true;
    };
    WalkPath(
        path,
        [&](std::string_view key) {
          if (!node.IsMap()) return false;
          for (const auto& [k, v] : node.Entries()) {
            if (k.Scalar() == key) {
              mark = k.Mark();  // a null value has no position of its own
              return step(v);
            }
          }
          return false;
        },
        [&](size_t index) {
          if (!node.IsSequence()) return false;
          const std::vector<config::YamlNode> items = node.Items();
          return index < items.size() && step(items[index]);
        });
    if (mark.line < 0) return std::pair{0, 0};
    return std::pair{mark.line + 1, mark.column + 1};
  };
}

Inventory Parse(std::string_view text, std::string_view source_name, Locator* locate) {
  Inventory inventory;
  std::shared_ptr<const config::YamlDocument> doc;
  config::ReadYaml(
      text, source_name, [&](config::MapReader& r) { schema::ReadInventory(r, &inventory); }, &doc);
  if (locate != nullptr) *locate = DocumentLocator(std::move(doc));
  return inventory;
}

}  // namespace

Inventory ParseInventory(std::string_view text, std::string_view source_name) {
  return Parse(text, source_name, nullptr);
}

Topology LoadInventory(std::string_view text, std::string_view source_name) {
  Locator locate;
  const Inventory inventory = Parse(text, source_name, &locate);
  return BuildTopology(inventory, source_name, locate);
}

Topology LoadInventoryFile(const std::filesystem::path& path) {
  std::ifstream file{path, std::ios::binary};
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) || !file.is_open()) {
    // errno from the failed open is what the operator needs (ENOENT, EACCES).
    const std::string why = file.is_open() ? "is a directory" : std::strerror(errno);
    config::IssueSink sink{path.string()};
    sink.Add(0, 0, "", "cannot read the file: " + why);
    sink.ThrowIfAny();
  }
  const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  return LoadInventory(text, path.string());
}

}  // namespace hostmesh::topology
