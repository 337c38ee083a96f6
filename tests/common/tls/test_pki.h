// A certificate authority for tests, made with the openssl command line in a
// directory of the test's: a CA, and leaf certificates with the SANs a test
// asks for. Real TLS material, so tests exercise gRPC's real handshake.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/tls/tls_files.h"

namespace hostmesh::tls::testing {

class TestPki {
 public:
  // A new CA named `ca_name` in `dir` (created).
  explicit TestPki(std::filesystem::path dir, const std::string& ca_name = "ca")
      : dir_(std::move(dir)), ca_name_(ca_name) {
    std::filesystem::create_directories(dir_);
    Run("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " + Path(".key"));
    Run("openssl req -x509 -new -key " + Path(".key") + " -subj /CN=" + ca_name_ +
        " -days 2 -addext basicConstraints=critical,CA:TRUE -addext "
        "keyUsage=critical,keyCertSign,cRLSign -out " +
        Path(".crt"));
  }

  std::filesystem::path ca() const { return Path(".crt"); }

  // <name>.crt and <name>.key signed by this CA, with `san` as the
  // subjectAltName ("DNS:h1,URI:spiffe://x/host/h1", "IP:127.0.0.1"); the
  // returned files name this CA as their `ca`. Issuing a name again renews
  // it: new key, new serial, same files.
  TlsFiles Issue(const std::string& name, const std::string& san, bool server, int days = 1) const {
    const std::string key = (dir_ / (name + ".key")).string();
    const std::string crt = (dir_ / (name + ".crt")).string();
    const std::string csr = (dir_ / (name + ".csr")).string();
    const std::string ext = (dir_ / (name + ".ext")).string();
    Run("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " + key);
    Run("openssl req -new -key " + key + " -subj /CN=" + name + " -out " + csr);
    std::ofstream(ext) << "subjectAltName=" << san
                       << "\nextendedKeyUsage=" << (server ? "serverAuth" : "clientAuth") << "\n";
    Run("openssl x509 -req -in " + csr + " -CA " + Path(".crt") + " -CAkey " + Path(".key") +
        " -CAcreateserial -days " + std::to_string(days) + " -sha256 -extfile " + ext + " -out " +
        crt);
    return TlsFiles{crt, key, ca()};
  }

  // Revokes <name>.crt (issued by this CA) and writes this CA's CRL of every
  // certificate revoked so far into `crl_dir` as <subject hash>.r0, the name
  // OpenSSL's hash-directory lookup (and so gRPC's crl_directory) reads.
  void Revoke(const std::string& name, const std::filesystem::path& crl_dir) const {
    const std::string conf = Path(".cnf");
    if (!std::filesystem::exists(conf)) {
      std::ofstream(conf) << "[ca]\ndefault_ca = test\n[test]\ndatabase = " << Path(".index")
                          << "\ncrlnumber = " << Path(".crlnumber")
                          << "\ndefault_md = sha256\ndefault_crl_days = 1\n";
      std::ofstream(Path(".index"));
      std::ofstream(Path(".crlnumber")) << "01\n";
    }
    const std::string ca =
        " -config " + conf + " -keyfile " + Path(".key") + " -cert " + Path(".crt");
    Run("openssl ca" + ca + " -revoke " + (dir_ / (name + ".crt")).string());
    std::filesystem::create_directories(crl_dir);
    const std::string crl = Path(".crl");
    Run("openssl ca" + ca + " -gencrl -out " + crl);
    Run("cp " + crl + " " + crl_dir.string() + "/$(openssl crl -hash -noout -in " + crl + ").r0");
  }

 private:
  std::string Path(const std::string& ext) const { return (dir_ / (ca_name_ + ext)).string(); }
  static void Run(const std::string& command) {
    const int rc = std::system((command + " >/dev/null 2>&1").c_str());
    if (rc != 0) ADD_FAILURE() << "exit " << rc << ": " << command;
  }

  std::filesystem::path dir_;
  std::string ca_name_;
};

}  // namespace hostmesh::tls::testing
