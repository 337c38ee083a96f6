#include "common/base/names.h"

namespace hostmesh {

std::optional<std::string> CheckName(std::string_view value, std::size_t max_bytes) {
  constexpr std::size_t kQuoted = 64;
  const auto quoted = [&] {
    std::string q = "\"";
    for (char c : value.substr(0, kQuoted)) q += (c >= ' ' && c < '\x7f') ? c : '?';
    return q + (value.size() > kQuoted ? "...\"" : "\"");
  };
  if (value.empty()) return "must not be empty";
  if (value.size() > max_bytes) {
    return "must be at most " + std::to_string(max_bytes) + " characters, got " + quoted() + " (" +
           std::to_string(value.size()) + ")";
  }
  for (char c : value) {
    if (c <= ' ' || c >= '\x7f') {
      return "must be printable ASCII without spaces or control characters, got " + quoted();
    }
  }
  return std::nullopt;
}

}  // namespace hostmesh
