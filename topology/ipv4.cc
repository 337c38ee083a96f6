#include "topology/ipv4.h"

namespace hostmesh::topology {

std::string Ipv4::ToString() const {
  std::string text;
  text.reserve(15);
  for (int shift = 24; shift >= 0; shift -= 8) {
    text += std::to_string((value >> shift) & 0xFFU);
    if (shift > 0) text += '.';
  }
  return text;
}

std::optional<Ipv4> ParseIpv4(std::string_view text) {
  std::uint32_t result = 0;
  size_t pos = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (pos >= text.size() || text[pos] != '.') return std::nullopt;
      ++pos;
    }
    const size_t start = pos;
    std::uint32_t octet = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 3) {
      octet = octet * 10 + static_cast<std::uint32_t>(text[pos] - '0');
      ++pos;
    }
    const size_t digits = pos - start;
    if (digits == 0 || octet > 255 || (digits > 1 && text[start] == '0')) return std::nullopt;
    result = (result << 8) | octet;
  }
  if (pos != text.size()) return std::nullopt;
  return Ipv4{result};
}

}  // namespace hostmesh::topology
