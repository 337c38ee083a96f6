#include "agent/upload/grpc_upload_channel.h"

#include <grpc/grpc.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/client_callback.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string_view>
#include <utility>

#include "hostmesh/v1/ingest.grpc.pb.h"

namespace hostmesh::agent::upload {

namespace {

std::string_view CodeName(grpc::StatusCode code) {
  static constexpr std::string_view kNames[] = {"OK",
                                                "CANCELLED",
                                                "UNKNOWN",
                                                "INVALID_ARGUMENT",
                                                "DEADLINE_EXCEEDED",
                                                "NOT_FOUND",
                                                "ALREADY_EXISTS",
                                                "PERMISSION_DENIED",
                                                "RESOURCE_EXHAUSTED",
                                                "FAILED_PRECONDITION",
                                                "ABORTED",
                                                "OUT_OF_RANGE",
                                                "UNIMPLEMENTED",
                                                "INTERNAL",
                                                "UNAVAILABLE",
                                                "DATA_LOSS",
                                                "UNAUTHENTICATED"};
  const auto index = static_cast<std::size_t>(code);
  return index < std::size(kNames) ? kNames[index] : "UNKNOWN_CODE";
}

std::string Describe(std::string_view what, const grpc::Status& status) {
  std::string text(what);
  text += ": ";
  text += CodeName(status.error_code());
  if (!status.error_message().empty()) {
    text += ": ";
    text += status.error_message();
  }
  return text;
}

}  // namespace

// What outlives the channel object: the sink and a count of running gRPC calls,
// which the destructor waits to reach zero.
struct GrpcUploadChannel::Shared {
  explicit Shared(ChannelEventSink event_sink) : sink(std::move(event_sink)) {}

  void Begin() {
    std::lock_guard lock(mu);
    ++running;
  }
  void End() {
    std::lock_guard lock(mu);
    if (--running == 0) idle.notify_all();
  }
  void WaitIdle() {
    std::unique_lock lock(mu);
    idle.wait(lock, [this] { return running == 0; });
  }

  ChannelEventSink sink;
  std::mutex mu;
  std::condition_variable idle;
  int running = 0;
};

// One connection attempt: its own grpc::Channel, the Hello call and the Upload
// stream's reactor. Owned by GrpcUploadChannel and destroyed only on the
// uploader's thread once no gRPC call of it is running: destroying a
// grpc::Channel on one of gRPC's own callback threads can make gRPC join that
// very thread (its shared callback queue is torn down with the last channel).
//
// Locking: reactions (OnReadDone, OnWriteDone, OnDone) take no lock of ours, since
// gRPC may run them inline inside StartWrite, StartCall or TryCancel; only the
// Hello callback takes mu_, and nothing calls into the Hello call under mu_.
class GrpcUploadChannel::Connection final
    : public grpc::ClientBidiReactor<v1::UploadBatch, v1::UploadAck> {
 public:
  Connection(std::uint64_t id, std::shared_ptr<Shared> shared)
      : id_(id), shared_(std::move(shared)) {}

  std::uint64_t id() const { return id_; }
  // True once every call it started has finished: it may be destroyed.
  bool finished() const { return running_.load(std::memory_order_acquire) == 0; }

  void Start(const GrpcChannelOptions& options, const v1::AgentHello& hello) {
    grpc::ChannelArguments args;
    // A private subchannel per attempt: gRPC's shared subchannels keep their own
    // reconnect backoff (up to 120 s), and ours must decide when to retry.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    channel_ = grpc::CreateCustomChannel(options.address, grpc::InsecureChannelCredentials(), args);
    stub_ = v1::AgentIngest::NewStub(channel_);
    hello_ = hello;
    hello_context_.set_deadline(std::chrono::system_clock::now() + options.hello_timeout);
    CallStarted();
    stub_->async()->Hello(&hello_context_, &hello_, &reply_,
                          [this](grpc::Status status) { OnHelloDone(status); });
  }

  void Write(SharedBatch batch) {
    bool streaming = false;
    {
      std::lock_guard lock(mu_);
      streaming = streaming_ && !closed_;
    }
    if (!streaming) {
      shared_->sink(ChannelEvent::WriteDone(id_, false));
      return;
    }
    // Safe without the lock: only this thread closes, and our hold keeps the
    // stream alive until it does.
    write_buffer_ = std::move(batch);
    StartWrite(write_buffer_.get());
  }

  void Close() {
    bool release_stream = false;
    {
      std::lock_guard lock(mu_);
      if (closed_) return;
      closed_ = true;
      release_stream = streaming_;
    }
    if (release_stream) {
      stream_context_.TryCancel();
      RemoveHold();  // lets the stream finish: OnDone follows
    } else {
      hello_context_.TryCancel();  // the Hello callback sees closed_ and stops there
    }
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      // The final status comes with OnDone, once Close released our hold.
      shared_->sink(ChannelEvent::Closed(id_, "the analyzer ended the upload stream"));
      return;
    }
    shared_->sink(ChannelEvent::Ack(id_, ack_));
    StartRead(&ack_);
  }

