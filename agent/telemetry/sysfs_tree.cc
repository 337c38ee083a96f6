#include "agent/telemetry/sysfs_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <utility>

namespace hostmesh::agent::telemetry {
namespace {

std::string_view Trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// Leading decimal digits of `text`; false when there are none.
bool LeadingDigits(std::string_view text, std::uint64_t* out, std::string_view* rest) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (ec != std::errc()) return false;
  *rest = text.substr(static_cast<std::size_t>(end - text.data()));
  return true;
}

ReadStatus Failed(std::string* why, std::string_view reason) {
  if (why != nullptr) *why = reason;
  return ReadStatus::kFailed;
}

}  // namespace

SysfsTree::SysfsTree(std::filesystem::path root) : root_(std::move(root)) {}

std::string SysfsTree::Path(std::string_view relative) const {
  std::string path = root_.string();
  if (path.empty() || path.back() != '/') path.push_back('/');
  path.append(relative);
  return path;
}

ReadStatus SysfsTree::ReadText(std::string_view relative, std::string* out,
                               std::string* why) const {
  const int fd = ::open(Path(relative).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return ReadStatus::kAbsent;
    return Failed(why, std::strerror(errno));
  }
  // Attribute files are at most a page; AER files are the longest we read.
  std::array<char, 4096> buffer{};
  out->clear();
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return Failed(why, std::strerror(error));
    }
    if (n == 0) break;
    out->append(buffer.data(), static_cast<std::size_t>(n));
    if (out->size() > 64 * 1024) break;  // not an attribute file: stop reading
  }
  ::close(fd);
  return ReadStatus::kOk;
}

ReadStatus SysfsTree::ReadU64(std::string_view relative, std::uint64_t* out,
                              std::string* why) const {
  std::string text;
  const ReadStatus status = ReadText(relative, &text, why);
  if (status != ReadStatus::kOk) return status;
  return ParseU64(text, out) ? ReadStatus::kOk : Failed(why, "not a decimal number");
}

ReadStatus SysfsTree::ReadLeadingU32(std::string_view relative, std::uint32_t* out,
                                     std::string* why) const {
  std::string text;
  const ReadStatus status = ReadText(relative, &text, why);
  if (status != ReadStatus::kOk) return status;
  return ParseLeadingU32(text, out) ? ReadStatus::kOk : Failed(why, "no leading number");
}

bool SysfsTree::IsDirectory(std::string_view relative) const {
  struct stat st {};
  return ::stat(Path(relative).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool ParseU64(std::string_view text, std::uint64_t* out) {
  text = Trim(text);
  std::string_view rest;
  return LeadingDigits(text, out, &rest) && rest.empty();
}

bool ParseLeadingU32(std::string_view text, std::uint32_t* out) {
  std::uint64_t value = 0;
  std::string_view rest;
  if (!LeadingDigits(Trim(text), &value, &rest) || value > UINT32_MAX) return false;
  *out = static_cast<std::uint32_t>(value);
  return true;
}

bool ParsePcieSpeedMts(std::string_view text, std::uint32_t* out) {
  text = Trim(text);
  if (text.starts_with("Unknown")) {
    *out = 0;
    return true;
  }
  double gts = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), gts);
  if (ec != std::errc() || gts < 0 || gts > 1e6) return false;
  const std::string_view unit = Trim(text.substr(static_cast<std::size_t>(end - text.data())));
  if (!unit.starts_with("GT/s")) return false;
  *out = static_cast<std::uint32_t>(std::lround(gts * 1000));
  return true;
}

}  // namespace hostmesh::agent::telemetry
