#pragma once

// Fills this process's open-files limit while connections to a local port
// complete: gRPC's accept then finds no descriptor (EMFILE), as in an
// analyzer whose limit a reconnect storm or a flood of connections reached.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace hostmesh::analyzer::testing {

class OpenFilesFull {
 public:
  // Opens `connections` sockets, lowers the soft limit to the highest open
  // descriptor, takes every free one below it, then connects the sockets to
  // 127.0.0.1:`port` (the kernel completes them into the listener's backlog).
  OpenFilesFull(int port, int connections) {
    if (::getrlimit(RLIMIT_NOFILE, &saved_) != 0) {
      error_ = "getrlimit failed";
      return;
    }
    for (int i = 0; i < connections; ++i) {
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        error_ = "socket failed";
        return;
      }
      sockets_.push_back(fd);
    }
    int highest = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
      highest = std::max(highest, std::stoi(entry.path().filename().string()));
    }
    rlimit lowered = saved_;
    lowered.rlim_cur = static_cast<rlim_t>(highest) + 1;
    if (::setrlimit(RLIMIT_NOFILE, &lowered) != 0) {
      error_ = "setrlimit failed";
      return;
    }
    lowered_ = true;
    for (int fd; (fd = ::dup(sockets_.front())) >= 0;) fillers_.push_back(fd);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (const int fd : sockets_) {
      if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 &&
          errno != EINPROGRESS) {
        error_ = std::string("connect failed: ") + std::strerror(errno);
        return;
      }
    }
  }
  ~OpenFilesFull() {
    for (const int fd : fillers_) ::close(fd);
    for (const int fd : sockets_) ::close(fd);
    if (lowered_) ::setrlimit(RLIMIT_NOFILE, &saved_);
  }
  OpenFilesFull(const OpenFilesFull&) = delete;
  OpenFilesFull& operator=(const OpenFilesFull&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  rlimit saved_{};
  bool lowered_ = false;
  std::vector<int> sockets_;
  std::vector<int> fillers_;
  std::string error_;
};

}  // namespace hostmesh::analyzer::testing
