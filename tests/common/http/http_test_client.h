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

}  // namespace hostmesh::http::testing
