#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "agent/upload/shared_batch.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::agent::upload {

// What a channel reports back. Every event names the connection it belongs to,
// so the state machine can ignore late news from a connection it already gave up.
struct ChannelEvent {
  enum class Kind {
    kOpened,      // Hello answered and the Upload stream started
    kOpenFailed,  // Hello failed (unreachable, refused, timed out)
    kWriteDone,   // the last Write finished; `ok` false: the stream is broken
    kAck,         // an UploadAck arrived
    kClosed,      // the stream ended (analyzer went away, or it was cancelled)
  };

  Kind kind = Kind::kClosed;
  std::uint64_t connection = 0;
  bool ok = true;
  v1::HelloReply hello_reply;
  v1::UploadAck ack;
  std::string error;
  // kOpenFailed: the attempt ran out of its deadline (upload.hello_timeout)
  // rather than being refused: the analyzer is up and busy.
  bool deadline_exceeded = false;

  static ChannelEvent Opened(std::uint64_t connection, v1::HelloReply reply);
  static ChannelEvent OpenFailed(std::uint64_t connection, std::string error,
                                 bool deadline_exceeded = false);
  static ChannelEvent WriteDone(std::uint64_t connection, bool ok);
  static ChannelEvent Ack(std::uint64_t connection, v1::UploadAck ack);
  static ChannelEvent Closed(std::uint64_t connection, std::string error);
};

// Where a channel delivers events. It may be called from the transport's threads;
// it must not block on anything the caller of a channel method may hold.
using ChannelEventSink = std::function<void(ChannelEvent)>;

// The transport under the uploader: one connection at a time, opened, written and
// closed by the state machine. Methods do not wait for the network: they start
// work and report through the sink.
class UploadChannel {
 public:
  virtual ~UploadChannel() = default;

  // Starts connection number `connection`: Hello(hello), then the Upload stream.
  // Ends in exactly one kOpened or kOpenFailed (unless closed first).
  virtual void Open(std::uint64_t connection, const v1::AgentHello& hello) = 0;
  // Writes one batch on an opened connection; one write at a time, each answered
  // by kWriteDone. Shared: the spool may drop its hold while the write is in flight.
  virtual void Write(std::uint64_t connection, SharedBatch batch) = 0;
  // Gives the connection up (cancels it if still running). Idempotent.
  virtual void Close(std::uint64_t connection) = 0;
};

}  // namespace hostmesh::agent::upload
