#include "topology/inventory_loader.h"

#include <memory>
#include <unordered_map>
#include <vector>

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
// issues found after the read. A path step into a list is one hash lookup:
// each list walked is indexed once, so locating the issues of a file costs
// time linear in the file, however many there are (50,000 duplicate names
// once took minutes, each lookup walking the host list from the start).
class DocumentIndex {
 public:
  explicit DocumentIndex(std::shared_ptr<const config::YamlDocument> doc) : doc_(std::move(doc)) {}

  std::pair<int, int> Locate(std::string_view path) {
    if (doc_ == nullptr) return {0, 0};
    config::YamlNode node = doc_->root();
    YAML::Mark mark = node.Mark();
    const auto step = [&](const config::YamlNode& next) {
      node = next;
      if (!node.IsNull()) mark = node.Mark();
      return true;
    };
    WalkPath(
        path,
        [&](std::string_view key) {
          // Maps that reach the cross-reference checks hold only the keys the
          // schema knows (any other is an error of the read), so a few.
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
          const std::vector<config::YamlNode>& items = Items(node);
          return index < items.size() && step(items[index]);
        });
    if (mark.line < 0) return {0, 0};
    return {mark.line + 1, mark.column + 1};
  }

 private:
  const std::vector<config::YamlNode>& Items(const config::YamlNode& list) {
    auto [it, fresh] = lists_.try_emplace(list.Id());
    if (fresh) it->second = list.Items();
    return it->second;
  }

  std::shared_ptr<const config::YamlDocument> doc_;
  std::unordered_map<std::uint32_t, std::vector<config::YamlNode>> lists_;
};

Locator DocumentLocator(std::shared_ptr<const config::YamlDocument> doc) {
  auto index = std::make_shared<DocumentIndex>(std::move(doc));
  return [index](std::string_view path) { return index->Locate(path); };
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
  const std::string text = config::ReadConfigFile(path, kMaxInventoryFileBytes);
  return LoadInventory(text, path.string());
}

}  // namespace hostmesh::topology
