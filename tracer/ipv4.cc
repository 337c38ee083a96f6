#include "tracer/ipv4.h"

#include <arpa/inet.h>

namespace hostmesh::tracer {

std::optional<Ipv4> Ipv4::Parse(std::string_view text) {
  const std::string copy(text);
  in_addr addr{};
  if (::inet_pton(AF_INET, copy.c_str(), &addr) != 1) return std::nullopt;
  return Ipv4{ntohl(addr.s_addr)};
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

std::string FiveTuple::ToString() const {
  return src.ToString() + ":" + std::to_string(sport) + " -> " + dst.ToString() + ":" +
         std::to_string(dport) +
         (protocol == kIpProtoUdp ? " udp" : " proto " + std::to_string(protocol));
}

}  // namespace hostmesh::tracer
