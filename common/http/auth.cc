#include "common/http/auth.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include <cctype>
#include <stdexcept>

namespace hostmesh::http {
namespace {

// RFC 6750 b64token: ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/", then "="s.
bool IsToken68(std::string_view token) {
  std::size_t i = 0;
  while (i < token.size()) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    if (!(std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' ||
          c == '/')) {
      break;
    }
    ++i;
  }
  if (i == 0) return false;
  while (i < token.size() && token[i] == '=') ++i;
  return i == token.size();
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// A token file holds one token; longer is a file named by mistake.
constexpr std::size_t kMaxTokenBytes = 4096;

}  // namespace

std::string_view AuthResultName(AuthResult result) {
  switch (result) {
    case AuthResult::kAllowed:
      return "allowed";
    case AuthResult::kNoToken:
      return "no_token";
    case AuthResult::kWrongToken:
      return "wrong_token";
    case AuthResult::kNoClientCert:
      return "no_client_cert";
  }
  return "unknown";
}

TokenDigest DigestOf(std::string_view token) {
  TokenDigest digest{};
  if (gnutls_hash_fast(GNUTLS_DIG_SHA256, token.data(), token.size(), digest.data()) != 0) {
    // Only when the library is unusable (FIPS self-tests failed).
    throw std::runtime_error("gnutls_hash_fast(SHA-256) failed");
  }
  return digest;
}

bool SameDigest(const TokenDigest& a, const TokenDigest& b) {
  // Every byte is visited whatever differs: no early exit to time.
  volatile std::uint8_t diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = diff | static_cast<std::uint8_t>(a[i] ^ b[i]);
  return diff == 0;
}

std::optional<std::string_view> BearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) {
      return std::nullopt;
    }
  }
  std::string_view rest = authorization.substr(kScheme.size());
  if (rest.front() != ' ') return std::nullopt;
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
  if (!IsToken68(rest)) return std::nullopt;
  return rest;
}

std::optional<std::string> ParseTokenFile(std::string_view contents, std::string* error) {
  while (!contents.empty() && IsSpace(contents.front())) contents.remove_prefix(1);
  while (!contents.empty() && IsSpace(contents.back())) contents.remove_suffix(1);
  if (contents.empty()) {
    *error = "the token file is empty";
    return std::nullopt;
  }
  if (contents.size() > kMaxTokenBytes) {
    *error = "the token is longer than " + std::to_string(kMaxTokenBytes) + " bytes";
    return std::nullopt;
  }
  if (!IsToken68(contents)) {
    *error =
        "the token holds characters a bearer token cannot have (letters, digits and -._~+/ "
        "then =)";
    return std::nullopt;
  }
  return std::string(contents);
}

bool NeedsAuth(const AuthPolicy& policy, std::string_view path) {
  if (!policy.token_required && !policy.client_cert_required) return false;
  if (path == kHealthzPath || path == kReadyzPath) return false;
  if (path == policy.metrics_path) return policy.protect_metrics;
  return true;
}

AuthResult Decide(const AuthPolicy& policy, std::string_view path,
                  std::optional<std::string_view> authorization, const TokenDigest& expected,
                  bool client_cert_verified) {
  if (!NeedsAuth(policy, path)) return AuthResult::kAllowed;
  if (policy.client_cert_required && !client_cert_verified) return AuthResult::kNoClientCert;
  if (policy.token_required) {
    const std::optional<std::string_view> token =
        authorization ? BearerToken(*authorization) : std::nullopt;
    if (!token) return AuthResult::kNoToken;
    if (!SameDigest(DigestOf(*token), expected)) return AuthResult::kWrongToken;
  }
  return AuthResult::kAllowed;
}

Response RefusalFor(AuthResult result) {
  Response response;
  switch (result) {
    case AuthResult::kAllowed:
      break;
    case AuthResult::kNoToken:
      response.status = 401;
      response.body = "a bearer token is required (Authorization: Bearer <token>)\n";
      response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"hostmesh\"");
      break;
    case AuthResult::kWrongToken:
      response.status = 401;
      response.body = "the bearer token is not valid\n";
      response.headers.emplace_back("WWW-Authenticate",
                                    "Bearer realm=\"hostmesh\", error=\"invalid_token\"");
      break;
    case AuthResult::kNoClientCert:
      response.status = 403;
      response.body = "a client certificate signed by the configured CA is required\n";
      break;
  }
  return response;
}

}  // namespace hostmesh::http
