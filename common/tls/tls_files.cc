#include "common/tls/tls_files.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>

namespace hostmesh::tls {
namespace {

// TLS files are small; anything larger is not one (and is not read whole).
constexpr std::uintmax_t kMaxPemBytes = 1 << 20;

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

std::optional<std::string> ReadSmallFile(const std::filesystem::path& path, std::string* error) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    *error = path.string() + ": " + ec.message();
    return std::nullopt;
  }
  if (size > kMaxPemBytes) {
    *error = path.string() + ": " + std::to_string(size) + " bytes is not a PEM file of TLS " +
             "material (limit " + std::to_string(kMaxPemBytes) + ")";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    *error = path.string() + ": cannot be read";
    return std::nullopt;
  }
  return text.str();
}

// gRPC's certificate watcher takes a modification time of 0 for a failed stat
// and never loads the file: every handshake would fail without a word from
// us. Archives built for reproducibility (cpio, some image builders) stamp
// files so. A gRPC rule, so only the check of gRPC's files asks it.
std::optional<std::string> StampedAtEpoch(const std::filesystem::path& path) {
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(path, ec);
  if (ec || mtime != std::filesystem::file_time_type::clock::from_sys(
                         std::chrono::system_clock::from_time_t(0))) {
    return std::nullopt;
  }
  return path.string() + ": modification time is 0 (1970-01-01), which gRPC's certificate " +
         "watcher cannot load; touch the file";
}

std::vector<Cert> ReadCertificates(const std::string& pem) {
  std::vector<Cert> certs;
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return certs;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
  }
  ERR_clear_error();  // the read that ended the loop left "no start line"
  return certs;
}

std::optional<std::int64_t> NotAfter(const X509& cert) {
  const ASN1_TIME* not_after = X509_get0_notAfter(&cert);
  tm when{};
  if (not_after == nullptr || ASN1_TIME_to_tm(not_after, &when) != 1) return std::nullopt;
  return static_cast<std::int64_t>(timegm(&when));
}

std::optional<std::string> CheckCertificates(const std::filesystem::path& path,
                                             std::string_view what, std::vector<Cert>* out) {
  std::string error;
  const std::optional<std::string> pem = ReadSmallFile(path, &error);
  if (!pem) return std::string(what) + " " + error;
  *out = ReadCertificates(*pem);
  if (out->empty()) {
    return std::string(what) + " " + path.string() + ": holds no PEM certificate";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> CheckTlsFiles(const TlsFiles& files) {
  for (const std::filesystem::path* path : {&files.ca, &files.cert, &files.key}) {
    if (auto error = StampedAtEpoch(*path)) return error;
  }
  std::vector<Cert> ca;
  if (auto error = CheckCertificates(files.ca, "CA bundle", &ca)) return error;
  std::vector<Cert> chain;
  if (auto error = CheckCertificates(files.cert, "certificate", &chain)) return error;
  std::string error;
  const std::optional<std::string> key_pem = ReadSmallFile(files.key, &error);
  if (!key_pem) return "private key " + error;
  Bio bio(BIO_new_mem_buf(key_pem->data(), static_cast<int>(key_pem->size())));
  Key key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  ERR_clear_error();
  if (!key) {
    return "private key " + files.key.string() + ": holds no unencrypted PEM private key";
  }
  if (X509_check_private_key(chain.front().get(), key.get()) != 1) {
    ERR_clear_error();
    return "private key " + files.key.string() + " does not belong to the certificate " +
           files.cert.string();
  }
  return std::nullopt;
}

std::vector<std::int64_t> CertificateExpiries(const std::filesystem::path& pem) {
  std::vector<std::int64_t> out;
  std::string error;
  const std::optional<std::string> text = ReadSmallFile(pem, &error);
  if (!text) return out;
  for (const Cert& cert : ReadCertificates(*text)) {
    if (const auto t = NotAfter(*cert)) out.push_back(*t);
  }
  return out;
}

}  // namespace hostmesh::tls
