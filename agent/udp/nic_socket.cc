#include "agent/udp/nic_socket.h"

#include <arpa/inet.h>
#include <linux/ethtool.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

namespace hostmesh::agent::udp {
namespace {

bool SetInt(int fd, int level, int name, int value) {
  return ::setsockopt(fd, level, name, &value, sizeof(value)) == 0;
}

UniqueFd Fail(std::string& error, int& error_number, const std::string& step) {
  error_number = errno;
  error = step + ": " + std::strerror(error_number);
  return UniqueFd{};
}

bool FillIfreq(ifreq& ifr, const std::string& netdev) {
  if (netdev.empty() || netdev.size() >= IFNAMSIZ) return false;
  std::memcpy(ifr.ifr_name, netdev.c_str(), netdev.size() + 1);
  return true;
}

}  // namespace

SocketAddress MakeSocketAddress(const config::IpAddress& ip, std::uint16_t port) {
  SocketAddress out;
  if (ip.is_v4()) {
    auto* in = reinterpret_cast<sockaddr_in*>(&out.storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    std::memcpy(&in->sin_addr, ip.bytes.data(), 4);
    out.length = sizeof(sockaddr_in);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&out.storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    std::memcpy(&in6->sin6_addr, ip.bytes.data(), 16);
    out.length = sizeof(sockaddr_in6);
  }
  return out;
}

std::string AddressText(const config::IpAddress& ip) {
  char text[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(ip.is_v4() ? AF_INET : AF_INET6, ip.bytes.data(), text, sizeof(text));
  return text;
}

std::uint32_t SendTimestampingFlags(TimestampMode mode) {
  const std::uint32_t common = SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
  return mode == TimestampMode::kHardware
             ? common | SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE
             : common | SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
}

std::uint32_t ReceiveTimestampingFlags(TimestampMode mode) {
  const std::uint32_t software = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
  return mode == TimestampMode::kHardware
             ? software | SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE
             : software;
}

UniqueFd OpenBoundSocket(const SocketSpec& spec, std::string& error, int& error_number) {
  const int family = spec.local.family();
  UniqueFd fd(::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP));
  if (!fd.valid()) return Fail(error, error_number, "socket");
  if (!spec.netdev.empty() &&
      ::setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, spec.netdev.c_str(),
                   static_cast<socklen_t>(spec.netdev.size())) != 0) {
    return Fail(error, error_number, "SO_BINDTODEVICE " + spec.netdev);
  }
  const bool v4 = family == AF_INET;
  if (spec.ttl >= 0 && !SetInt(fd.get(), v4 ? IPPROTO_IP : IPPROTO_IPV6,
                               v4 ? IP_TTL : IPV6_UNICAST_HOPS, spec.ttl)) {
    return Fail(error, error_number, "IP_TTL");
  }
  if (spec.tclass >= 0 &&
      !SetInt(fd.get(), v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_TOS : IPV6_TCLASS, spec.tclass)) {
    return Fail(error, error_number, "IP_TOS");
  }
  if (spec.recv_errors &&
      !SetInt(fd.get(), v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_RECVERR : IPV6_RECVERR, 1)) {
    return Fail(error, error_number, "IP_RECVERR");
  }
  if (spec.timestamping != 0 &&
      !SetInt(fd.get(), SOL_SOCKET, SO_TIMESTAMPING, static_cast<int>(spec.timestamping))) {
    return Fail(error, error_number, "SO_TIMESTAMPING");
  }
  if (spec.reuse_address && !SetInt(fd.get(), SOL_SOCKET, SO_REUSEADDR, 1)) {
    return Fail(error, error_number, "SO_REUSEADDR");
  }
  if (spec.dont_fragment &&
      !SetInt(fd.get(), v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_MTU_DISCOVER : IPV6_MTU_DISCOVER,
              v4 ? IP_PMTUDISC_PROBE : IPV6_PMTUDISC_PROBE)) {
    return Fail(error, error_number, "IP_MTU_DISCOVER");
  }
  if (::bind(fd.get(), spec.local.get(), spec.local.length) != 0) {
    return Fail(error, error_number, "bind");
  }
  return fd;
}

HardwareTimestamping ProbeHardwareTimestamping(const std::string& netdev, bool enable) {
  HardwareTimestamping out;
  ifreq ifr{};
  if (!FillIfreq(ifr, netdev)) {
    out.reason = "no usable netdev name";
    return out;
  }
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    out.reason = std::string("socket: ") + std::strerror(errno);
    return out;
  }
  ethtool_ts_info info{};
  info.cmd = ETHTOOL_GET_TS_INFO;
  ifr.ifr_data = reinterpret_cast<char*>(&info);
  if (::ioctl(fd.get(), SIOCETHTOOL, &ifr) != 0) {
    out.reason = std::string("ETHTOOL_GET_TS_INFO: ") + std::strerror(errno);
    return out;
  }
  const std::uint32_t needed =
      SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE;
  if ((info.so_timestamping & needed) != needed) {
    out.reason = "device has no hardware TX/RX timestamps";
    return out;
  }
  hwtstamp_config config{};
  ifr.ifr_data = reinterpret_cast<char*>(&config);
  if (::ioctl(fd.get(), SIOCGHWTSTAMP, &ifr) != 0) {
    out.reason = std::string("SIOCGHWTSTAMP: ") + std::strerror(errno);
    return out;
  }
  // Any RX filter but NONE could miss our UDP packets; only ALL is sure.
  if (config.tx_type == HWTSTAMP_TX_ON && config.rx_filter == HWTSTAMP_FILTER_ALL) {
    out.usable = true;
    return out;
  }
  if (!enable) {
    out.reason = "hardware timestamping is switched off on the device";
    return out;
  }
  config = hwtstamp_config{};
  config.tx_type = HWTSTAMP_TX_ON;
  config.rx_filter = HWTSTAMP_FILTER_ALL;
  if (::ioctl(fd.get(), SIOCSHWTSTAMP, &ifr) != 0) {
    out.reason = std::string("SIOCSHWTSTAMP: ") + std::strerror(errno);
    return out;
  }
  if (config.tx_type != HWTSTAMP_TX_ON || config.rx_filter != HWTSTAMP_FILTER_ALL) {
    out.reason = "device refused to stamp every received packet";
    return out;
  }
  out.usable = true;
  return out;
}

}  // namespace hostmesh::agent::udp
