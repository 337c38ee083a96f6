#include "tracer/ipv4.h"

namespace hostmesh::tracer {

std::string FiveTuple::ToString() const {
  return src.ToString() + ":" + std::to_string(sport) + " -> " + dst.ToString() + ":" +
         std::to_string(dport) +
         (protocol == kIpProtoUdp ? " udp" : " proto " + std::to_string(protocol));
}

}  // namespace hostmesh::tracer
