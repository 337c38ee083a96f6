#include "common/config/yaml_document.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace hostmesh::config {

// Not in an anonymous namespace: YamlDocument befriends it to fill nodes_.
class YamlDocumentBuilder final : public YAML::EventHandler {
 public:
  explicit YamlDocumentBuilder(YamlDocument* doc) : doc_(*doc) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Add(YamlNode::Kind::kNull, mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    // yaml-cpp's parser refuses an alias to an unknown anchor before calling this.
    const std::uint32_t id = Add(YamlNode::Kind::kNull, mark, YAML::NullAnchor);
    doc_.nodes_[id].alias_of = anchors_.at(anchor);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    const std::uint32_t id = Add(YamlNode::Kind::kScalar, mark, anchor);
    YamlDocument::Node& node = doc_.nodes_[id];
    node.text_offset = static_cast<std::uint32_t>(doc_.text_.size());
    node.text_size = static_cast<std::uint32_t>(value.size());
    doc_.text_ += value;
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open_.push_back({Add(YamlNode::Kind::kSequence, mark, anchor), YamlDocument::kNil});
  }
  void OnSequenceEnd() override { open_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open_.push_back({Add(YamlNode::Kind::kMap, mark, anchor), YamlDocument::kNil});
  }
  void OnMapEnd() override { open_.pop_back(); }

  void Finish() {
    // Offsets are 32-bit: a document of 4 GiB of scalars is not a config.
    if (doc_.text_.size() > 0xFFFFFFFFU || doc_.nodes_.size() >= YamlDocument::kNil) {
      throw std::length_error("YAML document too large");
    }
  }

 private:
  struct Open {
    std::uint32_t id;
    std::uint32_t last_child;
  };

  std::uint32_t Add(YamlNode::Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor) {
    const auto id = static_cast<std::uint32_t>(doc_.nodes_.size());
    YamlDocument::Node& node = doc_.nodes_.emplace_back();
    node.kind = kind;
    node.mark = mark;
    if (!open_.empty()) {
      Open& parent = open_.back();
      if (parent.last_child == YamlDocument::kNil) {
        doc_.nodes_[parent.id].first = id;
      } else {
        doc_.nodes_[parent.last_child].next = id;
      }
      parent.last_child = id;
    }
    if (anchor != YAML::NullAnchor) anchors_[anchor] = id;
    return id;
  }

  YamlDocument& doc_;
  std::vector<Open> open_;
  std::unordered_map<YAML::anchor_t, std::uint32_t> anchors_;
};

std::vector<std::shared_ptr<const YamlDocument>> YamlDocument::ParseAll(std::string_view text) {
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  std::vector<std::shared_ptr<const YamlDocument>> documents;
  int previous_start = -1;  // where the previous document's root began
  for (;;) {
    auto doc = std::make_shared<YamlDocument>();
    YamlDocumentBuilder builder(doc.get());
    if (!parser.HandleNextDocument(builder)) break;
    builder.Finish();
    if (!doc->nodes_.empty()) {
      // yaml-cpp 0.7 answers a token that cannot start a node (a stray ',',
      // ']' or '}') with a null document that leaves the token where it was,
      // and does so again at every call: the loop would never end (yaml-cpp
      // issue #1040). Every real document consumes input, so one whose root
      // starts where the previous one's did is that token.
      const YAML::Mark start = doc->root().Mark();
      if (start.pos == previous_start) throw YAML::ParserException(start, "unexpected token");
      previous_start = start.pos;
    }
    // "---" with nothing after it: one null root, as YAML::Load gives.
    if (doc->nodes_.empty()) doc->nodes_.emplace_back();
    documents.push_back(std::move(doc));
  }
  return documents;
}

const YamlDocument::Node& YamlDocument::Resolved(std::uint32_t id) const {
  while (nodes_[id].alias_of != kNil) id = nodes_[id].alias_of;
  return nodes_[id];
}

YamlNode::Kind YamlNode::kind() const {
  return doc_ == nullptr ? Kind::kMap : doc_->Resolved(id_).kind;
}

std::string_view YamlNode::Scalar() const {
  if (doc_ == nullptr) return {};
  const YamlDocument::Node& node = doc_->Resolved(id_);
  return std::string_view(doc_->text_).substr(node.text_offset, node.text_size);
}

YAML::Mark YamlNode::Mark() const {
  return doc_ == nullptr ? YAML::Mark::null_mark() : doc_->Resolved(id_).mark;
}

std::uint32_t YamlNode::Id() const {
  if (doc_ == nullptr) return YamlDocument::kNil;
  std::uint32_t id = id_;
  while (doc_->nodes_[id].alias_of != YamlDocument::kNil) id = doc_->nodes_[id].alias_of;
  return id;
}

std::vector<std::pair<YamlNode, YamlNode>> YamlNode::Entries() const {
  std::vector<std::pair<YamlNode, YamlNode>> entries;
  if (!IsMap() || doc_ == nullptr) return entries;
  std::uint32_t child = doc_->Resolved(id_).first;
  while (child != YamlDocument::kNil) {
    const std::uint32_t value = doc_->nodes_[child].next;  // a map's children come in pairs
    entries.emplace_back(YamlNode(doc_, child), YamlNode(doc_, value));
    child = doc_->nodes_[value].next;
  }
  return entries;
}

std::vector<YamlNode> YamlNode::Items() const {
  std::vector<YamlNode> items;
  if (!IsSequence()) return items;
  for (std::uint32_t child = doc_->Resolved(id_).first; child != YamlDocument::kNil;
       child = doc_->nodes_[child].next) {
    items.push_back(YamlNode(doc_, child));
  }
  return items;
}

}  // namespace hostmesh::config
