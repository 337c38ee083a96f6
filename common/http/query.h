// Reading parameters out of a raw query string ("window=20s&nic=nic%200").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hostmesh::http {

// The URL-decoded value of the first `name=` parameter ('+' is a space), "" for
// a bare `name`, nullopt when absent or when its %-escapes are malformed.
std::optional<std::string> QueryParam(std::string_view query, std::string_view name);

// Decodes %XX and '+'; nullopt on a truncated or non-hex escape.
std::optional<std::string> UrlDecode(std::string_view text);

}  // namespace hostmesh::http
