#pragma once

// A new agent's Hello over plaintext on a connection of its own (no
// subchannel shared with an earlier channel): whether a listener answers.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <string>

#include "hostmesh/v1/ingest.grpc.pb.h"
#include "tests/analyzer/store/test_batches.h"

namespace hostmesh::analyzer::testing {

inline bool HelloAnswered(const std::string& address, std::chrono::milliseconds deadline) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto stub = v1::AgentIngest::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
  v1::HelloReply reply;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  return stub->Hello(&context, MakeHello("h1", 7), &reply).ok();
}

}  // namespace hostmesh::analyzer::testing
