// The HTTP counters' series: all from the start (the analyzer) or each at its
// first event (the agent, near its series budget). A registry, no sockets.
#include "common/http/server_stats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/metrics/exposition.h"
#include "tests/support/series_count.h"

namespace hostmesh::http {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(HttpServerStats, FromTheStartEverySeriesIsExportedAtZero) {
  metrics::Registry registry;
  ServerStats stats(registry);
  EXPECT_EQ(hostmesh::testing::CountSeries(registry.Collect()), 12u);
  const std::string text = metrics::RenderText(registry);
  EXPECT_THAT(text,
              HasSubstr("hostmesh_http_connections_refused_total{reason=\"max_connections\"} 0"));
  EXPECT_THAT(text, HasSubstr("hostmesh_http_auth_failures_total{reason=\"bad_client_cert\"} 0"));
  EXPECT_THAT(text, HasSubstr("hostmesh_http_reload_failures_total{file=\"client_ca\"} 0"));
  EXPECT_THAT(text, HasSubstr("hostmesh_http_timeouts_total{phase=\"response\"} 0"));
}

TEST(HttpServerStats, OnFirstEventASeriesAppearsWhenItCounts) {
  metrics::Registry registry;
  ServerStats stats(registry, ServerStats::Series::kOnFirstEvent);
  EXPECT_EQ(hostmesh::testing::CountSeries(registry.Collect()), 1u) << "the open connections";
  EXPECT_EQ(stats.Total(HttpEvent::kRefusedPerPeer), 0);
  stats.Count(HttpEvent::kRefusedPerPeer);
  stats.Count(HttpEvent::kRefusedPerPeer);
  EXPECT_EQ(stats.Total(HttpEvent::kRefusedPerPeer), 2);
  EXPECT_EQ(hostmesh::testing::CountSeries(registry.Collect()), 2u);
  const std::string text = metrics::RenderText(registry);
  EXPECT_THAT(
      text,
      HasSubstr("hostmesh_http_connections_refused_total{reason=\"max_connections_per_peer\"} 2"));
  EXPECT_THAT(text, Not(HasSubstr("reason=\"max_connections\"}")));
}

TEST(HttpServerStats, EventsMapOntoTheirSeries) {
  EXPECT_EQ(RefusedEvent(Admission::kRefusedMaxConnections), HttpEvent::kRefusedMaxConnections);
  EXPECT_EQ(RefusedEvent(Admission::kRefusedPerPeer), HttpEvent::kRefusedPerPeer);
  EXPECT_EQ(TimeoutEvent(ConnectionPhase::kRequest), HttpEvent::kTimeoutRequest);
  EXPECT_EQ(TimeoutEvent(ConnectionPhase::kResponse), HttpEvent::kTimeoutResponse);
  EXPECT_EQ(TimeoutEvent(ConnectionPhase::kIdle), std::nullopt) << "keep-alive ends normally";
  EXPECT_EQ(AuthEvent(AuthResult::kWrongToken), HttpEvent::kWrongToken);
  EXPECT_EQ(AuthEvent(AuthResult::kNoClientCert), HttpEvent::kNoClientCert);
  EXPECT_EQ(ReloadFailedEvent(WatchedFile::kBearerToken), HttpEvent::kReloadFailedBearerToken);
}

}  // namespace
}  // namespace hostmesh::http