  void OnWriteDone(bool ok) override { shared_->sink(ChannelEvent::WriteDone(id_, ok)); }

  void OnDone(const grpc::Status& status) override {
    shared_->sink(ChannelEvent::Closed(id_, Describe("upload stream", status)));
    CallEnded();
  }

 private:
  void OnHelloDone(const grpc::Status& status) {
    if (!status.ok()) {
      shared_->sink(ChannelEvent::OpenFailed(id_, Describe("Hello", status)));
    } else {
      // Under mu_ so that Close sees either no stream or a fully started one.
      std::lock_guard lock(mu_);
      if (!closed_) {
        streaming_ = true;
        CallStarted();  // before the Hello call ends, so running_ never dips to 0
        stub_->async()->Upload(&stream_context_, this);
        // Opened goes out before any event of the stream can.
        shared_->sink(ChannelEvent::Opened(id_, reply_));
        StartRead(&ack_);
        // Held until Close: gRPC keeps the stream alive, so Write (from the
        // uploader's thread) never races its teardown.
        AddHold();
        StartCall();
      }
    }
    CallEnded();
  }

  void CallStarted() {
    running_.fetch_add(1, std::memory_order_relaxed);
    shared_->Begin();
  }
  // The last thing a final callback does: afterwards *this may be gone.
  void CallEnded() {
    const std::shared_ptr<Shared> shared = shared_;
    running_.fetch_sub(1, std::memory_order_release);
    shared->End();
  }

  const std::uint64_t id_;
  const std::shared_ptr<Shared> shared_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::AgentIngest::Stub> stub_;
  grpc::ClientContext hello_context_;
  v1::AgentHello hello_;
  v1::HelloReply reply_;
  grpc::ClientContext stream_context_;
  v1::UploadAck ack_;
  SharedBatch write_buffer_;  // held until the next write: gRPC reads it until OnWriteDone
  std::atomic<int> running_{0};

  std::mutex mu_;
  bool closed_ = false;
  bool streaming_ = false;
};

GrpcUploadChannel::GrpcUploadChannel(GrpcChannelOptions options, ChannelEventSink sink)
    : options_(std::move(options)), shared_(std::make_shared<Shared>(std::move(sink))) {
  // Keeps the gRPC library up between attempts: otherwise the last channel of a
  // failed attempt shuts it down and every retry pays for a restart.
  grpc_init();
}

GrpcUploadChannel::~GrpcUploadChannel() {
  if (current_) current_->Close();
  shared_->WaitIdle();
  current_.reset();
  retired_.clear();
  grpc_shutdown();
}

void GrpcUploadChannel::Open(std::uint64_t connection, const v1::AgentHello& hello) {
  if (current_) {
    current_->Close();
    retired_.push_back(std::move(current_));
  }
  current_ = std::make_unique<Connection>(connection, shared_);
  current_->Start(options_, hello);
  // After Start, so a new grpc::Channel exists before old ones go: gRPC's shared
  // callback threads are then not torn down and restarted on every attempt.
  ReapRetired();
}

void GrpcUploadChannel::Write(std::uint64_t connection, SharedBatch batch) {
  if (!current_ || current_->id() != connection) {
    shared_->sink(ChannelEvent::WriteDone(connection, false));
    return;
  }
  current_->Write(std::move(batch));
}

void GrpcUploadChannel::Close(std::uint64_t connection) {
  if (current_ && current_->id() == connection) current_->Close();
  ReapRetired();
}

void GrpcUploadChannel::ReapRetired() {
  std::erase_if(retired_, [](const std::unique_ptr<Connection>& c) { return c->finished(); });
}

}  // namespace hostmesh::agent::upload
