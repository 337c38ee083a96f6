// Routing without sockets: exact paths, 404, 405, HEAD as GET, POST routes.
#include "common/http/router.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace hostmesh::http {
namespace {

Router EchoRouter() {
  Router router;
  router.Get("/echo", [](const Request& request) {
    Response response;
    response.content_type = "application/json";
    response.body = std::string(request.path) + "?" + std::string(request.query);
    return response;
  });
  return router;
}

TEST(HttpRouter, CallsTheHandlerOfAnExactPath) {
  const Router router = EchoRouter();
  const Response response = router.Dispatch({.method = "GET", .path = "/echo", .query = "a=1"});
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.content_type, "application/json");
  EXPECT_EQ(response.body, "/echo?a=1");
}

TEST(HttpRouter, UnknownPathIs404) {
  const Router router = EchoRouter();
  EXPECT_EQ(router.Dispatch({.method = "GET", .path = "/"}).status, 404);
  EXPECT_EQ(router.Dispatch({.method = "GET", .path = "/echo/"}).status, 404);
  EXPECT_EQ(router.Dispatch({.method = "GET", .path = "/ech"}).status, 404);
  EXPECT_EQ(router.Dispatch({.method = "POST", .path = "/nothing"}).status, 404);
}

TEST(HttpRouter, OtherMethodOnAKnownPathIs405WithAllow) {
  const Router router = EchoRouter();
  for (const char* method : {"POST", "PUT", "DELETE"}) {
    const Response response = router.Dispatch({.method = method, .path = "/echo"});
    EXPECT_EQ(response.status, 405) << method;
    ASSERT_EQ(response.headers.size(), 1u);
    EXPECT_EQ(response.headers[0], (std::pair<std::string, std::string>("Allow", "GET, HEAD")));
  }
}

TEST(HttpRouter, HeadIsAnsweredByTheGetHandler) {
  const Router router = EchoRouter();
  EXPECT_EQ(router.Dispatch({.method = "HEAD", .path = "/echo"}).status, 200);
  EXPECT_EQ(router.Dispatch({.method = "HEAD", .path = "/nothing"}).status, 404);
}

TEST(HttpRouter, PostRouteAnswersOnlyPost) {
  Router router;
  int calls = 0;
  router.Post("/debug/hook", [&](const Request&) {
    ++calls;
    Response response;
    response.status = 202;
    return response;
  });
  EXPECT_EQ(router.Dispatch({.method = "POST", .path = "/debug/hook"}).status, 202);
  // A GET (a crawler, a prefetch) never triggers it.
  for (const char* method : {"GET", "HEAD", "PUT"}) {
    const Response response = router.Dispatch({.method = method, .path = "/debug/hook"});
    EXPECT_EQ(response.status, 405) << method;
    ASSERT_EQ(response.headers.size(), 1u);
    EXPECT_EQ(response.headers[0], (std::pair<std::string, std::string>("Allow", "POST")));
  }
  EXPECT_EQ(calls, 1);
  EXPECT_THROW(router.Get("/debug/hook", [](const Request&) { return Response{}; }),
               std::invalid_argument);
}

TEST(HttpRouter, PrefixRoutesServeWhatNoExactRouteHasLongestFirst) {
  Router router;
  const auto says = [](std::string what) {
    return [what](const Request& r) {
      Response response;
      response.body = what + " " + std::string(r.path);
      return response;
    };
  };
  router.Get("/api/v1/incidents", says("list"));
  router.GetUnder("/api/v1/incidents/", says("one"));
  router.GetUnder("/api/v1/", says("api"));
  EXPECT_EQ(router.Dispatch({.method = "GET", .path = "/api/v1/incidents"}).body,
            "list /api/v1/incidents");
  EXPECT_EQ(router.Dispatch({.method = "GET", .path = "/api/v1/incidents/12/evidence"}).body,
            "one /api/v1/incidents/12/evidence");
  EXPECT_EQ(router.Dispatch({.method = "GET", .path = "/api/v1/sla"}).body, "api /api/v1/sla");
  EXPECT_EQ(router.Dispatch({.method = "GET", .path = "/api/v2/x"}).status, 404);
  EXPECT_EQ(router.Dispatch({.method = "POST", .path = "/api/v1/incidents/1"}).status, 405);
  EXPECT_THROW(router.GetUnder("/api/v1/", says("again")), std::invalid_argument);
  EXPECT_THROW(router.GetUnder("/no-slash", says("x")), std::invalid_argument);
}

TEST(HttpRouter, RejectsBadRoutes) {
  Router router = EchoRouter();
  EXPECT_THROW(router.Get("/echo", [](const Request&) { return Response{}; }),
               std::invalid_argument);
  EXPECT_THROW(router.Get("metrics", [](const Request&) { return Response{}; }),
               std::invalid_argument);
  EXPECT_THROW(router.Get("/empty", nullptr), std::invalid_argument);
  EXPECT_THROW(router.Post("/echo", [](const Request&) { return Response{}; }),
               std::invalid_argument);
}

}  // namespace
}  // namespace hostmesh::http
