#pragma once

// A fast reader for the block-style YAML subset that inventory generators print
// (`fabric topology`, `hostmeshctl topology generate`): block maps and lists,
// plain scalars, double-quoted scalars without escapes, comments, `[]`/`{}`.
// yaml-cpp needs about 3 s for a 4096-host inventory; this needs a tenth of that.
// Anything outside the subset makes Parse return nullopt, and the caller falls
// back to yaml-cpp: this reader never decides that a document is wrong.

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace hostmesh::topology {

class BlockYaml {
 public:
  enum class Kind : std::uint8_t { kMap, kSequence, kScalar, kNull };
  static constexpr std::uint32_t kNil = 0xFFFFFFFFU;

  struct Node {
    Kind kind = Kind::kNull;
    bool quoted = false;
    int line = 0;  // 1-based position of the value (of the key when null)
    int column = 0;
    std::string_view key{};      // set when the node is a map entry's value
    std::string_view text{};     // scalar text, quotes removed
    std::uint32_t first = kNil;  // first child (map entries or list items)
    std::uint32_t next = kNil;   // next sibling
  };

  // Views into `text`, which must outlive the result.
  static std::optional<BlockYaml> Parse(std::string_view text);

  std::uint32_t root() const { return 0; }
  const Node& node(std::uint32_t id) const { return nodes_[id]; }
  // The value of `key` in map `id`, or kNil.
  std::uint32_t Child(std::uint32_t id, std::string_view key) const;
  // Item `index` of list `id`, or kNil.
  std::uint32_t Item(std::uint32_t id, size_t index) const;

 private:
  std::vector<Node> nodes_{};
  friend class BlockYamlParser;
};

}  // namespace hostmesh::topology
