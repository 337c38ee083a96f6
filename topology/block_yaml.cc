#include "topology/block_yaml.h"

namespace hostmesh::topology {

namespace {

struct Line {
  int number = 0;
  std::uint32_t indent = 0;
  std::string_view content;  // comment and trailing blanks removed; never empty
};

bool IsSequenceItem(std::string_view content) {
  return content == "-" || content.starts_with("- ");
}

// Position of the ':' ending a map key, or npos when the content is not "key: ...".
size_t KeyEnd(std::string_view content) {
  if (content.empty() || content[0] == '"' || content[0] == '\'') return std::string_view::npos;
  for (size_t i = 0; i < content.size(); ++i) {
    if (content[i] == ':' && (i + 1 == content.size() || content[i + 1] == ' ')) return i;
  }
  return std::string_view::npos;
}

}  // namespace

// Not in the anonymous namespace: BlockYaml befriends it to fill nodes_.
class BlockYamlParser {
 public:
  explicit BlockYamlParser(std::string_view text) : text_(text) {}

  std::optional<BlockYaml> Run() {
    if (!SplitLines()) return std::nullopt;
    doc_.nodes_.push_back({});  // the root, filled below
    if (lines_.empty()) {
      doc_.nodes_[0].kind = BlockYaml::Kind::kMap;
      return std::move(doc_);
    }
    if (lines_[0].indent != 0 || IsSequenceItem(lines_[0].content)) return std::nullopt;
    if (!ParseMap(0, 0)) return std::nullopt;
    if (failed_ || pos_ != lines_.size()) return std::nullopt;
    return std::move(doc_);
  }

 private:
  bool SplitLines() {
    int number = 0;
    size_t start = 0;
    while (start < text_.size()) {
      size_t end = text_.find('\n', start);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view line = text_.substr(start, end - start);
      start = end + 1;
      ++number;
      std::uint32_t indent = 0;
      while (indent < line.size() && line[indent] == ' ') ++indent;
      if (indent < line.size() && line[indent] == '\t') return false;
      std::string_view content = line.substr(indent);
      bool quoted = false;
      for (size_t i = 0; i < content.size(); ++i) {
        const char c = content[i];
        if (c == '\\' || c == '\'') return false;  // escapes and single quotes: yaml-cpp's job
        if (c == '"') quoted = !quoted;
        if (c == '#' && !quoted && (i == 0 || content[i - 1] == ' ')) {
          content = content.substr(0, i);
          break;
        }
      }
      while (!content.empty() && (content.back() == ' ' || content.back() == '\r')) {
        content.remove_suffix(1);
      }
      if (content.empty()) continue;
      if (indent == 0 &&
          (content.starts_with("---") || content.starts_with("...") || content.starts_with("%"))) {
        return false;
      }
      lines_.push_back({number, indent, content});
    }
    return true;
  }

  std::uint32_t NewNode(BlockYaml::Kind kind, int line, int column) {
    doc_.nodes_.push_back({.kind = kind, .line = line, .column = column});
    return static_cast<std::uint32_t>(doc_.nodes_.size() - 1);
  }

  // Fills node `id` as a scalar from the text after "key: " or "- ".
  bool SetScalar(std::uint32_t id, std::string_view value) {
    BlockYaml::Node& n = doc_.nodes_[id];
    if (value == "[]") {
      n.kind = BlockYaml::Kind::kSequence;
    } else if (value == "{}") {
      n.kind = BlockYaml::Kind::kMap;
    } else if (value.front() == '"') {
      if (value.size() < 2 || value.back() != '"') return false;
      const std::string_view inner = value.substr(1, value.size() - 2);
      if (inner.find('"') != std::string_view::npos) return false;
      n.kind = BlockYaml::Kind::kScalar;
      n.quoted = true;
      n.text = inner;
    } else if (std::string_view("'&*!|>[]{}%@`,?-").find(value.front()) != std::string_view::npos ||
               value.find(": ") != std::string_view::npos ||
               value.find('"') != std::string_view::npos) {
      return false;
    } else if (value == "~" || value == "null" || value == "Null" || value == "NULL") {
      n.kind = BlockYaml::Kind::kNull;
    } else {
      n.kind = BlockYaml::Kind::kScalar;
      n.text = value;
    }
    return true;
  }

  // The value after "key:" with nothing on the line: a nested block or null.
  std::uint32_t ParseNestedValue(std::uint32_t parent_indent, int line, int column) {
    if (pos_ < lines_.size()) {
      const Line& next = lines_[pos_];
      if (next.indent > parent_indent) return ParseBlock(next.indent);
      // "key:\n- item" at the key's own indent is a list too.
      if (next.indent == parent_indent && IsSequenceItem(next.content)) {
        return ParseSequence(parent_indent);
      }
    }
    return NewNode(BlockYaml::Kind::kNull, line, column);
  }

