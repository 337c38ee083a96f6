#pragma once

// A tiny HTTP server for tests of hostmeshctl's client side: listens on
// 127.0.0.1:0, reads each request's head, and writes whatever bytes the
// handler returns (a canned, possibly malformed answer), then closes. A
// handler returning nullopt leaves the connection open and silent until the
// server stops (a hung analyzer).

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace hostmesh::ctl::testing {

class FakeHttpServer {
 public:
  // Gets the request line ("GET /api/v1/rnics HTTP/1.1"), returns the raw answer.
  using Handler = std::function<std::optional<std::string>(const std::string& request_line)>;

  explicit FakeHttpServer(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeHttpServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (const int fd : held_) ::close(fd);
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }
  FakeHttpServer(const FakeHttpServer&) = delete;
  FakeHttpServer& operator=(const FakeHttpServer&) = delete;

  std::uint16_t port() const { return port_; }  // 0 when it could not listen
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Full request heads received so far.
  std::vector<std::string> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

  // An HTTP/1.1 answer with Content-Length and Connection: close.
  static std::string Answer(int status, const std::string& reason, const std::string& body,
                            const std::string& type = "application/json") {
    return "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " + type +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
           body;
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::string head;
      char buf[4096];
      while (head.find("\r\n\r\n") == std::string::npos) {
        pollfd c{fd, POLLIN, 0};
        if (::poll(&c, 1, 2000) <= 0) break;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        head.append(buf, static_cast<std::size_t>(n));
      }
      {
        std::lock_guard lock(mu_);
        requests_.push_back(head);
      }
      const auto answer = handler_(head.substr(0, head.find("\r\n")));
      if (!answer) {
        held_.push_back(fd);
        continue;
      }
      std::size_t sent = 0;
      while (sent < answer->size()) {
        const ssize_t n = ::send(fd, answer->data() + sent, answer->size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
      }
      ::close(fd);
    }
  }

  Handler handler_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<int> held_;  // server thread only, until joined
  mutable std::mutex mu_;
  std::vector<std::string> requests_;
};

// A port on 127.0.0.1 that nothing listens on (bound, then released).
inline std::uint16_t UnusedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

}  // namespace hostmesh::ctl::testing
