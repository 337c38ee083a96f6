// TLS material as files: what the analyzer's ingest and the agent's uploader
// hand to gRPC, which watches the files and picks up rotated ones by itself.
// This room only checks them (so a bad path is a clear error at start, not a
// handshake that fails later) and reads their expiry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace hostmesh::tls {

// PEM files. `cert` may hold a chain (leaf first); `ca` is a bundle of the
// authorities the peer's certificate must chain to.
struct TlsFiles {
  std::filesystem::path cert;
  std::filesystem::path key;
  std::filesystem::path ca;
};

// How often gRPC re-reads the files: a rotated certificate is in use for new
// connections within this long, without a restart.
inline constexpr unsigned kRefreshSeconds = 10;

// nullopt when every file reads, parses and the key belongs to the
// certificate; else one error naming the file and what is wrong with it.
std::optional<std::string> CheckTlsFiles(const TlsFiles& files);

// The notAfter times (seconds since the epoch) of the certificates of a PEM
// file, in file order; empty when the file cannot be read or holds none.
std::vector<std::int64_t> CertificateExpiries(const std::filesystem::path& pem);

}  // namespace hostmesh::tls
