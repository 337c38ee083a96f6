#include "topology/inventory_loader.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "common/config/config_error.h"
#include "common/config/yaml_loader.h"
#include "topology/block_yaml.h"
#include "topology/block_yaml_reader.h"
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

Locator BlockLocator(std::shared_ptr<const BlockYaml> doc) {
  return [doc = std::move(doc)](std::string_view path) {
    std::uint32_t node = doc->root();
    const auto step = [&](std::uint32_t next) {
      if (next == BlockYaml::kNil) return false;  // keep the deepest node found
      node = next;
      return true;
    };
    WalkPath(
        path, [&](std::string_view key) { return step(doc->Child(node, key)); },
        [&](size_t index) { return step(doc->Item(node, index)); });
    return std::pair{doc->node(node).line, doc->node(node).column};
  };
}

// Parses the text again, once, only when an issue needs a position: this path
// serves documents outside BlockYaml's subset, which are small hand-written ones.
Locator YamlLocator(std::string text) {
  auto root = std::make_shared<std::optional<YAML::Node>>();
  return [root, text = std::move(text)](std::string_view path) {
    if (!*root) *root = YAML::Load(text);
    YAML::Node node = **root;
    YAML::Mark mark = node.Mark();
    const auto step = [&](const YAML::Node& next) {
      if (!next.IsDefined()) return false;
      // yaml-cpp's node handles share identity; reset() rebinds instead of assigning.
      node.reset(next);
      if (!node.IsNull()) mark = node.Mark();
      return true;
    };
    WalkPath(
        path,
        [&](std::string_view key) {
          if (!node.IsMap()) return false;
          for (const auto& entry : node) {
            if (entry.first.Scalar() == key) {
              mark = entry.first.Mark();  // a null value has no position of its own
              return step(entry.second);
            }
          }
          return false;
        },
        [&](size_t index) {
          return node.IsSequence() && index < node.size() && step(node[index]);
        });
    if (mark.line < 0) return std::pair{0, 0};
    return std::pair{mark.line + 1, mark.column + 1};
  };
}

// The schema read: fast when the text is in BlockYaml's subset and right,
// through MapReader (which throws with every issue) otherwise.
Inventory Parse(std::string_view text, std::string_view source_name, Locator* locate) {
  Inventory inventory;
  auto doc = std::make_shared<std::optional<BlockYaml>>(BlockYaml::Parse(text));
  bool failed = !doc->has_value();
  if (!failed) {
    BlockYamlReader reader(**doc, (*doc)->root(), &failed);
    schema::ReadInventory(reader, &inventory);
    reader.Finish();
  }
  if (!failed) {
    if (locate != nullptr) {
      *locate = BlockLocator(std::shared_ptr<const BlockYaml>(doc, &**doc));
    }
    return inventory;
  }
  inventory = {};
  config::ReadYaml(text, source_name,
                   [&](config::MapReader& r) { schema::ReadInventory(r, &inventory); });
  if (locate != nullptr) *locate = YamlLocator(std::string(text));
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
