// The wire schema survives serialization and a real gRPC stream unchanged.
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "hostmesh/v1/ingest.grpc.pb.h"

namespace {

using google::protobuf::util::MessageDifferencer;
namespace v1 = hostmesh::v1;

v1::AgentHello SampleHello() {
  v1::AgentHello hello;
  hello.set_schema_version(v1::SCHEMA_VERSION_1);
  hello.set_agent_id("h003");
  hello.set_boot_id(0xfeedfacecafebeefULL);
  hello.set_host("h003");
  hello.set_agent_version("0.1.0");
  hello.set_start_time_ns(1'790'000'000'000'000'000LL);
  for (uint32_t rail = 0; rail < 2; ++rail) {
    v1::Nic* nic = hello.add_nics();
    nic->set_id(rail);
    nic->set_name("nic" + std::to_string(rail));
    nic->set_rail(rail);
    nic->set_ip("198.18.0." + std::to_string(2 * rail + 1));
    nic->set_netdev("nic" + std::to_string(rail));
    nic->set_rdma_device("mlx5_" + std::to_string(rail));
    nic->set_rdma_port(1);
    nic->set_gid_index(3);
    nic->set_gid("::ffff:198.18.0.1");
    nic->set_transport(v1::TRANSPORT_VERBS);
    nic->set_timestamp_source(v1::TIMESTAMP_SOURCE_HARDWARE);
  }
  hello.mutable_capabilities()->set_best_timestamp_source(v1::TIMESTAMP_SOURCE_HARDWARE);
  hello.mutable_capabilities()->set_hardware_timestamps(true);
  hello.mutable_capabilities()->add_transports(v1::TRANSPORT_VERBS);
  return hello;
}

v1::UploadBatch SampleBatch(uint64_t seq) {
  v1::UploadBatch batch;
  batch.set_schema_version(v1::SCHEMA_VERSION_1);
  batch.set_agent_id("h003");
  batch.set_boot_id(0xfeedfacecafebeefULL);
  batch.set_batch_seq(seq);
  batch.set_created_ns(1'790'000'000'500'000'000LL);
  v1::ProbeResult* r = batch.add_results();
  r->set_src_nic(0);
  r->set_dst_nic(1);
  r->set_src_port(49152);
  r->set_dst_port(4791);
  r->set_sequence(42);
  r->set_send_time_ns(1'790'000'000'100'000'000LL);
  r->set_app_send_ns(1'790'000'000'100'000'100LL);
  r->set_nic_send_ns(1'790'000'000'100'002'000LL);
  r->set_nic_recv_ns(1'790'000'000'100'009'500LL);
  r->set_app_recv_ns(1'790'000'000'100'012'000LL);
  r->set_send_timestamp_source(v1::TIMESTAMP_SOURCE_KERNEL);
  r->set_recv_timestamp_source(v1::TIMESTAMP_SOURCE_KERNEL);
  r->set_payload_bytes(50);
  v1::ProbeResult* lost = batch.add_results();
  lost->set_src_nic(1);
  lost->set_dst_nic(0);
  lost->set_sequence(7);
  lost->set_timeout(true);
  v1::PathReport* path = batch.add_paths();
  path->set_src_ip("198.18.0.1");
  path->set_dst_ip("198.18.0.3");
  path->set_src_port(49152);
  path->set_dst_port(4791);
  path->set_protocol(17);
  path->set_reached_destination(true);
  for (uint32_t ttl = 1; ttl <= 3; ++ttl) {
    v1::Hop* hop = path->add_hops();
    hop->set_ttl(ttl);
    if (ttl != 2) hop->set_address("198.19.0." + std::to_string(ttl));  // ttl 2 silent
  }
  return batch;
}

TEST(IngestSchema, BatchRoundTripsThroughBytes) {
  const v1::UploadBatch original = SampleBatch(9);
  std::string bytes;
  ASSERT_TRUE(original.SerializeToString(&bytes));
  v1::UploadBatch parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_TRUE(MessageDifferencer::Equals(original, parsed));
  EXPECT_EQ(parsed.results(0).nic_recv_ns() - parsed.results(0).nic_send_ns(), 7'500);
  EXPECT_TRUE(parsed.results(1).timeout());
  EXPECT_TRUE(parsed.paths(0).hops(1).address().empty());
}

TEST(IngestSchema, HelloRoundTripsThroughBytes) {
  const v1::AgentHello original = SampleHello();
  v1::AgentHello parsed;
  ASSERT_TRUE(parsed.ParseFromString(original.SerializeAsString()));
  EXPECT_TRUE(MessageDifferencer::Equals(original, parsed));
  EXPECT_EQ(parsed.nics(1).rail(), 1u);
}

TEST(IngestSchema, TruncatedBytesDoNotParse) {
  const std::string bytes = SampleBatch(1).SerializeAsString();
  v1::UploadBatch parsed;
  EXPECT_FALSE(parsed.ParseFromString(bytes.substr(0, bytes.size() - 3)));
}

// A minimal in-test analyzer: acknowledges each batch, flags a resend as duplicate.
class EchoIngest final : public v1::AgentIngest::Service {
 public:
  grpc::Status Hello(grpc::ServerContext*, const v1::AgentHello* req,
                     v1::HelloReply* reply) override {
    reply->set_schema_version(req->schema_version());
    reply->set_analyzer_version("test");
    return grpc::Status::OK;
  }
  grpc::Status Upload(grpc::ServerContext*,
                      grpc::ServerReaderWriter<v1::UploadAck, v1::UploadBatch>* stream) override {
    v1::UploadBatch batch;
    uint64_t highest = 0;
    while (stream->Read(&batch)) {
      v1::UploadAck ack;
      ack.set_batch_seq(batch.batch_seq());
      ack.set_status(batch.batch_seq() <= highest ? v1::UploadAck::STATUS_DUPLICATE
                                                  : v1::UploadAck::STATUS_ACCEPTED);
      highest = std::max(highest, batch.batch_seq());
      results_ += batch.results_size();
      stream->Write(ack);
    }
    return grpc::Status::OK;
  }
  int results_ = 0;
};

TEST(IngestSchema, StreamsBatchesOverRealGrpc) {
  EchoIngest service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);

  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  auto stub = v1::AgentIngest::NewStub(channel);

  grpc::ClientContext hello_ctx;
  v1::HelloReply reply;
  ASSERT_TRUE(stub->Hello(&hello_ctx, SampleHello(), &reply).ok());
  EXPECT_EQ(reply.schema_version(), v1::SCHEMA_VERSION_1);

  grpc::ClientContext ctx;
  auto stream = stub->Upload(&ctx);
  const uint64_t seqs[] = {1, 2, 2};  // the last one is a resend
  const v1::UploadAck::Status want[] = {v1::UploadAck::STATUS_ACCEPTED,
                                        v1::UploadAck::STATUS_ACCEPTED,
                                        v1::UploadAck::STATUS_DUPLICATE};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(stream->Write(SampleBatch(seqs[i])));
    v1::UploadAck ack;
    ASSERT_TRUE(stream->Read(&ack));
    EXPECT_EQ(ack.batch_seq(), seqs[i]);
    EXPECT_EQ(ack.status(), want[i]);
  }
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(service.results_, 6);
  server->Shutdown();
}

}  // namespace
