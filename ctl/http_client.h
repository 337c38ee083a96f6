// A blocking HTTP GET for hostmeshctl talking to the analyzer's read-only API:
// libcurl underneath, one easy handle per request. Plain http:// only, no
// proxy (the analyzer sits on the management network, and an http_proxy meant
// for the outside must not capture it), `Connection: close`.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hostmesh::ctl {

// Where the analyzer's API lives: "http://HOST:PORT[/PREFIX]" or "HOST:PORT".
struct HttpEndpoint {
  std::string host;  // name, IPv4, or IPv6 without brackets
  std::uint16_t port = 80;
  std::string prefix;  // path prefix without a trailing '/', "" for none

  // "http://host:port" (IPv6 in brackets), plus the prefix: for messages.
  std::string ToString() const;
};

// Nullopt with *error when `url` is not an http URL of that form.
std::optional<HttpEndpoint> ParseHttpEndpoint(std::string_view url, std::string* error);

enum class HttpError {
  kNone,
  kUnreachable,  // name not resolved, connection refused or timed out, no answer in time
  kBadResponse,  // no answer or not HTTP/1.x, truncated or oversized body
};

struct HttpResponse {
  HttpError error = HttpError::kNone;
  std::string message;                                       // why, when error != kNone
  int status = 0;                                            // e.g. 200
  std::string reason;                                        // e.g. "OK"
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;

  bool ok() const { return error == HttpError::kNone; }
  // First header of that (lower-case) name.
  std::optional<std::string> Header(std::string_view name) const;
};

struct HttpOptions {
  // Bounds the whole exchange: resolving, connecting, sending and reading.
  std::chrono::milliseconds timeout{5000};
  std::size_t max_body_bytes = 64u << 20;
};

// GET endpoint.prefix + path (path starts with '/', may carry a query).
HttpResponse HttpGet(const HttpEndpoint& endpoint, std::string_view path,
                     const HttpOptions& options = {});

}  // namespace hostmesh::ctl
