// The HTTP query parser (common/http/query.h) on a raw query string from any
// client of the analyzer's or the agent's HTTP port, and the router's
// dispatch of the request it belongs to. The input is "name\nquery": the
// parameter looked up, then the query. A value found must come from
// UrlDecode of some part of the query, so it is never longer than the query.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/http/query.h"
#include "common/http/router.h"
#include "fuzz/fuzz_check.h"

using namespace hostmesh::http;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  const std::string_view name = newline == std::string_view::npos ? "" : input.substr(0, newline);
  const std::string_view query =
      newline == std::string_view::npos ? input : input.substr(newline + 1);

  if (const auto decoded = UrlDecode(query)) FUZZ_CHECK(decoded->size() <= query.size());
  for (const std::string_view each : {name, std::string_view("from"), std::string_view("nic")}) {
    if (const auto value = QueryParam(query, each)) FUZZ_CHECK(value->size() <= query.size());
  }

  static const Router* const router = [] {
    auto* r = new Router;
    r->Get("/api/v1/status", [](const Request& request) {
      Response response;
      response.body = QueryParam(request.query, "agent").value_or("");
      return response;
    });
    r->Post("/debug/qp", [](const Request&) { return Response{}; });
    return r;
  }();
  for (const std::string_view method : {std::string_view("GET"), std::string_view("POST")}) {
    const Response response = router->Dispatch({method, name, query});
    FUZZ_CHECK(response.status == 200 || response.status == 404 || response.status == 405);
  }
  return 0;
}
