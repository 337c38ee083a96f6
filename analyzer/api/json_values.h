// The API's JSON values: nlohmann-json with keys kept in insertion order (the
// order the API has always written its fields in), and the two conventions
// the API keeps on top of the library.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace hostmesh::analyzer::api {

using Json = nlohmann::ordered_json;

// Whole numbers below 1e15 as integers (nlohmann writes 400000.0 for the
// double; ns quantiles and counts read better as 400000), others as the
// shortest form that reads back to the same double; NaN and infinities null
// (JSON has neither).
Json JsonNumber(double value);

// Compact (no spaces), UTF-8 passed through; bytes that are not UTF-8 (a
// host name from a misbehaving agent) become U+FFFD instead of failing.
std::string DumpJson(const Json& json);

}  // namespace hostmesh::analyzer::api
