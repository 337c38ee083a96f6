#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace hostmesh::agent {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of iSCSI
// and SCTP: it catches every burst error up to 32 bits, which a bit-flipping
// link or a bad switch buffer produces. Every probe is checksummed twice (send
// and receive), so the CPU's CRC32 instruction is used where there is one
// (x86-64 SSE4.2, checked at run time); else a byte table.
// `crc` chains calls: Crc32c(b, Crc32c(a)) == Crc32c(a followed by b).
std::uint32_t Crc32c(std::span<const std::uint8_t> data, std::uint32_t crc = 0);

// The CRC of `data` as if its 4 bytes at `zero_offset` were zero (a
// checksum field in the data it covers), in one call. Requires
// zero_offset + 4 <= data.size().
std::uint32_t Crc32cZeroed(std::span<const std::uint8_t> data, std::size_t zero_offset);

// The table version alone, whatever the CPU: for tests that both agree.
std::uint32_t Crc32cTable(std::span<const std::uint8_t> data, std::uint32_t crc = 0);

}  // namespace hostmesh::agent
