#pragma once

// The ingest half of an analyzer, assembled as hostmesh-analyzer does: store,
// group committer, handler and gRPC server. Destroying it is an analyzer
// going away; another one on the same data dir is its restart.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/ingest/ingest_handler.h"
#include "analyzer/ingest/ingest_server.h"
#include "analyzer/ingest/ingest_sink.h"
#include "analyzer/store/group_committer.h"
#include "analyzer/store/store.h"
#include "common/metrics/registry.h"

namespace hostmesh::analyzer::testing {

// Polls `condition` in real time until it holds or `timeout` passes.
template <typename Condition>
bool Eventually(Condition condition, std::chrono::milliseconds timeout = std::chrono::seconds{20}) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    // A polling interval, not a wait for an outcome.
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  }
  return true;
}

class RecordingSink final : public ingest::IngestSink {
 public:
  void OnBatch(const v1::UploadBatch& batch, const v1::AgentHello& hello) override {
    std::lock_guard lock(mu_);
    seqs_.push_back(batch.batch_seq());
    hellos_.push_back(hello.agent_id() + "/" + std::to_string(hello.boot_id()));
    results_ += static_cast<std::uint64_t>(batch.results_size());
  }
  std::vector<std::uint64_t> seqs() const {
    std::lock_guard lock(mu_);
    return seqs_;
  }
  std::uint64_t results() const {
    std::lock_guard lock(mu_);
    return results_;
  }
  // "agent/boot" of the Hello each batch came with.
  std::vector<std::string> hellos() const {
    std::lock_guard lock(mu_);
    return hellos_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::uint64_t> seqs_;
  std::vector<std::string> hellos_;
  std::uint64_t results_ = 0;
};

class AnalyzerUnderTest {
 public:
  // `address` "127.0.0.1:0" or a fixed port; ok() tells whether it started.
  // Plaintext unless `security` says otherwise: these tests are about ingest,
  // tls_ingest_test.cc about its perimeter.
  AnalyzerUnderTest(const Clock& clock, const std::filesystem::path& data_dir,
                    const std::string& address, ingest::IngestOptions options = {},
                    ingest::ServerSecurity security = ingest::ServerSecurity::Plaintext())
      : stats_(registry_) {
    std::string error;
    store::StoreOptions store_options;
    store_options.data_dir = data_dir;
    store_ = store::Store::Open(clock, store_options, error);
    if (!store_) {
      ADD_FAILURE() << error;
      return;
    }
    committer_ = std::make_unique<store::GroupCommitter>(clock, *store_);
    handler_ = std::make_unique<ingest::IngestHandler>(clock, *store_, *committer_, stats_, &sink_,
                                                       std::move(options));
    server_ = ingest::IngestServer::Start(*handler_, address, security, error);
    if (!server_) ADD_FAILURE() << error;
  }
  ~AnalyzerUnderTest() { Kill(); }

  bool ok() const { return server_ != nullptr; }
  int port() const { return server_->port(); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port()); }

  // Streams cancelled at once; commits already handed to the store finish.
  void Kill() {
    if (server_) server_->Shutdown();
    if (committer_) committer_->Stop();
    server_.reset();
    handler_.reset();
    committer_.reset();
    store_.reset();
  }

  store::Store& store() { return *store_; }
  ingest::IngestServer& server() { return *server_; }
  ingest::IngestStats& stats() { return stats_; }
  RecordingSink& sink() { return sink_; }

 private:
  metrics::Registry registry_;
  ingest::IngestStats stats_;
  RecordingSink sink_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<store::GroupCommitter> committer_;
  std::unique_ptr<ingest::IngestHandler> handler_;
  std::unique_ptr<ingest::IngestServer> server_;
};

}  // namespace hostmesh::analyzer::testing
