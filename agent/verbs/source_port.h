#pragma once

// How a device picks the RoCEv2 UDP source port of a UD send, and so how the
// agent rotates ports on it.
//
// kFlowLabel: from the address handle's GRH flow label (flow_label.h); one QP
// sends from any port. Hardware RNICs are expected to do this; verify on the
// wire per vendor and firmware.
// kPerQp: fixed per QP, whatever the flow label. Soft-RoCE (rdma_rxe, kernel
// 6.1) sets it at QP creation to 0xC000 + hash_32(qpn, 14) and moves it only
// for a connected QP given an address vector; seen on the wire in the rxe
// harness (deploy/testbed/rxe): every UD probe of QPN 0x11 left from 57236,
// which is that formula. There the agent sends each port from its own QP.

#include <cstdint>
#include <string_view>

namespace hostmesh::agent::verbs {

enum class SourcePortMode : std::uint8_t { kFlowLabel, kPerQp };
std::string_view SourcePortModeName(SourcePortMode mode);

// rdma_rxe's vendor id (RXE_VENDOR_ID in the kernel), what ibv_query_device shows.
inline constexpr std::uint32_t kRxeVendorId = 0xFFFFFF;

SourcePortMode SourcePortModeForVendor(std::uint32_t vendor_id);

// The kernel's hash_32(value, bits): the golden-ratio multiply, top bits.
constexpr std::uint32_t Hash32(std::uint32_t value, unsigned bits) {
  return static_cast<std::uint32_t>(value * 0x61C88647u) >> (32 - bits);
}

// The source port rdma_rxe gives a QP (rxe_qp.c: RXE_ROCE_V2_SPORT + hash).
constexpr std::uint16_t RxeQpSourcePort(std::uint32_t qpn) {
  return static_cast<std::uint16_t>(0xC000u + (Hash32(qpn, 14) & 0x3FFFu));
}

}  // namespace hostmesh::agent::verbs
