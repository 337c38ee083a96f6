// A YAML document as yaml-cpp's parser reports it (its event API), kept in one
// flat array: what MapReader reads. yaml-cpp does all of YAML (block and flow
// style, quoting and escapes, anchors and aliases, the marks of every node);
// this only stores the events. It replaces YAML::Load's node graph, which
// costs about twice the parse itself and many small allocations (a 17 MB
// inventory: README of topology/).
#pragma once

#include <yaml-cpp/mark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hostmesh::config {

class YamlDocument;

// A node of a YamlDocument: a cheap handle, valid as long as the document.
class YamlNode {
 public:
  enum class Kind : std::uint8_t { kNull, kScalar, kSequence, kMap };

  YamlNode() = default;

  Kind kind() const;
  bool IsNull() const { return kind() == Kind::kNull; }
  bool IsScalar() const { return kind() == Kind::kScalar; }
  bool IsSequence() const { return kind() == Kind::kSequence; }
  bool IsMap() const { return kind() == Kind::kMap; }
  // The scalar's text ("" for other kinds).
  std::string_view Scalar() const;
  // Where the node starts (0-based, as yaml-cpp counts).
  YAML::Mark Mark() const;

  // A map's entries in document order (duplicates kept), a list's items.
  std::vector<std::pair<YamlNode, YamlNode>> Entries() const;
  std::vector<YamlNode> Items() const;

  // Names the node (aliases resolved) within its document, for an index of
  // nodes built once; every EmptyMap() shares one.
  std::uint32_t Id() const;

 private:
  friend class YamlDocument;
  YamlNode(const YamlDocument* doc, std::uint32_t id) : doc_(doc), id_(id) {}

  const YamlDocument* doc_ = nullptr;  // null: an empty map
  std::uint32_t id_ = 0;
};

class YamlDocument {
 public:
  // Every document in `text`, through yaml-cpp's parser. Throws yaml-cpp's
  // YAML::ParserException (with its mark) on a syntax error.
  static std::vector<std::shared_ptr<const YamlDocument>> ParseAll(std::string_view text);

  // The top-level node. An empty document's root is null.
  YamlNode root() const { return YamlNode(this, 0); }
  // A handle that reads as an empty map, for an empty file.
  static YamlNode EmptyMap() { return YamlNode(); }

 private:
  friend class YamlNode;
  friend class YamlDocumentBuilder;
  static constexpr std::uint32_t kNil = 0xFFFFFFFFU;

  struct Node {
    YamlNode::Kind kind = YamlNode::Kind::kNull;
    std::uint32_t alias_of = kNil;  // an alias: the anchored node it stands for
    std::uint32_t first = kNil;     // first child: map key, value, key, ... or list items
    std::uint32_t next = kNil;      // next sibling
    std::uint32_t text_offset = 0;  // scalar text in text_
    std::uint32_t text_size = 0;
    YAML::Mark mark;
  };

  const Node& Resolved(std::uint32_t id) const;

  std::vector<Node> nodes_;
  std::string text_;  // every scalar, back to back
};

}  // namespace hostmesh::config
