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
  return std::to_string(value >> 24) + "." + std::to_string((value >> 16) & 0xFF) + "." +
         std::to_string((value >> 8) & 0xFF) + "." + std::to_string(value & 0xFF);
}

std::string FiveTuple::ToString() const {
  return src.ToString() + ":" + std::to_string(sport) + " -> " + dst.ToString() + ":" +
         std::to_string(dport) +
         (protocol == kIpProtoUdp ? " udp" : " proto " + std::to_string(protocol));
}

}  // namespace hostmesh::tracer
