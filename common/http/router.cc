#include "common/http/router.h"

#include <stdexcept>
#include <utility>

namespace hostmesh::http {
namespace {

Response PlainError(int status, std::string body) {
  Response response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

}  // namespace

void Router::Add(std::map<std::string, Handler, std::less<>>& handlers, std::string path,
                 Handler handler) {
  if (!path.starts_with('/')) throw std::invalid_argument("route '" + path + "' must start with /");
  if (!handler) throw std::invalid_argument("route '" + path + "' has no handler");
  if (get_handlers_.contains(path) || post_handlers_.contains(path) ||
      !handlers.try_emplace(path, std::move(handler)).second) {
    throw std::invalid_argument("route '" + path + "' is registered twice");
  }
}

void Router::Get(std::string path, Handler handler) {
  Add(get_handlers_, std::move(path), std::move(handler));
}

void Router::Post(std::string path, Handler handler) {
  Add(post_handlers_, std::move(path), std::move(handler));
}

void Router::GetUnder(std::string prefix, Handler handler) {
  if (!prefix.starts_with('/') || !prefix.ends_with('/')) {
    throw std::invalid_argument("prefix route '" + prefix + "' must start and end with /");
  }
  if (!handler) throw std::invalid_argument("prefix route '" + prefix + "' has no handler");
  if (!get_prefix_handlers_.try_emplace(prefix, std::move(handler)).second) {
    throw std::invalid_argument("prefix route '" + prefix + "' is registered twice");
  }
}

const Handler* Router::FindGet(std::string_view path) const {
  if (const auto it = get_handlers_.find(path); it != get_handlers_.end()) return &it->second;
  const Handler* found = nullptr;
  std::size_t longest = 0;
  for (const auto& [prefix, handler] : get_prefix_handlers_) {
    if (path.starts_with(prefix) && prefix.size() > longest) {
      longest = prefix.size();
      found = &handler;
    }
  }
  return found;
}

Response Router::Dispatch(const Request& request) const {
  if (const auto it = post_handlers_.find(request.path); it != post_handlers_.end()) {
    if (request.method == "POST") return it->second(request);
    Response response = PlainError(405, "method not allowed\n");
    response.headers.emplace_back("Allow", "POST");
    return response;
  }
  const Handler* handler = FindGet(request.path);
  if (handler == nullptr) return PlainError(404, "not found\n");
  // HEAD is GET without the body (the server leaves it out): `curl -I` works.
  if (request.method != "GET" && request.method != "HEAD") {
    Response response = PlainError(405, "method not allowed\n");
    response.headers.emplace_back("Allow", "GET, HEAD");
    return response;
  }
  return (*handler)(request);
}

}  // namespace hostmesh::http
