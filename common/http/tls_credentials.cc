#include "common/http/tls_credentials.h"

#include <array>
#include <ctime>

namespace hostmesh::http {
namespace {

// A served chain longer than this is a bundle named by mistake.
constexpr unsigned kMaxChain = 16;

gnutls_datum_t Datum(std::string_view text) {
  return {reinterpret_cast<unsigned char*>(const_cast<char*>(text.data())),
          static_cast<unsigned>(text.size())};
}

std::string Why(int rc) {
  return gnutls_strerror(rc);
}

// SHA-256 key id of a public key, empty on failure.
std::string KeyId(gnutls_pubkey_t key) {
  std::array<unsigned char, 64> id{};
  std::size_t size = id.size();
  if (gnutls_pubkey_get_key_id(key, GNUTLS_KEYID_USE_SHA256, id.data(), &size) < 0) return {};
  return std::string(reinterpret_cast<const char*>(id.data()), size);
}

// "CN=x,O=y, valid until 2025-01-01T00:00:00Z".
std::string Describe(const gnutls_datum_t& der) {
  gnutls_x509_crt_t crt = nullptr;
  if (gnutls_x509_crt_init(&crt) < 0) return "?";
  std::string text = "?";
  if (gnutls_x509_crt_import(crt, &der, GNUTLS_X509_FMT_DER) >= 0) {
    gnutls_datum_t dn{};
    if (gnutls_x509_crt_get_dn3(crt, &dn, 0) >= 0) {
      text.assign(reinterpret_cast<const char*>(dn.data), dn.size);
      gnutls_free(dn.data);
    }
    const std::time_t until = gnutls_x509_crt_get_expiration_time(crt);
    std::tm tm{};
    char when[32] = "?";
    if (until != static_cast<std::time_t>(-1) && gmtime_r(&until, &tm) != nullptr) {
      std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    text += std::string(", valid until ") + when;
  }
  gnutls_x509_crt_deinit(crt);
  return text;
}

}  // namespace

std::shared_ptr<const CertifiedKey> CertifiedKey::FromPem(std::string_view chain_pem,
                                                          std::string_view key_pem,
                                                          std::string* error) {
  std::shared_ptr<CertifiedKey> made(new CertifiedKey());
  std::vector<gnutls_pcert_st> chain(kMaxChain);
  unsigned length = kMaxChain;
  const gnutls_datum_t chain_datum = Datum(chain_pem);
  int rc = gnutls_pcert_list_import_x509_raw(chain.data(), &length, &chain_datum,
                                             GNUTLS_X509_FMT_PEM, 0);
  if (rc < 0) {
    *error = "certificate: " + Why(rc);
    return nullptr;
  }
  chain.resize(length);
  made->chain_ = std::move(chain);
  if (made->chain_.empty()) {
    *error = "certificate: no certificate in the file";
    return nullptr;
  }
  rc = gnutls_privkey_init(&made->key_);
  if (rc < 0) {
    *error = "key: " + Why(rc);
    return nullptr;
  }
  const gnutls_datum_t key_datum = Datum(key_pem);
  rc = gnutls_privkey_import_x509_raw(made->key_, &key_datum, GNUTLS_X509_FMT_PEM, nullptr, 0);
  if (rc < 0) {
    *error = "key: " + Why(rc);
    return nullptr;
  }
  // A rotation caught between writing the certificate and the key reads a
  // new certificate with the old key: refused, so the old pair stays.
  gnutls_pubkey_t from_key = nullptr;
  std::string key_id;
  if (gnutls_pubkey_init(&from_key) >= 0) {
    if (gnutls_pubkey_import_privkey(from_key, made->key_, 0, 0) >= 0) key_id = KeyId(from_key);
    gnutls_pubkey_deinit(from_key);
  }
  if (key_id.empty() || key_id != KeyId(made->chain_[0].pubkey)) {
    *error = "the key is not the certificate's (its public key differs)";
    return nullptr;
  }
  made->description_ = Describe(made->chain_[0].cert);
  return made;
}

CertifiedKey::~CertifiedKey() {
  for (gnutls_pcert_st& cert : chain_) gnutls_pcert_deinit(&cert);
  if (key_ != nullptr) gnutls_privkey_deinit(key_);
}

std::shared_ptr<const ClientTrust> ClientTrust::FromPem(std::string_view ca_pem,
                                                        std::string* error) {
  std::shared_ptr<ClientTrust> made(new ClientTrust());
  int rc = gnutls_x509_trust_list_init(&made->list_, 0);
  if (rc < 0) {
    *error = Why(rc);
    return nullptr;
  }
  const gnutls_datum_t ca = Datum(ca_pem);
  rc = gnutls_x509_trust_list_add_trust_mem(made->list_, &ca, nullptr, GNUTLS_X509_FMT_PEM, 0, 0);
  if (rc < 0) {
    *error = "CA certificates: " + Why(rc);
    return nullptr;
  }
  if (rc == 0) {
    *error = "no CA certificate in the file";
    return nullptr;
  }
  made->ca_count_ = static_cast<std::size_t>(rc);
  return made;
}

ClientTrust::~ClientTrust() {
  if (list_ != nullptr) gnutls_x509_trust_list_deinit(list_, 1);
}

std::string ClientTrust::Verify(const gnutls_datum_t* chain, unsigned length) const {
  if (length == 0) return "no certificate";
  if (length > kMaxChain) return "a chain of " + std::to_string(length) + " certificates";
  std::vector<gnutls_x509_crt_t> certs;
  std::string why;
  for (unsigned i = 0; i < length && why.empty(); ++i) {
    gnutls_x509_crt_t crt = nullptr;
    int rc = gnutls_x509_crt_init(&crt);
    if (rc >= 0) {
      certs.push_back(crt);
      rc = gnutls_x509_crt_import(crt, &chain[i], GNUTLS_X509_FMT_DER);
    }
    if (rc < 0) why = "certificate " + std::to_string(i) + ": " + Why(rc);
  }
  if (why.empty()) {
    // The leaf must allow TLS client authentication (extended key usage).
    gnutls_typed_vdata_st purpose{};
    purpose.type = GNUTLS_DT_KEY_PURPOSE_OID;
    purpose.data = reinterpret_cast<unsigned char*>(const_cast<char*>(GNUTLS_KP_TLS_WWW_CLIENT));
    unsigned status = 0;
    const int rc = gnutls_x509_trust_list_verify_crt2(
        list_, certs.data(), static_cast<unsigned>(certs.size()), &purpose, 1, 0, &status, nullptr);
    if (rc < 0) {
      why = Why(rc);
    } else if (status != 0) {
      gnutls_datum_t text{};
      if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text, 0) >= 0) {
        why.assign(reinterpret_cast<const char*>(text.data), text.size);
        gnutls_free(text.data);
      } else {
        why = "not trusted";
      }
    }
  }
  for (gnutls_x509_crt_t crt : certs) gnutls_x509_crt_deinit(crt);
  return why;
}

}  // namespace hostmesh::http
