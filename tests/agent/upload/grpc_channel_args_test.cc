#include <grpc/grpc.h>
#include <grpcpp/support/channel_arguments.h>
#include <gtest/gtest.h>

#include <optional>
#include <string_view>

#include "agent/upload/grpc_upload_channel.h"

namespace hostmesh::agent::upload {
namespace {

using namespace std::chrono_literals;

std::optional<int> IntArg(const grpc::ChannelArguments& args, std::string_view key) {
  const grpc_channel_args c = args.c_channel_args();
  for (std::size_t i = 0; i < c.num_args; ++i) {
    if (c.args[i].key == key && c.args[i].type == GRPC_ARG_INTEGER) return c.args[i].value.integer;
  }
  return std::nullopt;
}

// gRPC ends a connection attempt after its own connect deadline (20 s unless
// told otherwise), whatever the call's deadline: a handshake queued behind a
// fleet's at the analyzer must get the whole Hello deadline instead.
TEST(grpc_channel_args, AConnectionAttemptMayTakeTheWholeHelloDeadline) {
  GrpcChannelOptions options;
  options.hello_timeout = 60s;
  EXPECT_EQ(IntArg(UploadChannelArguments(options), GRPC_ARG_MIN_RECONNECT_BACKOFF_MS), 60'000);
  options.hello_timeout = 10min;
  EXPECT_EQ(IntArg(UploadChannelArguments(options), GRPC_ARG_MIN_RECONNECT_BACKOFF_MS), 600'000);
  // Each attempt has a subchannel of its own, so the uploader's backoff, not
  // gRPC's shared one, decides when to try again.
  EXPECT_EQ(IntArg(UploadChannelArguments(options), GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL), 1);
}

}  // namespace
}  // namespace hostmesh::agent::upload
