#include "common/config/map_reader.h"

#include <array>
#include <charconv>

#include "common/config/spelling.h"

namespace hostmesh::config {

std::string Quote(std::string_view text) {
  // Escaped so a stray newline or tab in a value cannot garble the one-line message.
  std::string quoted = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (c == '\n') {
      quoted += "\\n";
    } else if (c == '\t') {
      quoted += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      constexpr std::string_view kHex = "0123456789abcdef";
      quoted += "\\x";
      quoted += kHex[byte >> 4];
      quoted += kHex[byte & 0xf];
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

namespace detail {

std::string Codec<double>::Format(double value) {
  std::array<char, 32> text{};
  const auto result = std::to_chars(text.data(), text.data() + text.size(), value);
  return std::string(text.data(), result.ptr);
}

std::string DescribeRange(const std::string& min, const std::string& max, LowerBound lower) {
  if (lower == LowerBound::kExclusive) {
    return "must be greater than " + min + " and at most " + max;
  }
  return "must be between " + min + " and " + max;
}

bool LooksLikeInteger(std::string_view text) {
  if (text.starts_with('-') || text.starts_with('+')) text.remove_prefix(1);
  if (text.empty()) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace detail

namespace {

// yaml-cpp marks are 0-based and -1 when unknown; operators count from 1.
std::pair<int, int> Position(const YAML::Mark& mark) {
  if (mark.line < 0) return {0, 0};
  return {mark.line + 1, mark.column + 1};
}

}  // namespace

MapReader::MapReader(const YamlNode& node, std::string path, const YAML::Mark& anchor,
                     IssueSink* sink)
    : node_(node), path_(std::move(path)), anchor_(anchor), sink_(sink) {
  if (!node_.IsMap()) return;
  for (const auto& [key, value] : node_.Entries()) {
    if (!key.IsScalar()) {
      ReportAt(key.Mark(), path_, "keys must be plain strings, got " + Kind(key));
      continue;
    }
    // The scalar by name: clang before 16 cannot capture a structured binding.
    const std::string_view scalar = key.Scalar();
    const auto duplicate = std::find_if(entries_.begin(), entries_.end(),
                                        [&](const Entry& e) { return e.key == scalar; });
    if (duplicate != entries_.end()) {
      // The parser reports both; which one wins would be a guess, so refuse.
      ReportAt(key.Mark(), PathOf(key.Scalar()),
               "duplicate key (first at line " +
                   std::to_string(Position(duplicate->key_node.Mark()).first) + ")");
      continue;
    }
    entries_.push_back({key.Scalar(), key, value});
  }
}

const MapReader::Entry* MapReader::Lookup(std::string_view key, bool required) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
  for (const Entry& entry : entries_) {
    if (entry.key == key) return &entry;
  }
  if (required) ReportAt(anchor_, PathOf(key), "required key is missing");
  return nullptr;
}

bool MapReader::Has(std::string_view key) {
  return Lookup(key, false) != nullptr;
}

void MapReader::Fail(std::string_view key, std::string message) {
  const Entry* entry = Lookup(key, false);
  if (entry == nullptr) {
    ReportAt(anchor_, PathOf(key), std::move(message));
  } else {
    Report(entry->value, entry->key_node, PathOf(key), std::move(message));
  }
}

void MapReader::Fail(std::string message) {
  ReportAt(anchor_, path_, std::move(message));
}

std::string MapReader::PathOf(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  return path_ + "." + std::string(key);
}

void MapReader::Finish() {
  if (finished_) return;
  finished_ = true;
  for (const Entry& entry : entries_) {
    if (std::find(known_.begin(), known_.end(), entry.key) != known_.end()) continue;
    std::string message = "unknown key";
    if (std::optional<std::string> close = ClosestMatch(entry.key, known_)) {
      message += "; did you mean " + Quote(*close) + "?";
    }
    ReportAt(entry.key_node.Mark(), PathOf(entry.key), std::move(message));
  }
}

std::optional<std::string> MapReader::ScalarText(const YamlNode& value, const YamlNode& near,
                                                 const std::string& path,
                                                 std::string_view expected) {
  if (value.IsScalar()) return std::string(value.Scalar());
  if (value.IsNull()) {
    Report(value, near, path, "has no value; expected " + std::string(expected));
  } else {
    Report(value, near, path, "expected " + std::string(expected) + ", got " + Kind(value));
  }
  return std::nullopt;
}

void MapReader::Report(const YamlNode& value, const YamlNode& near, std::string path,
                       std::string message) {
  // A null value has no text of its own; yaml-cpp marks it where the next token
  // starts, often the following line, so point at its key instead.
  const YAML::Mark mark = !value.IsNull() ? value.Mark() : near.Mark();
  ReportAt(mark, std::move(path), std::move(message));
}

void MapReader::ReportAt(const YAML::Mark& mark, std::string path, std::string message) {
  const auto [line, column] = Position(mark);
  sink_->Add(line, column, std::move(path), std::move(message));
}

bool MapReader::ReadMap(std::string_view key, const ReadFn& read, bool required) {
  const Entry* entry = Lookup(key, required);
  // A missing required map is one issue, not one per key it would have held.
  if (entry == nullptr) return !required;
  const std::string path = PathOf(key);
  if (!entry->value.IsMap() && !entry->value.IsNull()) {
    Report(entry->value, entry->key_node, path, "expected a map, got " + Kind(entry->value));
    return false;
  }
  MapReader child(entry->value, path, entry->key_node.Mark(), sink_);
  read(child);
  child.Finish();
  return true;
}

bool MapReader::ReadList(std::string_view key, const ReadFn& read_item, bool required) {
  const Entry* entry = Lookup(key, required);
  if (entry == nullptr) return !required;
  if (entry->value.IsNull()) return true;
  const std::string path = PathOf(key);
  if (!entry->value.IsSequence()) {
    Report(entry->value, entry->key_node, path, "expected a list, got " + Kind(entry->value));
    return false;
  }
  size_t index = 0;
  for (const YamlNode& item : entry->value.Items()) {
    const std::string item_path = path + "[" + std::to_string(index++) + "]";
    if (!item.IsMap()) {
      Report(item, entry->key_node, item_path, "expected a map, got " + Kind(item));
      continue;
    }
    MapReader child(item, item_path, item.Mark(), sink_);
    read_item(child);
    child.Finish();
  }
  return true;
}

std::string MapReader::Kind(const YamlNode& node) {
  switch (node.kind()) {
    case YamlNode::Kind::kMap:
      return "a map";
    case YamlNode::Kind::kSequence:
      return "a list";
    case YamlNode::Kind::kScalar:
      return Quote(node.Scalar());
    case YamlNode::Kind::kNull:
      break;
  }
  return "nothing";
}

std::string MapReader::DescribeChoices(const std::vector<std::string>& choices) {
  std::string text = "one of ";
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) text += ", ";
    text += Quote(choices[i]);
  }
  return text;
}

std::string MapReader::UnknownChoice(std::string_view text,
                                     const std::vector<std::string>& choices) {
  std::string message = "must be " + DescribeChoices(choices) + ", got " + Quote(text);
  if (std::optional<std::string> close = ClosestMatch(text, choices)) {
    message += " (did you mean " + Quote(*close) + "?)";
  }
  return message;
}

}  // namespace hostmesh::config
