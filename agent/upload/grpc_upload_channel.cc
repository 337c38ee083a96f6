#include "agent/upload/grpc_upload_channel.h"

#include <grpc/grpc.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <grpcpp/support/async_stream.h>
#include <grpcpp/support/async_unary_call.h>
#include <grpcpp/support/channel_arguments.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string_view>
#include <utility>

#include "common/base/thread_name.h"
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

std::shared_ptr<grpc::ChannelCredentials> Credentials(const ChannelSecurity& security) {
  if (security.insecure) return grpc::InsecureChannelCredentials();
  // gRPC's file watcher: a rotated certificate or CA bundle is used for the
  // next connection within kRefreshSeconds, no restart.
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      security.files.key.string(), security.files.cert.string(), security.files.ca.string(),
      security.refresh_seconds);
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(provider);
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  return grpc::experimental::TlsCredentials(options);
}

}  // namespace

// What outlives the channel object: the sink and a count of running gRPC
// operations, which the destructor waits to reach zero.
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

grpc::ChannelArguments UploadChannelArguments(const GrpcChannelOptions& options) {
  grpc::ChannelArguments args;
  // A private subchannel per attempt: gRPC's shared subchannels keep their own
  // reconnect backoff (up to 120 s), and ours must decide when to retry.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // No bandwidth-delay probing: a batch a second does not need a wider
  // window, and each probe is a ping and a timer wake-up on both ends.
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  // The attempt's TCP connect and TLS handshake may take the whole Hello
  // deadline: gRPC's own connect deadline (20 s by default) would otherwise
  // cut it short, and after an analyzer restart 3,000 agents' handshakes
  // queued past it, were abandoned and started again, and none got back
  // (bench/reconnect_stampede).
  args.SetInt(
      GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
      static_cast<int>(std::clamp<std::int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(options.hello_timeout).count(), 100,
          std::numeric_limits<int>::max())));
  if (!options.security.server_name.empty()) {
    args.SetSslTargetNameOverride(options.security.server_name);
  }
  return args;
}

// One connection attempt: its own grpc::Channel, the Hello call and the Upload
// stream. Every operation it starts completes on the channel's queue, where
// the poller thread runs its handler; the tag is the address of an Op member.
// Destroyed only on the uploader's thread, once no operation of it is running.
//
// Threads: Start, Write and Close run on the uploader's thread, the handlers
// on the poller's. mu_ orders what both touch: the stream's state, and Write
// against Finish (gRPC wants no two calls on one stream object at once, except
// a Read beside a Write).
class GrpcUploadChannel::Connection {
 public:
  Connection(std::uint64_t id, std::shared_ptr<Shared> shared, grpc::CompletionQueue& queue)
      : id_(id), shared_(std::move(shared)), queue_(queue) {}

  std::uint64_t id() const { return id_; }
  // True once every operation it started has finished: it may be destroyed.
  bool finished() const { return running_.load(std::memory_order_acquire) == 0; }

  // An operation's completion: the queue hands back its address.
  struct Op {
    Connection* connection = nullptr;
    void (Connection::*handler)(bool ok) = nullptr;
    void Run(bool ok) { (connection->*handler)(ok); }
  };

  void Start(const GrpcChannelOptions& options,
             const std::shared_ptr<grpc::ChannelCredentials>& credentials,
             const v1::AgentHello& hello) {
    channel_ =
        grpc::CreateCustomChannel(options.address, credentials, UploadChannelArguments(options));
    stub_ = v1::AgentIngest::NewStub(channel_);
    hello_ = hello;
    hello_context_.set_deadline(std::chrono::system_clock::now() + options.hello_timeout);
    Began();
    hello_call_ = stub_->AsyncHello(&hello_context_, hello_, &queue_);
    hello_call_->Finish(&reply_, &hello_status_, &hello_done_);
  }

  void Write(SharedBatch batch) {
    bool streaming = false;
    {
      std::lock_guard lock(mu_);
      streaming = streaming_ && !closed_ && !finishing_;
      if (streaming) {
        // Held until the write completes: gRPC serializes it in Write, but
        // the batch must not go while the operation runs.
        write_buffer_ = std::move(batch);
        Began();
        stream_->Write(*write_buffer_, &write_done_);
      }
    }
    if (!streaming) shared_->sink(ChannelEvent::WriteDone(id_, false));
  }

  void Close() {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    // Cancelled operations complete at once with ok false or a CANCELLED status.
    if (stream_) {
      stream_context_.TryCancel();
    } else {
      hello_context_.TryCancel();  // the Hello handler sees closed_ and stops there
    }
  }

