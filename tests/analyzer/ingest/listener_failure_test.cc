// gRPC 1.51 drops a listener whose accept fails (grpc_listener_watch.h): the
// process's open-files limit is filled while connections arrive, and a new
// agent is then not answered until the ingest server is rebuilt. Real gRPC on
// 127.0.0.1; waits poll a condition against a deadline.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "analyzer/ingest/grpc_listener_watch.h"
#include "hostmesh/v1/ingest.grpc.pb.h"
#include "tests/analyzer/ingest/analyzer_under_test.h"
#include "tests/analyzer/ingest/open_files_full.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"

namespace hostmesh::analyzer::ingest {
namespace {

using analyzer::testing::AnalyzerUnderTest;
using analyzer::testing::Eventually;
using analyzer::testing::MakeHello;
using analyzer::testing::OpenFilesFull;
using analyzer::testing::TempDir;
using namespace std::chrono_literals;

// A new agent's Hello on a connection of its own (no subchannel shared with
// an earlier channel), answered within `deadline`.
bool HelloAnswered(const std::string& address, std::chrono::milliseconds deadline) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto stub = v1::AgentIngest::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
  v1::HelloReply reply;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  return stub->Hello(&context, MakeHello("h1", 7), &reply).ok();
}

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
