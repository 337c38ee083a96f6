// Reading the analyzer API's JSON in hostmeshctl: Boost.PropertyTree's JSON
// parser behind a few typed getters. PropertyTree keeps every scalar as text
// (null as "null", booleans as "true"/"false") and array elements as children
// with empty keys; these helpers hide that.
#pragma once

#include <boost/property_tree/ptree.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hostmesh::ctl {

using JsonNode = boost::property_tree::ptree;

// Nullopt with *error (line and reason) when `text` is not valid JSON.
std::optional<JsonNode> ParseJson(const std::string& text, std::string* error);

// The child at `path` ("a.b"), or null when absent.
const JsonNode* JsonChild(const JsonNode& node, const std::string& path);
// True when `path` is absent or JSON null.
bool JsonIsNull(const JsonNode& node, const std::string& path);
std::optional<std::string> JsonString(const JsonNode& node, const std::string& path);
std::optional<double> JsonNumber(const JsonNode& node, const std::string& path);
std::optional<std::int64_t> JsonInt(const JsonNode& node, const std::string& path);
std::optional<bool> JsonBool(const JsonNode& node, const std::string& path);
// Elements of the array at `path` (empty when absent, null or empty).
std::vector<const JsonNode*> JsonArray(const JsonNode& node, const std::string& path);

}  // namespace hostmesh::ctl
