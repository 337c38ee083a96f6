#pragma once

// A real in-process hostmesh.v1.AgentIngest server standing in for the analyzer:
// it deduplicates on (agent, boot, batch_seq) the way the analyzer must, and its
// store outlives any one server, as the analyzer's database outlives a restart.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "common/base/upload_limits.h"
#include "hostmesh/v1/ingest.grpc.pb.h"
#include "proto/wire/packed_results.h"

namespace hostmesh::agent::upload::testing {

class IngestStore {
 public:
  using BatchKey = std::tuple<std::string, std::uint64_t, std::uint64_t>;  // agent, boot, seq
  // agent, boot, src_nic, sequence
  using ResultKey = std::tuple<std::string, std::uint64_t, std::uint32_t, std::uint64_t>;

  // True when the batch is new (and now durable); false for a duplicate.
  // Packed results are read as the analyzer reads them (expanded).
  bool Record(v1::UploadBatch batch) {
    if (batch.has_packed_results()) ++packed_batches_;
    if (wire::ExpandPackedResults(batch, kMaxResultsPerBatch)) ++malformed_batches_;
    std::lock_guard lock(mu_);
    const BatchKey key{batch.agent_id(), batch.boot_id(), batch.batch_seq()};
    if (!batches_.emplace(key, batch.results_size()).second) {
      ++duplicate_batches_;
      return false;
    }
    for (const v1::ProbeResult& result : batch.results()) {
      ++results_[{batch.agent_id(), batch.boot_id(), result.src_nic(), result.sequence()}];
    }
    return true;
  }

  std::uint64_t LastDurable(const std::string& agent, std::uint64_t boot) const {
    std::lock_guard lock(mu_);
    std::uint64_t last = 0;
    for (const auto& [key, results] : batches_) {
      if (std::get<0>(key) == agent && std::get<1>(key) == boot) {
        last = std::max(last, std::get<2>(key));
      }
    }
    return last;
  }

  std::size_t batch_count() const {
    std::lock_guard lock(mu_);
    return batches_.size();
  }
  std::uint64_t duplicate_batches() const {
    std::lock_guard lock(mu_);
    return duplicate_batches_;
  }
  std::uint64_t packed_batches() const { return packed_batches_; }
  std::uint64_t malformed_batches() const { return malformed_batches_; }
  std::map<ResultKey, int> results() const {
    std::lock_guard lock(mu_);
    return results_;
  }

 private:
  mutable std::mutex mu_;
  std::map<BatchKey, int> batches_;
  std::map<ResultKey, int> results_;
  std::uint64_t duplicate_batches_ = 0;
  std::atomic<std::uint64_t> packed_batches_{0};  // received with packed results
  std::atomic<std::uint64_t> malformed_batches_{0};
};

struct IngestBehavior {
  // After this many acks, keep recording but stop acking: a crash between
  // "durable" and "acked", which the agent must survive by resending.
  std::uint64_t ack_limit = UINT64_MAX;
  // False: Hello answers last_durable_batch_seq 0 (an analyzer that lost its
  // index), so the agent resends everything and dedup must catch it.
  bool report_last_durable = true;
  // False: an analyzer that predates packed results (HelloReply says so).
  bool reads_packed = true;
};

class RecordingIngest final : public v1::AgentIngest::Service {
 public:
  RecordingIngest(IngestStore& store, IngestBehavior behavior)
      : store_(store), behavior_(behavior) {}

  grpc::Status Hello(grpc::ServerContext*, const v1::AgentHello* request,
                     v1::HelloReply* reply) override {
    reply->set_schema_version(v1::SCHEMA_VERSION_1);
    reply->set_analyzer_version("test");
    reply->set_packed_results_format(behavior_.reads_packed ? wire::kPackedResultsFormat : 0);
    if (behavior_.report_last_durable) {
      reply->set_last_durable_batch_seq(
          store_.LastDurable(request->agent_id(), request->boot_id()));
    }
    return grpc::Status::OK;
  }

  grpc::Status Upload(grpc::ServerContext*,
                      grpc::ServerReaderWriter<v1::UploadAck, v1::UploadBatch>* stream) override {
    v1::UploadBatch batch;
    while (stream->Read(&batch)) {
      v1::UploadAck ack;
      ack.set_batch_seq(batch.batch_seq());
      ack.set_status(store_.Record(batch) ? v1::UploadAck::STATUS_ACCEPTED
                                          : v1::UploadAck::STATUS_DUPLICATE);
      {
        std::lock_guard lock(mu_);
        if (acks_ >= behavior_.ack_limit) continue;
        ++acks_;
      }
      if (!stream->Write(ack)) break;
    }
    return grpc::Status::OK;
  }

 private:
  IngestStore& store_;
  const IngestBehavior behavior_;
  std::mutex mu_;
  std::uint64_t acks_ = 0;
};

// One server lifetime; Kill() is the analyzer going away mid-stream.
class TestIngestServer {
 public:
  // `address` like "127.0.0.1:0" (any free port) or "127.0.0.1:PORT".
  TestIngestServer(IngestStore& store, const std::string& address, IngestBehavior behavior = {})
      : service_(store, behavior) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
  }
  ~TestIngestServer() { Kill(); }

  bool ok() const { return server_ != nullptr && port_ > 0; }
  int port() const { return port_; }

  // Cancels every open stream at once, as a crashing analyzer would.
  void Kill() {
    if (!server_) return;
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
    server_.reset();
  }

 private:
  RecordingIngest service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace hostmesh::agent::upload::testing
