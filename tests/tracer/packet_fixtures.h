#pragma once

// Real packets, as a raw IPPROTO_ICMP (or IPPROTO_UDP) socket in host h000's
// namespace of a `fabric up --hosts 4 --rails 4 --spines 4 --icmp-unlimited`
// delivered them (outer IPv4 header first). The probes were UDP from
// 198.18.0.1 (h000 nic0) to 198.18.0.9:4791 (h000 nic1) carrying the tracer's
// tag (probe_tag.h) with session 0x5EED0001, sent with SO_BINDTODEVICE nic0.
// Path of sport 49152: p0r0 (198.18.0.0), s00 (198.19.0.1), p0r1 (198.19.0.8).

#include <cstdint>
#include <string_view>
#include <vector>

namespace hostmesh::tracer::fixtures {

inline constexpr std::uint32_t kSession = 0x5EED0001;

// Time Exceeded from the first rail switch, ttl 1, generation 0.
inline constexpr std::string_view kTimeExceededTtl1 =
    "45c00048a29b000040014b34c6120000c61200010b009949000000004500002c7792400001117600c6120001c61200"
    "09c00012b700188c58484d545201000000000000005eed0001";
// Time Exceeded from spine s00, ttl 2, generation 0.
inline constexpr std::string_view kTimeExceededTtl2 =
    "45c00049981800003f0156b4c6130001c61200010b009847000000004500002d77c14000011175d0c6120001c61200"
    "09c00012b700198c59484d545202000000000000005eed000100";
// Time Exceeded from the destination's rail switch p0r1, ttl 3, generation 0.
inline constexpr std::string_view kTimeExceededTtl3 =
    "45c0004a36f900003e01b8cbc6130008c61200010b009745000000004500002e77d94000011175b7c6120001c61200"
    "09c00012b7001a8c5a484d545203000000000000005eed00010000";
// Port Unreachable from the destination NIC, ttl 4, generation 0.
inline constexpr std::string_view kPortUnreachableTtl4 =
    "45c0004b71a100003d017f22c6120009c612000103039e40000000004500002f781c400001117573c6120001c61200"
    "09c00012b7001b8c5b484d545204000000000000005eed0001000000";
// Time Exceeded for another 5-tuple (sport 49153), ttl 2.
inline constexpr std::string_view kTimeExceededSport49153 =
    "45c00049986300003f015669c6130001c61200010b009846000000004500002d7828400001117569c6120001c61200"
    "09c00112b700198c59484d545202000000000000005eed000100";
// Time Exceeded for sport 49152, ttl 3, generation 1 (UDP length 58).
inline constexpr std::string_view kTimeExceededGen1Ttl3 =
    "45c0006a373100003e01b873c6130008c61200010b009704000000004500004e784c400001117524c6120001c61200"
    "09c00012b7003a8c7a484d545203000000000000015eed000100000000000000000000000000000000000000000000"
    "000000000000000000000000";
// Network Unreachable (type 3 code 0) from spine s00 for a probe to 198.18.200.1, ttl 5.
inline constexpr std::string_view kNetUnreachable =
    "45c0004c9c8c00003f01523dc6130001c61200010300d54800000000450000304e1f40000411d476c6120001c612c8"
    "01c00012b7001c5455484d545205000000000000005eed000100000000";
// traceroute -U -p 4791 --sport=49152 (not ours: its payload has no tag), ttl 1.
inline constexpr std::string_view kTracerouteTtl1 =
    "45c000581eaa00004001cf15c6120000c61200010b00a0b2000000004500003c335300000111fa2fc6120001c61200"
    "09c00012b700288c68404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f";
// The probe itself arriving at the destination (raw IPPROTO_UDP socket): not ICMP.
inline constexpr std::string_view kUdpProbe =
    "4500002f781c400001117573c6120001c6120009c00012b7001b8c5b484d545204000000000000005eed000100000"
    "0";
// ping's Echo Reply from the first rail switch: ICMP, but quotes nothing.
inline constexpr std::string_view kEchoReply =
    "45000054a40b000040014a78c6120000c61200010000c85f0e160001551e026b00000000102d030000000000101112"
    "131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637";

inline std::vector<std::uint8_t> Bytes(std::string_view hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    const auto nibble = [](char c) {
      return static_cast<std::uint8_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    };
    out.push_back(static_cast<std::uint8_t>((nibble(hex[i]) << 4) | nibble(hex[i + 1])));
  }
  return out;
}

}  // namespace hostmesh::tracer::fixtures
