#pragma once

// Reads small sysfs attribute files under a root directory (/sys in
// production, a tree built in a temp dir by tests). One open/read/close per
// value, no streams: a sample of 8 NICs reads a few hundred files.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace hostmesh::agent::telemetry {

enum class ReadStatus {
  kOk,
  kAbsent,  // no such file: the driver does not have this value
  kFailed,  // the file exists but could not be read or parsed
};

class SysfsTree {
 public:
  explicit SysfsTree(std::filesystem::path root);

  // `relative` is below the root: "class/net/eth0/carrier_changes". On
  // kFailed, `why` (when given) says why: the errno text or what did not parse.
  ReadStatus ReadText(std::string_view relative, std::string* out,
                      std::string* why = nullptr) const;
  // A decimal number, surrounding whitespace allowed.
  ReadStatus ReadU64(std::string_view relative, std::uint64_t* out,
                     std::string* why = nullptr) const;
  // The leading number of "4: ACTIVE", "5: LinkUp".
  ReadStatus ReadLeadingU32(std::string_view relative, std::uint32_t* out,
                            std::string* why = nullptr) const;
  bool IsDirectory(std::string_view relative) const;

  const std::filesystem::path& root() const { return root_; }

 private:
  std::string Path(std::string_view relative) const;

  std::filesystem::path root_;
};

// Parsers shared with tests; nullopt-like false on anything malformed.
bool ParseU64(std::string_view text, std::uint64_t* out);
bool ParseLeadingU32(std::string_view text, std::uint32_t* out);
// "8.0 GT/s PCIe", "16 GT/s", "2.5 GT/s" -> MT/s; "Unknown" -> 0 (known unknown).
bool ParsePcieSpeedMts(std::string_view text, std::uint32_t* out);

}  // namespace hostmesh::agent::telemetry
