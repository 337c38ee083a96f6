// Query-string parameters, URL-decoded.
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

}  // namespace
}  // namespace hostmesh::http
