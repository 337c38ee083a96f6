// The server's TLS material in GnuTLS form, loaded from PEM text: the
// certificate chain with its key that the handshake serves, and the CA that
// client certificates must chain to. Immutable once built, shared by
// shared_ptr: a rotation builds a new one while connections keep theirs.
#pragma once

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hostmesh::http {

class CertifiedKey {
 public:
  // The chain (leaf first) and the leaf's private key, both PEM; nullptr with
  // *error when either does not parse or the key is not the leaf's.
  static std::shared_ptr<const CertifiedKey> FromPem(std::string_view chain_pem,
                                                     std::string_view key_pem, std::string* error);
  ~CertifiedKey();
  CertifiedKey(const CertifiedKey&) = delete;
  CertifiedKey& operator=(const CertifiedKey&) = delete;

  // For gnutls_certificate_retrieve_function2, which takes non-const
  // pointers but does not modify or free them.
  gnutls_pcert_st* chain() const { return const_cast<gnutls_pcert_st*>(chain_.data()); }
  unsigned chain_length() const { return static_cast<unsigned>(chain_.size()); }
  gnutls_privkey_t key() const { return key_; }
  // The leaf's subject and expiry, for logs.
  const std::string& description() const { return description_; }

 private:
  CertifiedKey() = default;
  std::vector<gnutls_pcert_st> chain_;
  gnutls_privkey_t key_ = nullptr;
  std::string description_;
};

class ClientTrust {
 public:
  // One or more PEM CA certificates; nullptr with *error when none parses.
  static std::shared_ptr<const ClientTrust> FromPem(std::string_view ca_pem, std::string* error);
  ~ClientTrust();
  ClientTrust(const ClientTrust&) = delete;
  ClientTrust& operator=(const ClientTrust&) = delete;

  // Whether a peer's chain (DER, leaf first, as gnutls_certificate_get_peers
  // gives it) chains to these CAs, is in its validity period and may
  // authenticate a TLS client; "" when it does, else why not.
  std::string Verify(const gnutls_datum_t* chain, unsigned length) const;
  std::size_t ca_count() const { return ca_count_; }

 private:
  ClientTrust() = default;
  gnutls_x509_trust_list_t list_ = nullptr;
  std::size_t ca_count_ = 0;
};

}  // namespace hostmesh::http
