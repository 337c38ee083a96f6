// Reading the analyzer API's JSON in hostmeshctl: nlohmann-json behind a few
// typed getters that take a dotted path ("window.start_ns") and answer
// nullopt for absent or mistyped values, so a view never throws.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hostmesh::ctl {

using JsonNode = nlohmann::json;

// Nullopt with *error (line and reason) when `text` is not valid JSON.
std::optional<JsonNode> ParseJson(const std::string& text, std::string* error);

// The child at `path` ("a.b"), or null when absent.
const JsonNode* JsonChild(const JsonNode& node, const std::string& path);
// True when `path` is absent or JSON null.
bool JsonIsNull(const JsonNode& node, const std::string& path);
// A string, or a number or boolean as its JSON text (ids such as "rail" are
// numbers in the API and text in the tables).
std::optional<std::string> JsonString(const JsonNode& node, const std::string& path);
std::optional<double> JsonNumber(const JsonNode& node, const std::string& path);
// An integer, or a number with a fraction truncated.
std::optional<std::int64_t> JsonInt(const JsonNode& node, const std::string& path);
std::optional<bool> JsonBool(const JsonNode& node, const std::string& path);
// Elements of the array at `path` (empty when absent, null, empty or not an array).
std::vector<const JsonNode*> JsonArray(const JsonNode& node, const std::string& path);

}  // namespace hostmesh::ctl
