#include "tests/common/http/http_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace hostmesh::http::testing {
namespace {

std::optional<HttpReply> Fail(std::string* error, std::string why) {
  if (error != nullptr) *error = std::move(why);
  return std::nullopt;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

std::optional<HttpReply> Parse(const std::string& raw, std::string* error) {
  const std::size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return Fail(error, "no end of headers in: " + raw);
  HttpReply reply;
  reply.body = raw.substr(head_end + 4);
  std::string_view head(raw.data(), head_end);
  std::size_t eol = head.find("\r\n");
  const std::string_view status_line = head.substr(0, eol);
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12) {
    return Fail(error, "bad status line: " + std::string(status_line));
  }
  reply.status = std::stoi(std::string(status_line.substr(9, 3)));
  while (eol != std::string_view::npos) {
    head.remove_prefix(eol + 2);
    eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return Fail(error, "bad header: " + std::string(line));
    reply.headers[Lower(std::string(line.substr(0, colon)))] = Trim(line.substr(colon + 1));
  }
  return reply;
}

int Connect(const char* source, std::uint16_t port, std::string* error) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  // A hung server fails the test after 10 s instead of hanging it.
  timeval timeout{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);

  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, source, &from.sin_addr);
  if (from.sin_addr.s_addr != htonl(INADDR_LOOPBACK) &&
      bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from) != 0) {
    *error = std::string("bind to ") + source + ": " + std::strerror(errno);
    close(fd);
    return -1;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    *error = std::string("connect: ") + std::strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int ConnectFrom(const char* source, std::uint16_t port) {
  std::string ignored;
  return Connect(source, port, &ignored);
}

std::optional<HttpReply> Fetch(std::uint16_t port, std::string_view method, std::string_view target,
                               std::string* error) {
  return FetchWith(port, method, target, "", error);
}

std::optional<HttpReply> FetchWith(std::uint16_t port, std::string_view method,
                                   std::string_view target, std::string_view headers,
                                   std::string* error, const char* source) {
  std::string why;
  const int fd = Connect(source, port, &why);
  if (fd < 0) return Fail(error, why);

  const std::string request = std::string(method) + " " + std::string(target) +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
                              std::string(headers) + "\r\n";
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      close(fd);
      return Fail(error, "send failed");
    }
    sent += static_cast<std::size_t>(n);
  }

  std::string raw;
  char buf[4096];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof buf, 0)) > 0) raw.append(buf, static_cast<std::size_t>(n));
  const int err = errno;
  close(fd);
  if (n < 0) return Fail(error, std::string("recv: ") + std::strerror(err));
  return Parse(raw, error);
}

}  // namespace hostmesh::http::testing
