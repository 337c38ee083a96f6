// Who may read what: the bearer token and client-certificate rules of the
// HTTP server, as pure functions over the request's path and credentials.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/http/handler.h"

namespace hostmesh::http {

// Liveness and readiness: answered without credentials, always (a kubelet or
// a load balancer probes them with none).
inline constexpr std::string_view kHealthzPath = "/healthz";
inline constexpr std::string_view kReadyzPath = "/readyz";

struct AuthPolicy {
  bool token_required = false;        // a bearer token file is configured
  bool client_cert_required = false;  // a client CA is configured (mutual TLS)
  // Off by default: Prometheus scrapes on a trusted network, and a scrape
  // config without credentials keeps working when an operator turns the
  // token on for the API.
  bool protect_metrics = false;
  std::string metrics_path = "/metrics";
};

// The outcome for one request, the failures as the counter's reasons.
enum class AuthResult {
  kAllowed,
  kNoToken,       // no (or a malformed) Authorization: Bearer header
  kWrongToken,    // a bearer token that is not the configured one
  kNoClientCert,  // no verified client certificate on the connection
};
std::string_view AuthResultName(AuthResult result);

// SHA-256 of a token: tokens are compared and kept as digests, so the
// comparison takes the same time whatever the lengths and contents.
using TokenDigest = std::array<std::uint8_t, 32>;
TokenDigest DigestOf(std::string_view token);
// Constant-time equality of two digests.
bool SameDigest(const TokenDigest& a, const TokenDigest& b);

// The token of an `Authorization: Bearer <token>` header value (RFC 6750:
// scheme case-insensitive, then spaces, then the token68 characters);
// nullopt for another scheme or a malformed value.
std::optional<std::string_view> BearerToken(std::string_view authorization);

// A token file's contents as the token (surrounding whitespace and the final
// newline trimmed), or nullopt with the reason: empty, too long or holding
// characters a bearer token cannot have.
std::optional<std::string> ParseTokenFile(std::string_view contents, std::string* error);

// Whether `path` needs credentials under `policy` at all.
bool NeedsAuth(const AuthPolicy& policy, std::string_view path);

// What the request may do. `authorization` is the header's value when sent;
// `expected` the configured token's digest (ignored unless a token is
// required); `client_cert_verified` whether the TLS handshake verified a
// client certificate against the configured CA.
AuthResult Decide(const AuthPolicy& policy, std::string_view path,
                  std::optional<std::string_view> authorization, const TokenDigest& expected,
                  bool client_cert_verified);

// 401 with WWW-Authenticate (RFC 6750) for the token failures, 403 for a
// missing client certificate (TLS has no HTTP challenge to offer).
Response RefusalFor(AuthResult result);

}  // namespace hostmesh::http
