// Request targets: the path handlers see, and query-string parameters, URL-decoded.
#include "common/http/query.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace hostmesh::http {
namespace {

TEST(HttpQuery, FindsDecodedParameters) {
  const std::string_view query = "window=20s&nic=nic%200&flag&q=a+b%2Bc&window=40s";
  EXPECT_EQ(QueryParam(query, "window"), "20s");  // the first one wins
  EXPECT_EQ(QueryParam(query, "nic"), "nic 0");
  EXPECT_EQ(QueryParam(query, "flag"), "");
  EXPECT_EQ(QueryParam(query, "q"), "a b+c");
  EXPECT_EQ(QueryParam(query, "missing"), std::nullopt);
  EXPECT_EQ(QueryParam("", "window"), std::nullopt);
  EXPECT_EQ(QueryParam("a%3Db=1", "a=b"), "1");
}

TEST(HttpQuery, MalformedEscapesAreRejected) {
  EXPECT_EQ(UrlDecode("%41%62"), "Ab");
  EXPECT_EQ(UrlDecode("%"), std::nullopt);
  EXPECT_EQ(UrlDecode("%4"), std::nullopt);
  EXPECT_EQ(UrlDecode("%zz"), std::nullopt);
  EXPECT_EQ(QueryParam("nic=%4", "nic"), std::nullopt);
}

TEST(HttpQuery, RequestPathIsDecodedAndNormalized) {
  EXPECT_EQ(RequestPath("/metrics"), "/metrics");
  EXPECT_EQ(RequestPath("/x/../query?nic=nic%200"), "/query");
  EXPECT_EQ(RequestPath("/a/./b/../../c"), "/c");
  EXPECT_EQ(RequestPath("/../../etc"), "/etc") << "never above the root";
  EXPECT_EQ(RequestPath("/a/.."), "/");
  EXPECT_EQ(RequestPath("/metrics/"), "/metrics/") << "a trailing slash is another path";
  EXPECT_EQ(RequestPath("/api%2Fv1/%7Euser+x"), "/api/v1/~user+x") << "'+' is no space in a path";
  EXPECT_EQ(RequestPath("/%2e%2e/x"), "/x");
  EXPECT_EQ(RequestPath("/a%"), std::nullopt);
  EXPECT_EQ(RequestPath("/a%0"), std::nullopt);
  EXPECT_EQ(RequestPath("/a%00b"), std::nullopt) << "no NUL in a path";
  EXPECT_EQ(RequestPath("http://elsewhere/metrics"), "") << "absolute form: no route matches";
  EXPECT_EQ(RequestPath("*"), "");
}

TEST(HttpQuery, RawQueryIsEverythingAfterTheFirstQuestionMark) {
  EXPECT_EQ(RawQuery("/query?nic=nic%200&w=20s"), "nic=nic%200&w=20s");
  EXPECT_EQ(RawQuery("/query?a=?b"), "a=?b");
  EXPECT_EQ(RawQuery("/query"), "");
  EXPECT_EQ(RawQuery("/query?"), "");
}

}  // namespace
}  // namespace hostmesh::http
