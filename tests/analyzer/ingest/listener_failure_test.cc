// gRPC 1.51 drops a listener whose accept fails (grpc_listener_watch.h): the
// process's open-files limit is filled while connections arrive, and a new
// agent is then not answered until the ingest server is rebuilt. Real gRPC on
// 127.0.0.1; waits poll a condition against a deadline.
#include <gtest/gtest.h>

#include "analyzer/ingest/grpc_listener_watch.h"
#include "tests/analyzer/ingest/analyzer_under_test.h"
#include "tests/analyzer/ingest/new_agent_hello.h"
#include "tests/analyzer/ingest/open_files_full.h"
#include "tests/analyzer/store/temp_dir.h"

namespace hostmesh::analyzer::ingest {
namespace {

using analyzer::testing::AnalyzerUnderTest;
using analyzer::testing::Eventually;
using analyzer::testing::HelloAnswered;
using analyzer::testing::OpenFilesFull;
using analyzer::testing::TempDir;
using namespace std::chrono_literals;

TEST(ingest_listener, AListenerDroppedAtTheOpenFilesLimitIsCountedAndRelistenServesAgentsAgain) {
  WatchGrpcLog();
  TempDir dir;
  SystemClock clock;
  AnalyzerUnderTest analyzer(clock, dir.path() / "db", "127.0.0.1:0");
  ASSERT_TRUE(analyzer.ok());
  ASSERT_TRUE(HelloAnswered(analyzer.address(), 10s));
  const std::uint64_t before = GrpcListenerFailures();
  {
    OpenFilesFull full(analyzer.port(), 16);
    ASSERT_TRUE(full.ok()) << full.error();
    ASSERT_TRUE(Eventually([&] { return GrpcListenerFailures() > before; }, 10s))
        << "gRPC never logged a failed accept";
  }
  // The descriptors are free again, and gRPC still does not accept.
  EXPECT_FALSE(HelloAnswered(analyzer.address(), 2s));

  std::string error;
  ASSERT_TRUE(analyzer.server().Relisten(0ns, error)) << error;
  EXPECT_TRUE(HelloAnswered(analyzer.address(), 10s));
}

}  // namespace
}  // namespace hostmesh::analyzer::ingest
