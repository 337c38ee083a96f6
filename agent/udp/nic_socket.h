#pragma once

// Creating the transport's sockets: UDP, non-blocking, bound to one NIC's
// netdev (SO_BINDTODEVICE) and address, with SO_TIMESTAMPING. Bound to the
// device as well as the address because every NIC of a host is local to it:
// without the device a probe to a sibling NIC would short-cut through lo
// instead of leaving through the sending NIC (DESIGN 4.3).

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/base/unique_fd.h"
#include "common/config/value_types.h"

namespace hostmesh::agent::udp {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

SocketAddress MakeSocketAddress(const config::IpAddress& ip, std::uint16_t port);
std::string AddressText(const config::IpAddress& ip);

enum class TimestampMode : std::uint8_t {
  kSoftware,  // kernel stamps: driver hand-off (TX), netif receive (RX), CLOCK_REALTIME
  kHardware,  // NIC stamps (the PHC must be kept on CLOCK_REALTIME, e.g. by phc2sys)
};

// SO_TIMESTAMPING flags for the send sockets: one stamp per send (no
// TX_SCHED: a second stamp per packet would only be discarded), keyed by
// OPT_ID, without the packet echoed back (OPT_TSONLY).
std::uint32_t SendTimestampingFlags(TimestampMode mode);
// For the receive socket; software stamps are always asked for, so a packet
// the NIC did not stamp still gets a kernel one.
std::uint32_t ReceiveTimestampingFlags(TimestampMode mode);

struct SocketSpec {
  std::string netdev;
  SocketAddress local;
  std::uint32_t timestamping = 0;
  int ttl = -1;     // IP_TTL / IPV6_UNICAST_HOPS when >= 0
  int tclass = -1;  // IP_TOS / IPV6_TCLASS when >= 0
  // IP_RECVERR: ICMP errors for our sends are queued (and counted) rather
  // than lost or turned into a sticky error on the next send.
  bool recv_errors = false;
  // SO_REUSEADDR: lets the tracer bind the same (NIC IP, pool port) and trace
  // the probe's exact 5-tuple while the agent holds it.
  bool reuse_address = false;
  // Don't fragment, as RoCEv2 packets: DF set and no path-MTU state
  // (IP_PMTUDISC_PROBE), so a datagram larger than the device's MTU fails with
  // EMSGSIZE instead of leaving in pieces. DF also spares the kernel an IP id
  // per packet (a hashed, shared counter) on unconnected sockets.
  bool dont_fragment = false;
};

// A ready socket, or an invalid one with `error` naming the failed step and errno.
UniqueFd OpenBoundSocket(const SocketSpec& spec, std::string& error, int& error_number);

struct HardwareTimestamping {
  bool usable = false;
  std::string reason;  // why not, for the log
};

// Whether `netdev` gives hardware TX and RX stamps: the driver must advertise
// them (ETHTOOL_GET_TS_INFO) and have them switched on (SIOCGHWTSTAMP). When
// they are off and `enable` is set, tries SIOCSHWTSTAMP (needs CAP_NET_ADMIN;
// it changes the device for every user, which a PTP daemon also does).
// veth and lo advertise software stamps only.
HardwareTimestamping ProbeHardwareTimestamping(const std::string& netdev, bool enable);

}  // namespace hostmesh::agent::udp
