#pragma once

#include <cstdint>
#include <span>

namespace hostmesh::agent {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of iSCSI
// and SCTP: it catches every burst error up to 32 bits, which a bit-flipping
// link or a bad switch buffer produces. Software table; probes are 50 bytes.
// `crc` chains calls: Crc32c(b, Crc32c(a)) == Crc32c(a followed by b).
std::uint32_t Crc32c(std::span<const std::uint8_t> data, std::uint32_t crc = 0);

}  // namespace hostmesh::agent
