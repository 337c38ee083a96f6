// Boost 1.74's JSON parser includes <boost/bind.hpp>, which otherwise prints a
// deprecation note about its global placeholders on every build.
#define BOOST_BIND_GLOBAL_PLACEHOLDERS

#include "ctl/json_reader.h"

#include <boost/property_tree/json_parser.hpp>
#include <charconv>
#include <sstream>

namespace hostmesh::ctl {

std::optional<JsonNode> ParseJson(const std::string& text, std::string* error) {
  std::istringstream in(text);
  JsonNode root;
  try {
    boost::property_tree::read_json(in, root);
  } catch (const boost::property_tree::json_parser_error& e) {
    *error = "invalid JSON at line " + std::to_string(e.line()) + ": " + e.message();
    return std::nullopt;
  }
  return root;
}

const JsonNode* JsonChild(const JsonNode& node, const std::string& path) {
  const auto child = node.get_child_optional(path);
  return child ? &*child : nullptr;
}

bool JsonIsNull(const JsonNode& node, const std::string& path) {
  const JsonNode* child = JsonChild(node, path);
  return child == nullptr || (child->empty() && child->data() == "null");
}

std::optional<std::string> JsonString(const JsonNode& node, const std::string& path) {
  const JsonNode* child = JsonChild(node, path);
  if (child == nullptr || !child->empty() || JsonIsNull(node, path)) return std::nullopt;
  return child->data();
}

std::optional<double> JsonNumber(const JsonNode& node, const std::string& path) {
  const auto text = JsonString(node, path);
  if (!text || text->empty()) return std::nullopt;
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || ptr != text->data() + text->size()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> JsonInt(const JsonNode& node, const std::string& path) {
  const auto text = JsonString(node, path);
  if (!text || text->empty()) return std::nullopt;
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec == std::errc() && ptr == text->data() + text->size()) return value;
  const auto number = JsonNumber(node, path);  // 1e9, 12.0
  if (!number) return std::nullopt;
  return static_cast<std::int64_t>(*number);
}

std::optional<bool> JsonBool(const JsonNode& node, const std::string& path) {
  const auto text = JsonString(node, path);
  if (text == "true") return true;
  if (text == "false") return false;
  return std::nullopt;
}

std::vector<const JsonNode*> JsonArray(const JsonNode& node, const std::string& path) {
  std::vector<const JsonNode*> out;
  const JsonNode* child = JsonChild(node, path);
  if (child == nullptr) return out;
  for (const auto& [key, element] : *child) {
    if (!key.empty()) return {};  // an object, not an array
    out.push_back(&element);
  }
  return out;
}

}  // namespace hostmesh::ctl
