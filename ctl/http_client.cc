#include "ctl/http_client.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace hostmesh::ctl {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxHeaderBytes = 64 * 1024;

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

HttpResponse Failure(HttpError error, std::string message) {
  HttpResponse r;
  r.error = error;
  r.message = std::move(message);
  return r;
}

// Milliseconds left until `deadline`, at least 0, for poll().
int RemainingMs(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1'000'000));
}

// Waits for `events` on fd until the deadline: false on timeout.
bool Wait(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, RemainingMs(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Decodes a chunked body. Nullopt while incomplete; sets *bad on malformed.
std::optional<std::string> Dechunk(std::string_view in, std::size_t max, std::string* bad) {
  std::string body;
  for (;;) {
    const auto eol = in.find("\r\n");
    if (eol == std::string_view::npos) return std::nullopt;
    std::string_view size_text = in.substr(0, eol);
    size_text = Trim(size_text.substr(0, size_text.find(';')));
    std::size_t size = 0;
    const auto [ptr, ec] =
        std::from_chars(size_text.data(), size_text.data() + size_text.size(), size, 16);
    if (size_text.empty() || ec != std::errc() || ptr != size_text.data() + size_text.size()) {
      *bad = "malformed chunk size";
      return std::nullopt;
    }
    in.remove_prefix(eol + 2);
    if (size == 0) return body;  // trailers, if any, are ignored
    if (body.size() + size > max) {
      *bad = "body larger than " + std::to_string(max) + " bytes";
      return std::nullopt;
    }
    if (in.size() < size + 2) return std::nullopt;
    body.append(in.substr(0, size));
    in.remove_prefix(size + 2);
  }
}

}  // namespace

std::string HttpEndpoint::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + prefix;
}

std::optional<HttpEndpoint> ParseHttpEndpoint(std::string_view url, std::string* error) {
  const std::string original(url);
  auto fail = [&](const std::string& why) -> std::optional<HttpEndpoint> {
    *error = "bad analyzer address '" + original + "': " + why;
    return std::nullopt;
  };
  if (const auto scheme = url.find("://"); scheme != std::string_view::npos) {
    if (Lower(url.substr(0, scheme)) != "http") return fail("only http:// is supported");
    url.remove_prefix(scheme + 3);
  }
  HttpEndpoint ep;
  const auto slash = url.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = url.substr(slash);
    while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
    ep.prefix = std::string(prefix);
    url = url.substr(0, slash);
  }
  std::string_view port_text;
  if (!url.empty() && url.front() == '[') {
    const auto close = url.find(']');
    if (close == std::string_view::npos) return fail("unclosed '['");
    ep.host = std::string(url.substr(1, close - 1));
    const std::string_view rest = url.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return fail("expected ':' after ']'");
      port_text = rest.substr(1);
      if (port_text.empty()) return fail("empty port");
    }
  } else {
    const auto colon = url.find(':');
    ep.host = std::string(url.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = url.substr(colon + 1);
      if (port_text.empty()) return fail("empty port");
    }
  }
  if (ep.host.empty()) return fail("no host");
  if (!port_text.empty()) {
    unsigned port = 0;
    const auto [ptr, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port == 0 ||
        port > 65535) {
      return fail("bad port '" + std::string(port_text) + "'");
    }
    ep.port = static_cast<std::uint16_t>(port);
  }
  return ep;
}

