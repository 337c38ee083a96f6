#include "analyzer/ingest/listener_recovery.h"

#include <gtest/gtest.h>

#include "analyzer/ingest/grpc_listener_watch.h"

namespace hostmesh::analyzer::ingest {
namespace {

using namespace std::chrono_literals;

TEST(listener_recovery, EachNewFailureIsAnsweredOnceAndRebuildsAreSpacedByTheGap) {
  ListenerRecovery recovery(30s);
  const MonoTime t0{};
  EXPECT_FALSE(recovery.Due(0, t0));        // nothing failed
  EXPECT_TRUE(recovery.Due(1, t0));         // the first failure: at once
  EXPECT_FALSE(recovery.Due(1, t0 + 1h));   // already answered
  EXPECT_FALSE(recovery.Due(2, t0 + 29s));  // failed again within the gap: waits
  EXPECT_TRUE(recovery.Due(2, t0 + 30s));
  EXPECT_FALSE(recovery.Due(2, t0 + 31s));
}

TEST(listener_recovery, ARebuildThatDidNotListenIsDueAgainAfterTheGap) {
  ListenerRecovery recovery(30s);
  const MonoTime t0{};
  ASSERT_TRUE(recovery.Due(1, t0));
  recovery.RebuildFailed();
  EXPECT_FALSE(recovery.Due(1, t0 + 10s));
  EXPECT_TRUE(recovery.Due(1, t0 + 30s));
}

TEST(listener_recovery, OnlyAFailedAcceptSaysTheListenerFailed) {
  EXPECT_TRUE(SaysListenerFailed("Failed accept4: Too many open files"));
  EXPECT_TRUE(SaysListenerFailed("Closing acceptor. Failed accept4: Bad file descriptor"));
  EXPECT_FALSE(SaysListenerFailed("File descriptor limit reached. Retrying."));
  EXPECT_FALSE(SaysListenerFailed("Handshake failed with fatal error SSL_ERROR_SSL"));
}

}  // namespace
}  // namespace hostmesh::analyzer::ingest
