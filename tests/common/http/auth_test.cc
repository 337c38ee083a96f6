// Who may read what: bearer tokens, client certificates and the routes that
// never need either. Pure: no sockets.
#include "common/http/auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hostmesh::http {
namespace {

using ::testing::HasSubstr;

TEST(HttpAuth, BearerTokenParsesTheSchemeCaseInsensitively) {
  EXPECT_EQ(BearerToken("Bearer abc.DEF-123_~+/=="), "abc.DEF-123_~+/==");
  EXPECT_EQ(BearerToken("bearer abc"), "abc");
  EXPECT_EQ(BearerToken("BEARER   abc  "), "abc");
  EXPECT_EQ(BearerToken("Basic YWxhZGRpbjpvcGVuc2VzYW1l"), std::nullopt);
  EXPECT_EQ(BearerToken("Bearer"), std::nullopt);
  EXPECT_EQ(BearerToken("Bearer "), std::nullopt);
  EXPECT_EQ(BearerToken("Bearerabc"), std::nullopt);
  EXPECT_EQ(BearerToken("Bearer a b"), std::nullopt);
  EXPECT_EQ(BearerToken("Bearer =abc"), std::nullopt);
  EXPECT_EQ(BearerToken("Bearer ab=c"), std::nullopt);
}

TEST(HttpAuth, DigestsCompareEqualOnlyForTheSameToken) {
  EXPECT_TRUE(SameDigest(DigestOf("s3cret"), DigestOf("s3cret")));
  EXPECT_FALSE(SameDigest(DigestOf("s3cret"), DigestOf("s3creT")));
  EXPECT_FALSE(SameDigest(DigestOf("s3cret"), DigestOf("s3cret ")));
  EXPECT_FALSE(SameDigest(DigestOf("s3cret"), DigestOf("")));
  // SHA-256 of "abc", so the digest is the standard one and not a home-made hash.
  const TokenDigest abc = DigestOf("abc");
  EXPECT_EQ(abc[0], 0xba);
  EXPECT_EQ(abc[31], 0xad);
}

TEST(HttpAuth, TokenFilesAreTrimmedAndChecked) {
  std::string error;
  EXPECT_EQ(ParseTokenFile("tok-en_1\n", &error), "tok-en_1");
  EXPECT_EQ(ParseTokenFile("  tok\r\n\n", &error), "tok");
  EXPECT_EQ(ParseTokenFile("\n \n", &error), std::nullopt);
  EXPECT_THAT(error, HasSubstr("empty"));
  EXPECT_EQ(ParseTokenFile("two words", &error), std::nullopt);
  EXPECT_THAT(error, HasSubstr("characters"));
  EXPECT_EQ(ParseTokenFile(std::string(5000, 'a'), &error), std::nullopt);
  EXPECT_THAT(error, HasSubstr("longer than 4096"));
}

AuthPolicy TokenPolicy() {
  AuthPolicy policy;
  policy.token_required = true;
  return policy;
}

TEST(HttpAuth, WithoutCredentialsConfiguredEverythingIsOpen) {
  const AuthPolicy open;
  for (const char* path : {"/", "/api/v1/status", "/metrics", "/healthz", "/nothing"}) {
    EXPECT_EQ(Decide(open, path, std::nullopt, TokenDigest{}, false), AuthResult::kAllowed) << path;
  }
}

TEST(HttpAuth, TokenIsRequiredExceptOnProbesAndMetrics) {
  const AuthPolicy policy = TokenPolicy();
  const TokenDigest expected = DigestOf("s3cret");
  EXPECT_EQ(Decide(policy, "/api/v1/status", std::nullopt, expected, false), AuthResult::kNoToken);
  EXPECT_EQ(Decide(policy, "/api/v1/status", "Basic eDp5", expected, false), AuthResult::kNoToken);
  EXPECT_EQ(Decide(policy, "/api/v1/status", "Bearer wrong", expected, false),
            AuthResult::kWrongToken);
  EXPECT_EQ(Decide(policy, "/api/v1/status", "Bearer s3cret", expected, false),
            AuthResult::kAllowed);
  // Unknown paths need the token too: a refusal must not tell routes apart.
  EXPECT_EQ(Decide(policy, "/nothing", std::nullopt, expected, false), AuthResult::kNoToken);
  EXPECT_EQ(Decide(policy, "/healthz", std::nullopt, expected, false), AuthResult::kAllowed);
  EXPECT_EQ(Decide(policy, "/readyz", "Bearer wrong", expected, false), AuthResult::kAllowed);
  EXPECT_EQ(Decide(policy, "/metrics", std::nullopt, expected, false), AuthResult::kAllowed);
}

TEST(HttpAuth, ProtectMetricsPutsMetricsBehindTheCredentials) {
  AuthPolicy policy = TokenPolicy();
  policy.protect_metrics = true;
  const TokenDigest expected = DigestOf("s3cret");
  EXPECT_EQ(Decide(policy, "/metrics", std::nullopt, expected, false), AuthResult::kNoToken);
  EXPECT_EQ(Decide(policy, "/metrics", "Bearer s3cret", expected, false), AuthResult::kAllowed);
  EXPECT_EQ(Decide(policy, "/healthz", std::nullopt, expected, false), AuthResult::kAllowed);
  policy.metrics_path = "/stats";
  EXPECT_EQ(Decide(policy, "/stats", std::nullopt, expected, false), AuthResult::kNoToken);
}

TEST(HttpAuth, ClientCertificateAndTokenAreBothNeededWhenBothAreConfigured) {
  AuthPolicy policy = TokenPolicy();
  policy.client_cert_required = true;
  const TokenDigest expected = DigestOf("s3cret");
  EXPECT_EQ(Decide(policy, "/api/v1/rnics", "Bearer s3cret", expected, false),
            AuthResult::kNoClientCert);
  EXPECT_EQ(Decide(policy, "/api/v1/rnics", std::nullopt, expected, true), AuthResult::kNoToken);
  EXPECT_EQ(Decide(policy, "/api/v1/rnics", "Bearer s3cret", expected, true), AuthResult::kAllowed);
  EXPECT_EQ(Decide(policy, "/metrics", std::nullopt, expected, false), AuthResult::kAllowed);
  EXPECT_EQ(Decide(policy, "/readyz", std::nullopt, expected, false), AuthResult::kAllowed);
}

TEST(HttpAuth, RefusalsChallengeForTokensAndForbidWithoutCertificate) {
  const Response no_token = RefusalFor(AuthResult::kNoToken);
  EXPECT_EQ(no_token.status, 401);
  ASSERT_EQ(no_token.headers.size(), 1u);
  EXPECT_EQ(no_token.headers[0].first, "WWW-Authenticate");
  EXPECT_EQ(no_token.headers[0].second, "Bearer realm=\"hostmesh\"");
  const Response wrong = RefusalFor(AuthResult::kWrongToken);
  EXPECT_EQ(wrong.status, 401);
  EXPECT_THAT(wrong.headers.at(0).second, HasSubstr("error=\"invalid_token\""));
  const Response no_cert = RefusalFor(AuthResult::kNoClientCert);
  EXPECT_EQ(no_cert.status, 403);
  EXPECT_THAT(no_cert.body, HasSubstr("client certificate"));
}

}  // namespace
}  // namespace hostmesh::http