std::optional<std::string> HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::optional<HttpResponse> ParseHttpResponse(std::string_view bytes, bool closed,
                                              std::size_t max_body_bytes) {
  const auto end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (bytes.size() > kMaxHeaderBytes) {
      return Failure(HttpError::kBadResponse, "response headers larger than 64 KiB");
    }
    if (!closed) return std::nullopt;
    return Failure(HttpError::kBadResponse,
                   bytes.empty() ? "connection closed without a response"
                                 : "connection closed in the middle of the response headers");
  }
  HttpResponse r;
  std::string_view head = bytes.substr(0, end);
  const auto first_eol = head.find("\r\n");
  const std::string_view status_line = head.substr(0, first_eol);
  head = first_eol == std::string_view::npos ? std::string_view() : head.substr(first_eol + 2);
  // "HTTP/1.1 200 OK"
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ') {
    return Failure(HttpError::kBadResponse,
                   "not an HTTP/1.x status line: '" + std::string(status_line.substr(0, 80)) + "'");
  }
  const std::string_view code = status_line.substr(9, 3);
  const auto [ptr, ec] = std::from_chars(code.data(), code.data() + code.size(), r.status);
  if (ec != std::errc() || ptr != code.data() + code.size() || r.status < 100 ||
      (status_line.size() > 12 && status_line[12] != ' ')) {
    return Failure(HttpError::kBadResponse,
                   "bad status code in '" + std::string(status_line.substr(0, 80)) + "'");
  }
  r.reason = std::string(Trim(status_line.size() > 12 ? status_line.substr(13) : ""));
  while (!head.empty()) {
    const auto eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    head = eol == std::string_view::npos ? std::string_view() : head.substr(eol + 2);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Failure(HttpError::kBadResponse,
                     "malformed header line '" + std::string(line.substr(0, 80)) + "'");
    }
    r.headers.emplace_back(Lower(Trim(line.substr(0, colon))),
                           std::string(Trim(line.substr(colon + 1))));
  }
  const std::string_view rest = bytes.substr(end + 4);
  if (r.status < 200 || r.status == 204 || r.status == 304) return r;  // no body
  const auto encoding = r.Header("transfer-encoding");
  if (encoding && Lower(*encoding).find("chunked") != std::string::npos) {
    std::string bad;
    auto body = Dechunk(rest, max_body_bytes, &bad);
    if (!bad.empty()) return Failure(HttpError::kBadResponse, bad);
    if (!body) {
      if (!closed) return std::nullopt;
      return Failure(HttpError::kBadResponse, "connection closed in the middle of a chunked body");
    }
    r.body = std::move(*body);
    return r;
  }
  if (const auto length_text = r.Header("content-length")) {
    std::size_t length = 0;
    const std::string& t = *length_text;
    const auto [p, e] = std::from_chars(t.data(), t.data() + t.size(), length);
    if (t.empty() || e != std::errc() || p != t.data() + t.size()) {
      return Failure(HttpError::kBadResponse, "bad Content-Length '" + t + "'");
    }
    if (length > max_body_bytes) {
      return Failure(HttpError::kBadResponse,
                     "body of " + t + " bytes exceeds " + std::to_string(max_body_bytes));
    }
    if (rest.size() < length) {
      if (!closed) return std::nullopt;
      return Failure(HttpError::kBadResponse, "body truncated: " + std::to_string(rest.size()) +
                                                  " of " + t + " bytes before the close");
    }
    r.body = std::string(rest.substr(0, length));
    return r;
  }
  if (rest.size() > max_body_bytes) {
    return Failure(HttpError::kBadResponse,
                   "body larger than " + std::to_string(max_body_bytes) + " bytes");
  }
  if (!closed) return std::nullopt;
  r.body = std::string(rest);  // delimited by the close
  return r;
}

HttpResponse HttpGet(const HttpEndpoint& endpoint, std::string_view path,
                     const HttpOptions& options) {
  const auto deadline = Clock::now() + options.timeout;
  const std::string where = endpoint.ToString();
  const std::string timeout_text = std::to_string(options.timeout.count()) + " ms";

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const std::string port = std::to_string(endpoint.port);
  if (const int rc = ::getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &list); rc != 0) {
    return Failure(HttpError::kUnreachable,
                   "cannot resolve '" + endpoint.host + "': " + ::gai_strerror(rc));
  }
  // Tries each address in turn; remembers the last failure.
  int fd = -1;
  std::string last_error = "no address";
  for (const addrinfo* ai = list; ai != nullptr && fd < 0; ai = ai->ai_next) {
    const int s =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (s < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    int rc = ::connect(s, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      if (!Wait(s, POLLOUT, deadline)) {
        last_error = "connect timed out after " + timeout_text;
        ::close(s);
        continue;
      }
      int so_error = 0;
      socklen_t len = sizeof so_error;
      ::getsockopt(s, SOL_SOCKET, SO_ERROR, &so_error, &len);
      errno = so_error;
      rc = so_error == 0 ? 0 : -1;
    }
    if (rc != 0) {
      last_error = std::strerror(errno);
      ::close(s);
      continue;
    }
    fd = s;
  }
  ::freeaddrinfo(list);
  if (fd < 0) return Failure(HttpError::kUnreachable, "cannot connect: " + last_error);
  Socket socket(fd);

  const std::string host_header =
      (endpoint.host.find(':') != std::string::npos ? "[" + endpoint.host + "]" : endpoint.host) +
      ":" + port;
  const std::string request = "GET " + endpoint.prefix + std::string(path) +
                              " HTTP/1.1\r\nHost: " + host_header +
                              "\r\nUser-Agent: hostmeshctl\r\nAccept: application/json\r\n"
                              "Connection: close\r\n\r\n";
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n =
        ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!Wait(fd, POLLOUT, deadline)) {
        return Failure(HttpError::kUnreachable, "sending the request timed out");
      }
    } else {
      return Failure(HttpError::kUnreachable,
                     std::string("sending the request failed: ") + std::strerror(errno));
    }
  }

  std::string bytes;
  char buffer[64 * 1024];
  for (;;) {
    if (!Wait(fd, POLLIN, deadline)) {
      return Failure(HttpError::kUnreachable, "no complete answer within " + timeout_text);
    }
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0 && bytes.empty()) {
      return Failure(HttpError::kUnreachable,
                     std::string("reading the answer failed: ") + std::strerror(errno));
    }
    const bool closed = n <= 0;  // EOF, or a reset after part of the answer
    if (n > 0) bytes.append(buffer, static_cast<std::size_t>(n));
    if (auto r = ParseHttpResponse(bytes, closed, options.max_body_bytes)) return std::move(*r);
  }
}

}  // namespace hostmesh::ctl
