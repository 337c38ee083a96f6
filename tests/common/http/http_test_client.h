// A bare-socket HTTP/1.1 client for tests: nothing shared with the server
// side, so the test sees exactly the bytes a scraper would.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace hostmesh::http::testing {

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// One request on a fresh connection to 127.0.0.1:port, read to EOF. nullopt
// when the connection fails or the reply does not parse (why in *error).
std::optional<HttpReply> Fetch(std::uint16_t port, std::string_view method, std::string_view target,
                               std::string* error = nullptr);

// The same with extra header lines, each ending in "\r\n" ("Authorization:
// Bearer x\r\n"), sent from `source` (any 127.0.0.0/8 address: a distinct
// peer to the server's per-peer cap).
std::optional<HttpReply> FetchWith(std::uint16_t port, std::string_view method,
                                   std::string_view target, std::string_view headers,
                                   std::string* error = nullptr, const char* source = "127.0.0.1");

// A connected TCP socket from `source` (bound, port 0) to 127.0.0.1:port;
// -1 on failure. For tests that hold connections open.
int ConnectFrom(const char* source, std::uint16_t port);

}  // namespace hostmesh::http::testing
