#pragma once

// An UploadChannel that does nothing by itself: it records what the engine asked
// for, and the test answers (accepts, acks, rejects, fails) on command.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "agent/upload/upload_channel.h"

namespace hostmesh::agent::upload::testing {

class FakeUploadChannel final : public UploadChannel {
 public:
  struct Written {
    std::uint64_t connection = 0;
    SharedBatch batch;
  };

  // Where commands deliver their events (the engine's Handle).
  void set_sink(ChannelEventSink sink) { sink_ = std::move(sink); }

  void Open(std::uint64_t connection, const v1::AgentHello& hello) override {
    opens.push_back(connection);
    calls.push_back("open " + std::to_string(connection));
    last_hello = hello;
    current = connection;
  }
  void Write(std::uint64_t connection, SharedBatch batch) override {
    calls.push_back("write " + std::to_string(connection) + ":" +
                    std::to_string(batch->batch_seq()));
    writes.push_back({connection, std::move(batch)});
    write_pending = true;
  }
  void Close(std::uint64_t connection) override {
    closes.push_back(connection);
    calls.push_back("close " + std::to_string(connection));
  }

  // Commands: each delivers one event for the current connection.
  // `reads_packed`: the analyzer reads packed results (false: one that predates them).
  void AcceptOpen(std::uint64_t last_durable_seq = 0, bool reads_packed = true) {
    v1::HelloReply reply;
    reply.set_schema_version(v1::SCHEMA_VERSION_1);
    reply.set_last_durable_batch_seq(last_durable_seq);
    reply.set_packed_results_format(reads_packed ? 1 : 0);
    sink_(ChannelEvent::Opened(current, reply));
  }
  void FailOpen(std::string error = "connection refused", bool deadline_exceeded = false) {
    sink_(ChannelEvent::OpenFailed(current, std::move(error), deadline_exceeded));
  }
  void CompleteWrite(bool ok = true) {
    write_pending = false;
    sink_(ChannelEvent::WriteDone(current, ok));
  }
  void Ack(std::uint64_t seq, v1::UploadAck::Status status = v1::UploadAck::STATUS_ACCEPTED) {
    v1::UploadAck ack;
    ack.set_batch_seq(seq);
    ack.set_status(status);
    if (status == v1::UploadAck::STATUS_REJECTED) ack.set_error("bad batch");
    sink_(ChannelEvent::Ack(current, ack));
  }
  void Disconnect(std::string error = "analyzer went away") {
    sink_(ChannelEvent::Closed(current, std::move(error)));
  }

  // The batch_seq of every write, in order (optionally of one connection only).
  std::vector<std::uint64_t> WrittenSeqs(std::uint64_t connection = 0) const {
    std::vector<std::uint64_t> seqs;
    for (const Written& w : writes) {
      if (connection == 0 || w.connection == connection) seqs.push_back(w.batch->batch_seq());
    }
    return seqs;
  }

  std::vector<std::uint64_t> opens;
  std::vector<std::uint64_t> closes;
  std::vector<Written> writes;
  std::vector<std::string> calls;  // every command, in order: "open 1", "write 1:5", "close 1"
  v1::AgentHello last_hello;
  std::uint64_t current = 0;
  bool write_pending = false;

 private:
  ChannelEventSink sink_;
};

}  // namespace hostmesh::agent::upload::testing
