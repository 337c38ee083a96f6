// A stand-in analyzer for benchmarks: accepts AgentIngest uploads, acknowledges
// every batch at once and keeps nothing but counts, so an agent's overhead is
// measured in its steady state (connected, acked) rather than while buffering.
// Usage: hostmesh-ingest-sink LISTEN_ADDRESS   (prints counts on SIGTERM/SIGINT)
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

#include "hostmesh/v1/ingest.grpc.pb.h"
#include "proto/wire/packed_results.h"

namespace {

namespace v1 = hostmesh::v1;

class Sink final : public v1::AgentIngest::Service {
 public:
  grpc::Status Hello(grpc::ServerContext*, const v1::AgentHello*, v1::HelloReply* reply) override {
    reply->set_schema_version(v1::SCHEMA_VERSION_1);
    reply->set_analyzer_version("ingest-sink");
    // As the analyzer: agents pack their results (counted by their count).
    reply->set_packed_results_format(hostmesh::wire::kPackedResultsFormat);
    return grpc::Status::OK;
  }
  grpc::Status Upload(grpc::ServerContext*,
                      grpc::ServerReaderWriter<v1::UploadAck, v1::UploadBatch>* stream) override {
    v1::UploadBatch batch;
    while (stream->Read(&batch)) {
      batches_ += 1;
      results_ += static_cast<unsigned long>(hostmesh::wire::ResultCount(batch));
      v1::UploadAck ack;
      ack.set_batch_seq(batch.batch_seq());
      ack.set_status(v1::UploadAck::STATUS_ACCEPTED);
      if (!stream->Write(ack)) break;
    }
    return grpc::Status::OK;
  }
  std::atomic<unsigned long> batches_{0};
  std::atomic<unsigned long> results_{0};
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s LISTEN_ADDRESS (for example 198.19.128.1:50051)\n", argv[0]);
    return 2;
  }
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before gRPC starts its threads

  Sink sink;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(argv[1], grpc::InsecureServerCredentials());
  builder.RegisterService(&sink);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);  // as the analyzer (ingest_server.cc)
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "ingest-sink: cannot listen on %s\n", argv[1]);
    return 1;
  }
  int sig = 0;
  sigwait(&stop, &sig);
  server->Shutdown();
  std::printf("ingest-sink: %lu batches, %lu results\n", sink.batches_.load(),
              sink.results_.load());
  return 0;
}
