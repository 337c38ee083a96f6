#include "common/net/ipv4.h"

namespace hostmesh::net {

std::optional<Ipv4> Ipv4::Parse(std::string_view text) {
  std::uint32_t result = 0;
  std::size_t pos = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (pos >= text.size() || text[pos] != '.') return std::nullopt;
      ++pos;
    }
    const std::size_t start = pos;
    std::uint32_t octet = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 3) {
      octet = octet * 10 + static_cast<std::uint32_t>(text[pos] - '0');
      ++pos;
    }
    const std::size_t digits = pos - start;
    if (digits == 0 || octet > 255 || (digits > 1 && text[start] == '0')) return std::nullopt;
    result = (result << 8) | octet;
  }
  if (pos != text.size()) return std::nullopt;
  return Ipv4{result};
}

std::string Ipv4::ToString() const {
  // By hand into one buffer: every hop of every path report is formatted.
  char buf[16];
  char* p = buf;
  for (int shift = 24; shift >= 0; shift -= 8) {
    const unsigned octet = (value >> shift) & 0xFF;
    if (octet >= 100) *p++ = static_cast<char>('0' + octet / 100);
    if (octet >= 10) *p++ = static_cast<char>('0' + octet / 10 % 10);
    *p++ = static_cast<char>('0' + octet % 10);
    if (shift > 0) *p++ = '.';
  }
  return std::string(buf, p);
}

}  // namespace hostmesh::net