 private:
  void OnHelloDone(bool /*ok: always true for a unary Finish*/) {
    if (!hello_status_.ok()) {
      shared_->sink(ChannelEvent::OpenFailed(
          id_, Describe("Hello", hello_status_),
          hello_status_.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED));
    } else {
      std::lock_guard lock(mu_);
      if (!closed_) {
        Began();  // before the Hello operation ends, so running_ never dips to 0
        stream_ = stub_->AsyncUpload(&stream_context_, &queue_, &started_);
      }
    }
    Ended();
  }

  void OnStarted(bool ok) {
    if (!ok) {
      FinishStream();  // its status says why
    } else {
      {
        std::lock_guard lock(mu_);
        streaming_ = true;
      }
      opened_ = true;
      // Opened goes out before any event of the stream can.
      shared_->sink(ChannelEvent::Opened(id_, reply_));
      Began();
      stream_->Read(&ack_, &read_done_);
    }
    Ended();
  }

  void OnRead(bool ok) {
    if (ok) {
      shared_->sink(ChannelEvent::Ack(id_, ack_));
      Began();
      stream_->Read(&ack_, &read_done_);
    } else {
      FinishStream();  // the analyzer ended the stream, or Close cancelled it
    }
    Ended();
  }

  void OnWritten(bool ok) {
    {
      std::lock_guard lock(mu_);
      write_buffer_.reset();
    }
    shared_->sink(ChannelEvent::WriteDone(id_, ok));
    Ended();
  }

  void OnFinished(bool /*ok: always true for Finish*/) {
    std::string why = final_status_.ok() ? "the analyzer ended the upload stream"
                                         : Describe("upload stream", final_status_);
    shared_->sink(opened_ ? ChannelEvent::Closed(id_, std::move(why))
                          : ChannelEvent::OpenFailed(id_, std::move(why)));
    Ended();
  }

  // Asks for the stream's final status; once, after its last read (or a failed start).
  void FinishStream() {
    std::lock_guard lock(mu_);
    finishing_ = true;
    Began();
    stream_->Finish(&final_status_, &finished_);
  }

  void Began() {
    running_.fetch_add(1, std::memory_order_relaxed);
    shared_->Begin();
  }
  // The last thing a handler does: afterwards *this may be gone.
  void Ended() {
    const std::shared_ptr<Shared> shared = shared_;
    running_.fetch_sub(1, std::memory_order_release);
    shared->End();
  }

  const std::uint64_t id_;
  const std::shared_ptr<Shared> shared_;
  grpc::CompletionQueue& queue_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::AgentIngest::Stub> stub_;
  std::atomic<int> running_{0};

  grpc::ClientContext hello_context_;
  v1::AgentHello hello_;
  v1::HelloReply reply_;
  grpc::Status hello_status_;
  grpc::ClientContext stream_context_;
  v1::UploadAck ack_;
  grpc::Status final_status_;
  bool opened_ = false;  // poller thread only
  // After the contexts: call objects go before the contexts that own their calls.
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::HelloReply>> hello_call_;

  Op hello_done_{this, &Connection::OnHelloDone};
  Op started_{this, &Connection::OnStarted};
  Op read_done_{this, &Connection::OnRead};
  Op write_done_{this, &Connection::OnWritten};
  Op finished_{this, &Connection::OnFinished};

  std::mutex mu_;
  std::unique_ptr<grpc::ClientAsyncReaderWriter<v1::UploadBatch, v1::UploadAck>> stream_;
  SharedBatch write_buffer_;
  bool closed_ = false;
  bool streaming_ = false;
  bool finishing_ = false;
};

GrpcUploadChannel::GrpcUploadChannel(GrpcChannelOptions options, ChannelEventSink sink)
    : options_(std::move(options)), shared_(std::make_shared<Shared>(std::move(sink))) {
  // Keeps the gRPC library up between attempts: otherwise the last channel of a
  // failed attempt shuts it down and every retry pays for a restart.
  grpc_init();
  credentials_ = Credentials(options_.security);
  queue_ = std::make_unique<grpc::CompletionQueue>();
  poller_ = std::thread([this] {
    SetThreadName("hm-grpc-poll");
    Poll();
  });
}

GrpcUploadChannel::~GrpcUploadChannel() {
  if (current_) current_->Close();
  shared_->WaitIdle();
  current_.reset();
  retired_.clear();
  queue_->Shutdown();
  poller_.join();
  queue_.reset();
  credentials_.reset();
  grpc_shutdown();
}

void GrpcUploadChannel::Poll() {
  void* tag = nullptr;
  bool ok = false;
  while (queue_->Next(&tag, &ok)) static_cast<Connection::Op*>(tag)->Run(ok);
}

void GrpcUploadChannel::Open(std::uint64_t connection, const v1::AgentHello& hello) {
  if (current_) {
    current_->Close();
    retired_.push_back(std::move(current_));
  }
  current_ = std::make_unique<Connection>(connection, shared_, *queue_);
  current_->Start(options_, credentials_, hello);
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
