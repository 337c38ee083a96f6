// What an HTTP handler sees and returns: plain values, so handlers and the
// router are tested without sockets.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hostmesh::http {

struct Request {
  std::string_view method{};  // "GET"
  std::string_view path{};    // URL-decoded and normalized ("/a/../b" is "/b")
  std::string_view query{};   // raw, after '?', still URL-encoded; see query.h
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body{};
  std::vector<std::pair<std::string, std::string>> headers{};  // extra ones
};

// Runs on a server thread, concurrently with other requests. An exception
// becomes a 500.
using Handler = std::function<Response(const Request&)>;

}  // namespace hostmesh::http
