// Reading a request target: its path, and parameters out of its raw query
// string ("window=20s&nic=nic%200").
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

// The path of an origin-form request target, as handlers see it: the part
// before '?', %-decoded ('+' stays '+'), dot segments removed (RFC 3986
// 5.2.4: "/x/../query" is "/query"). nullopt for a malformed escape or a
// NUL; "" for a target that does not start with '/' (absolute form, '*').
std::optional<std::string> RequestPath(std::string_view target);

// The raw query of a request target (after the first '?'), "" when none.
std::string_view RawQuery(std::string_view target);

}  // namespace hostmesh::http
