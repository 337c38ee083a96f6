#include "ctl/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <memory>
#include <mutex>

namespace hostmesh::ctl {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' ||
                           text.back() == '\n')) {
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

// What the callbacks collect while libcurl runs the exchange.
struct Exchange {
  HttpResponse response;
  std::size_t max_body_bytes = 0;
  bool too_large = false;
  bool headers_done = false;  // the blank line after the headers arrived
};

// One call per header line, the status line first ("HTTP/1.1 404 Not Found");
// a new status line (after a 1xx) starts the headers over.
std::size_t OnHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto& ex = *static_cast<Exchange*>(user);
  const std::string_view line = Trim(std::string_view(data, size * count));
  if (line.empty()) {
    ex.headers_done = true;
  } else if (line.starts_with("HTTP/")) {
    ex.headers_done = false;
    ex.response.headers.clear();
    const auto code = line.find(' ');
    const auto reason = code == std::string_view::npos ? code : line.find(' ', code + 1);
    ex.response.reason =
        reason == std::string_view::npos ? "" : std::string(Trim(line.substr(reason + 1)));
  } else if (const auto colon = line.find(':'); colon != std::string_view::npos && colon > 0) {
    ex.response.headers.emplace_back(Lower(Trim(line.substr(0, colon))),
                                     std::string(Trim(line.substr(colon + 1))));
  }
  return size * count;
}

std::size_t OnBody(char* data, std::size_t size, std::size_t count, void* user) {
  auto& ex = *static_cast<Exchange*>(user);
  if (ex.response.body.size() + size * count > ex.max_body_bytes) {
    ex.too_large = true;
    return 0;  // aborts the transfer with CURLE_WRITE_ERROR
  }
  ex.response.body.append(data, size * count);
  return size * count;
}

struct CurlDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

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

HttpResponse HttpGet(const HttpEndpoint& endpoint, std::string_view path,
                     const HttpOptions& options) {
  static std::once_flag global_init;
  std::call_once(global_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  const std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return Failure(HttpError::kUnreachable, "libcurl could not start a request");

  const std::string url = endpoint.ToString() + std::string(path);
  const std::string timeout_text = std::to_string(options.timeout.count()) + " ms";
  Exchange ex;
  ex.max_body_bytes = options.max_body_bytes;
  char error_text[CURL_ERROR_SIZE] = "";
  curl_slist* raw_headers = curl_slist_append(nullptr, "Accept: application/json");
  raw_headers = curl_slist_append(raw_headers, "Connection: close");
  const std::unique_ptr<curl_slist, SlistDeleter> headers(raw_headers);

  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
  curl_easy_setopt(c, CURLOPT_PROXY, "");  // never a proxy from the environment
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  // Bounds the whole exchange: resolving, connecting, sending and reading.
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout.count()));
  curl_easy_setopt(c, CURLOPT_USERAGENT, "hostmeshctl");
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options.max_body_bytes));
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_text);

  const CURLcode rc = curl_easy_perform(c);
  const std::string why = error_text[0] != '\0' ? error_text : curl_easy_strerror(rc);
  long os_errno = 0;
  curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &os_errno);
  curl_off_t connected_us = 0;
  curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connected_us);
  switch (rc) {
    case CURLE_OK:
      break;
    case CURLE_COULDNT_RESOLVE_HOST:
      return Failure(HttpError::kUnreachable, "cannot resolve '" + endpoint.host + "': " + why);
    case CURLE_COULDNT_CONNECT:
      return Failure(
          HttpError::kUnreachable,
          "cannot connect: " +
              (os_errno != 0 ? std::string(std::strerror(static_cast<int>(os_errno))) : why));
    case CURLE_OPERATION_TIMEDOUT:
      return Failure(HttpError::kUnreachable, connected_us == 0
                                                  ? "connect timed out after " + timeout_text
                                                  : "no complete answer within " + timeout_text);
    case CURLE_SEND_ERROR:
      return Failure(HttpError::kUnreachable, "sending the request failed: " + why);
    case CURLE_RECV_ERROR:
      // A reset before any answer is an analyzer that is not there; after
      // part of one, a broken answer.
      return Failure(ex.response.reason.empty() && ex.response.headers.empty()
                         ? HttpError::kUnreachable
                         : HttpError::kBadResponse,
                     "reading the answer failed: " + why);
    case CURLE_GOT_NOTHING:
      return Failure(HttpError::kBadResponse, "connection closed without a response");
    case CURLE_PARTIAL_FILE:
      return Failure(HttpError::kBadResponse, "body truncated: " + why);
    case CURLE_FILESIZE_EXCEEDED:
      return Failure(HttpError::kBadResponse,
                     "body larger than " + std::to_string(options.max_body_bytes) + " bytes");
    case CURLE_WRITE_ERROR:
      if (ex.too_large) {
        return Failure(HttpError::kBadResponse,
                       "body larger than " + std::to_string(options.max_body_bytes) + " bytes");
      }
      return Failure(HttpError::kBadResponse, why);
    default:
      // Not HTTP/1.x, a malformed status line or chunk, and the like.
      return Failure(HttpError::kBadResponse, why);
  }
  if (!ex.headers_done) {
    // libcurl takes a close in the middle of the headers for the end of them.
    return Failure(HttpError::kBadResponse,
                   "connection closed in the middle of the response headers");
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  ex.response.status = static_cast<int>(status);
  return std::move(ex.response);
}

}  // namespace hostmesh::ctl
