#include "ctl/json_reader.h"

#include <algorithm>

namespace hostmesh::ctl {

std::optional<JsonNode> ParseJson(const std::string& text, std::string* error) {
  try {
    return JsonNode::parse(text);
  } catch (const JsonNode::parse_error& e) {
    // nlohmann's message says "parse error at line L, column C: why"; the byte
    // offset gives the line without parsing the message.
    const auto end = text.begin() + static_cast<std::ptrdiff_t>(std::min(e.byte, text.size()));
    const auto line = 1 + std::count(text.begin(), end, '\n');
    const std::string what = e.what();
    const auto colon = what.find(": ", what.find("parse error"));
    *error = "invalid JSON at line " + std::to_string(line) + ": " +
             (colon == std::string::npos ? what : what.substr(colon + 2));
    return std::nullopt;
  }
}

const JsonNode* JsonChild(const JsonNode& node, const std::string& path) {
  const JsonNode* at = &node;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = path.find('.', start);
    if (!at->is_object()) return nullptr;
    const auto it = at->find(path.substr(start, dot - start));
    if (it == at->end()) return nullptr;
    at = &*it;
    if (dot == std::string::npos) return at;
    start = dot + 1;
  }
}

bool JsonIsNull(const JsonNode& node, const std::string& path) {
  const JsonNode* child = JsonChild(node, path);
  return child == nullptr || child->is_null();
}

std::optional<std::string> JsonString(const JsonNode& node, const std::string& path) {
  const JsonNode* child = JsonChild(node, path);
  if (child == nullptr) return std::nullopt;
  if (child->is_string()) return child->get<std::string>();
  if (child->is_number() || child->is_boolean()) return child->dump();
  return std::nullopt;
}

std::optional<double> JsonNumber(const JsonNode& node, const std::string& path) {
  const JsonNode* child = JsonChild(node, path);
  if (child == nullptr || !child->is_number()) return std::nullopt;
  return child->get<double>();
}

std::optional<std::int64_t> JsonInt(const JsonNode& node, const std::string& path) {
  const JsonNode* child = JsonChild(node, path);
  if (child == nullptr || !child->is_number()) return std::nullopt;
  if (child->is_number_float()) {  // 1e9; beyond int64 (or NaN) it is no integer
    const double v = child->get<double>();
    if (!(v > -9.2e18 && v < 9.2e18)) return std::nullopt;
    return static_cast<std::int64_t>(v);
  }
  return child->get<std::int64_t>();
}

std::optional<bool> JsonBool(const JsonNode& node, const std::string& path) {
  const JsonNode* child = JsonChild(node, path);
  if (child == nullptr || !child->is_boolean()) return std::nullopt;
  return child->get<bool>();
}

std::vector<const JsonNode*> JsonArray(const JsonNode& node, const std::string& path) {
  std::vector<const JsonNode*> out;
  const JsonNode* child = JsonChild(node, path);
  if (child == nullptr || !child->is_array()) return out;
  for (const JsonNode& element : *child) out.push_back(&element);
  return out;
}

}  // namespace hostmesh::ctl
