// Maps exact paths to handlers and answers 404 and 405 itself.
#pragma once

#include <map>
#include <string>

#include "common/http/handler.h"

namespace hostmesh::http {

class Router {
 public:
  // Exact path match ("/metrics" does not serve "/metrics/"). A path that does
  // not start with '/' or is registered twice is a programming error:
  // std::invalid_argument.
  void Get(std::string path, Handler handler);
  // The same for POST: for requests that change something (the agent's
  // debug hooks), which a GET (a crawler, a prefetch) must never trigger.
  void Post(std::string path, Handler handler);

  // GET of every path under `prefix` (which ends with '/') that no exact
  // route has: the handler reads the rest of the path itself ("/api/v1/
  // incidents/" serves "/api/v1/incidents/12/evidence"). The longest prefix wins.
  void GetUnder(std::string prefix, Handler handler);

  // 404 for an unknown path, 405 (with Allow: the path's methods) for another
  // method on a known one, else the handler's response.
  Response Dispatch(const Request& request) const;

 private:
  void Add(std::map<std::string, Handler, std::less<>>& handlers, std::string path,
           Handler handler);
  std::map<std::string, Handler, std::less<>> get_handlers_;
  std::map<std::string, Handler, std::less<>> post_handlers_;
  std::map<std::string, Handler, std::less<>> get_prefix_handlers_;
  // The GET handler of a path: exact, else under the longest prefix; null if none.
  const Handler* FindGet(std::string_view path) const;
};

}  // namespace hostmesh::http
