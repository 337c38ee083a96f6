#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "agent/upload/upload_channel.h"

namespace hostmesh::agent::upload {

// An UploadChannel that only records what it is asked, so the uploader can pass
// the commands to the real channel after releasing the lock Append takes: a slow
// transport call (gRPC start-up, channel creation) then never delays probing.
class DeferredChannel final : public UploadChannel {
 public:
  struct Command {
    enum class Kind { kOpen, kWrite, kClose };
    Kind kind = Kind::kClose;
    std::uint64_t connection = 0;
    v1::AgentHello hello;  // kOpen
    SharedBatch batch;     // kWrite
  };

  void Open(std::uint64_t connection, const v1::AgentHello& hello) override {
    Command command;
    command.kind = Command::Kind::kOpen;
    command.connection = connection;
    command.hello = hello;
    pending_.push_back(std::move(command));
  }
  void Write(std::uint64_t connection, SharedBatch batch) override {
    Command command;
    command.kind = Command::Kind::kWrite;
    command.connection = connection;
    command.batch = std::move(batch);
    pending_.push_back(std::move(command));
  }
  void Close(std::uint64_t connection) override {
    Command command;
    command.kind = Command::Kind::kClose;
    command.connection = connection;
    pending_.push_back(std::move(command));
  }

  // The commands recorded so far, oldest first; the channel forgets them.
  std::vector<Command> Take() { return std::exchange(pending_, {}); }

  // Issues `commands` to `target` in order.
  static void Replay(std::vector<Command>& commands, UploadChannel& target) {
    for (Command& command : commands) {
      switch (command.kind) {
        case Command::Kind::kOpen:
          target.Open(command.connection, command.hello);
          break;
        case Command::Kind::kWrite:
          target.Write(command.connection, std::move(command.batch));
          break;
        case Command::Kind::kClose:
          target.Close(command.connection);
          break;
      }
    }
    commands.clear();
  }

 private:
  std::vector<Command> pending_;
};

}  // namespace hostmesh::agent::upload
