#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/upload/upload_channel.h"
#include "common/tls/tls_files.h"

namespace grpc {
class ChannelArguments;
class ChannelCredentials;
class CompletionQueue;
}  // namespace grpc

namespace hostmesh::agent::upload {

// analyzer.tls and analyzer.insecure of the agent's config.
struct ChannelSecurity {
  bool insecure = false;  // plaintext: no authentication either way (explicit opt-in)
  // The CA bundle the analyzer's certificate must chain to, and this agent's
  // certificate and key; gRPC re-reads them every tls::kRefreshSeconds.
  tls::TlsFiles files;
  std::string server_name;  // checked in the analyzer's certificate; empty: the address's host
  unsigned refresh_seconds = tls::kRefreshSeconds;
};

struct GrpcChannelOptions {
  std::string address;  // "host:port" of the analyzer's AgentIngest service
  // Set from upload.hello_timeout (UploadConfig, where its default and reason are).
  std::chrono::nanoseconds hello_timeout = std::chrono::seconds{60};
  ChannelSecurity security;
};

// The arguments of the channel a connection attempt opens.
grpc::ChannelArguments UploadChannelArguments(const GrpcChannelOptions& options);

// UploadChannel over gRPC (mutual TLS unless insecure): Hello as a unary call, then the
// bidirectional Upload stream, both on gRPC's asynchronous API with a
// completion queue of our own and one thread that waits on it. That thread
// sleeps until the network or a deadline has news: gRPC's callback API would
// instead start its own pool of threads that poll for work every second
// whether there is any or not. Events are posted from that thread. Open, Write
// and Close must come from one thread at a time (the uploader's).
class GrpcUploadChannel final : public UploadChannel {
 public:
  GrpcUploadChannel(GrpcChannelOptions options, ChannelEventSink sink);
  // Cancels the current connection and waits until gRPC has finished every call
  // it started, so no event reaches the sink afterwards.
  ~GrpcUploadChannel() override;

  GrpcUploadChannel(const GrpcUploadChannel&) = delete;
  GrpcUploadChannel& operator=(const GrpcUploadChannel&) = delete;

  void Open(std::uint64_t connection, const v1::AgentHello& hello) override;
  void Write(std::uint64_t connection, SharedBatch batch) override;
  void Close(std::uint64_t connection) override;

 private:
  class Connection;
  struct Shared;

  // The completion queue's thread: runs each finished operation's handler.
  void Poll();
  // Frees given-up connections whose gRPC calls have all finished.
  void ReapRetired();

  GrpcChannelOptions options_;
  // Made once: a TLS one owns the file watcher's thread, shared by every attempt.
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<grpc::CompletionQueue> queue_;
  std::unique_ptr<Connection> current_;
  std::vector<std::unique_ptr<Connection>> retired_;  // closed, calls still finishing
  std::thread poller_;
};

}  // namespace hostmesh::agent::upload