  std::uint32_t ParseBlock(std::uint32_t indent) {
    if (IsSequenceItem(lines_[pos_].content)) return ParseSequence(indent);
    if (KeyEnd(lines_[pos_].content) == std::string_view::npos) {
      failed_ = true;  // a bare scalar on its own line (multi-line plain scalar)
      return NewNode(BlockYaml::Kind::kNull, lines_[pos_].number, 1);
    }
    const std::uint32_t id =
        NewNode(BlockYaml::Kind::kMap, lines_[pos_].number, static_cast<int>(indent) + 1);
    ParseMap(id, indent);
    return id;
  }

  // Reads the entries of map `id` at `indent`, starting at the current line.
  bool ParseMap(std::uint32_t id, std::uint32_t indent) {
    doc_.nodes_[id].kind = BlockYaml::Kind::kMap;
    if (doc_.nodes_[id].line == 0) {
      doc_.nodes_[id].line = lines_[pos_].number;
      doc_.nodes_[id].column = static_cast<int>(indent) + 1;
    }
    std::uint32_t last = BlockYaml::kNil;
    while (!failed_ && pos_ < lines_.size() && lines_[pos_].indent == indent &&
           !IsSequenceItem(lines_[pos_].content)) {
      const Line line = lines_[pos_++];
      const size_t colon = KeyEnd(line.content);
      if (colon == std::string_view::npos || colon == 0) return failed_ = true, false;
      const std::string_view key = line.content.substr(0, colon);
      std::string_view value = line.content.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      const int column = static_cast<int>(indent) + 1;
      std::uint32_t child;
      if (value.empty()) {
        child = ParseNestedValue(indent, line.number, column);
      } else {
        child = NewNode(BlockYaml::Kind::kScalar, line.number,
                        column + static_cast<int>(value.data() - line.content.data()));
        if (!SetScalar(child, value)) return failed_ = true, false;
      }
      doc_.nodes_[child].key = key;
      if (last == BlockYaml::kNil) {
        doc_.nodes_[id].first = child;
      } else {
        doc_.nodes_[last].next = child;
      }
      last = child;
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) failed_ = true;
    return !failed_;
  }

  std::uint32_t ParseSequence(std::uint32_t indent) {
    const std::uint32_t id =
        NewNode(BlockYaml::Kind::kSequence, lines_[pos_].number, static_cast<int>(indent) + 1);
    std::uint32_t last = BlockYaml::kNil;
    while (!failed_ && pos_ < lines_.size() && lines_[pos_].indent == indent &&
           IsSequenceItem(lines_[pos_].content)) {
      Line& line = lines_[pos_];
      std::string_view rest = line.content.substr(1);
      size_t offset = 1;
      while (!rest.empty() && rest.front() == ' ') {
        rest.remove_prefix(1);
        ++offset;
      }
      const int column = static_cast<int>(indent + offset) + 1;
      std::uint32_t child;
      if (rest.empty()) {
        ++pos_;
        child = pos_ < lines_.size() && lines_[pos_].indent > indent
                    ? ParseBlock(lines_[pos_].indent)
                    : NewNode(BlockYaml::Kind::kNull, line.number, column);
      } else if (IsSequenceItem(rest) || KeyEnd(rest) != std::string_view::npos) {
        // "- key: value" opens a map (or "- - x" a list) whose indent is that of
        // its first key; pretend the dash was a space and parse from here.
        line.indent = indent + static_cast<std::uint32_t>(offset);
        line.content = rest;
        child = ParseBlock(line.indent);
      } else {
        ++pos_;
        child = NewNode(BlockYaml::Kind::kScalar, line.number, column);
        if (!SetScalar(child, rest)) failed_ = true;
      }
      if (last == BlockYaml::kNil) {
        doc_.nodes_[id].first = child;
      } else {
        doc_.nodes_[last].next = child;
      }
      last = child;
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) failed_ = true;
    return id;
  }

  std::string_view text_;
  std::vector<Line> lines_;
  size_t pos_ = 0;
  bool failed_ = false;
  BlockYaml doc_;
};

std::optional<BlockYaml> BlockYaml::Parse(std::string_view text) {
  return BlockYamlParser(text).Run();
}

std::uint32_t BlockYaml::Child(std::uint32_t id, std::string_view key) const {
  if (nodes_[id].kind != Kind::kMap) return kNil;
  for (std::uint32_t c = nodes_[id].first; c != kNil; c = nodes_[c].next) {
    if (nodes_[c].key == key) return c;
  }
  return kNil;
}

std::uint32_t BlockYaml::Item(std::uint32_t id, size_t index) const {
  if (nodes_[id].kind != Kind::kSequence) return kNil;
  std::uint32_t c = nodes_[id].first;
  for (size_t i = 0; i < index && c != kNil; ++i) c = nodes_[c].next;
  return c;
}

}  // namespace hostmesh::topology
