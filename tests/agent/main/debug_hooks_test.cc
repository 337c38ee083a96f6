// The debug hooks' HTTP side: what a request must name, what it queues, and
// that only POST triggers it.
#include "agent/main/debug_hooks.h"

#include <gtest/gtest.h>

#include "common/http/router.h"

namespace hostmesh::agent::app {
namespace {

TEST(DebugHooks, QueuesAValidQpErrorRequestForTheLoop) {
  DebugHooks hooks({"nic0", "nic1", "nic2"});
  http::Router router;
  hooks.Mount(router);
  EXPECT_EQ(
      router.Dispatch({.method = "POST", .path = "/debug/qp-error", .query = "nic=nic1"}).status,
      202);
  EXPECT_EQ(router.Dispatch({.method = "POST", .path = "/debug/qp-error", .query = "nic=nic2&qp=3"})
                .status,
            202);
  EXPECT_EQ(router.Dispatch({.method = "POST", .path = "/debug/device-error", .query = "nic=nic0"})
                .status,
            202);
  EXPECT_EQ(
      router.Dispatch({.method = "POST", .path = "/debug/device-error", .query = "nic=x"}).status,
      404);
  EXPECT_EQ(hooks.Take(), (std::vector<QpErrorRequest>{
                              {1, 0}, {2, 3}, {0, 0, QpErrorRequest::Kind::kDeviceError}}));
  EXPECT_TRUE(hooks.Take().empty());  // taken once
}

TEST(DebugHooks, AGetNeverTriggersIt) {
  DebugHooks hooks({"nic0"});
  http::Router router;
  hooks.Mount(router);
  EXPECT_EQ(
      router.Dispatch({.method = "GET", .path = "/debug/qp-error", .query = "nic=nic0"}).status,
      405);
  EXPECT_TRUE(hooks.Take().empty());
}

TEST(DebugHooks, BadRequestsSayWhatIsWrongAndQueueNothing) {
  DebugHooks hooks({"nic0"});
  const auto post = [&](std::string_view query) {
    return hooks.OnQpError({.method = "POST", .path = "/debug/qp-error", .query = query});
  };
  http::Response r = post("");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("nic=NAME is required"), std::string::npos) << r.body;
  r = post("nic=eth9");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("no NIC named 'eth9'"), std::string::npos) << r.body;
  for (const char* bad : {"nic=nic0&qp=x", "nic=nic0&qp=", "nic=nic0&qp=-1", "nic=nic0&qp=1z"}) {
    r = post(bad);
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_NE(r.body.find("qp must be a QP index"), std::string::npos) << r.body;
  }
  EXPECT_TRUE(hooks.Take().empty());
}

TEST(DebugHooks, TheQueueIsBounded) {
  DebugHooks hooks({"nic0"});
  int accepted = 0;
  for (int i = 0; i < 100; ++i) {
    if (hooks.OnQpError({.method = "POST", .path = "/debug/qp-error", .query = "nic=nic0"})
            .status == 202) {
      ++accepted;
    }
  }
  EXPECT_EQ(accepted, 64);
  EXPECT_EQ(hooks.Take().size(), 64u);
}

}  // namespace
}  // namespace hostmesh::agent::app
