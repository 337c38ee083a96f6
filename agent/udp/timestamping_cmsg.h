#pragma once

// Reading what the kernel attaches to a received datagram or an error-queue
// message: SCM_TIMESTAMPING stamps and the sock_extended_err that tells a TX
// timestamp (SO_EE_ORIGIN_TIMESTAMPING, key = OPT_ID counter) from an ICMP
// error (SO_EE_ORIGIN_ICMP/ICMP6) or a local error. Pure functions over a
// msghdr, so tests feed them hand-built control buffers.

#include <sys/socket.h>

#include <cstdint>

namespace hostmesh::agent::udp {

// The three timespecs of struct scm_timestamping, in ns (0 = absent).
struct ScmTimestamps {
  bool present = false;          // an SCM_TIMESTAMPING cmsg was there
  std::int64_t software_ns = 0;  // ts[0]: kernel software stamp, CLOCK_REALTIME
  std::int64_t hardware_ns = 0;  // ts[2]: raw NIC hardware stamp (PHC time)
};

// The stamps on a received datagram (recvmsg without MSG_ERRQUEUE).
ScmTimestamps ParseReceiveCmsgs(const msghdr& msg);

struct ErrQueueMessage {
  enum class Kind : std::uint8_t {
    kTxTimestamp,  // our send's timestamp; opt_id names the send
    kIcmpError,    // an ICMP error for something this socket sent
    kLocalError,   // a local error (e.g. EMSGSIZE) or another origin
    kMalformed,    // no sock_extended_err: not something we understand
  };
  Kind kind = Kind::kMalformed;
  std::uint32_t opt_id = 0;       // kTxTimestamp: ee_data, the socket's send counter
  std::uint32_t tstamp_type = 0;  // kTxTimestamp: ee_info, SCM_TSTAMP_SND / _SCHED / _ACK
  int error = 0;                  // ee_errno (ENOMSG for timestamps)
  std::uint8_t icmp_type = 0;     // kIcmpError
  std::uint8_t icmp_code = 0;     // kIcmpError
  ScmTimestamps stamps;
};

// One message read with recvmsg(MSG_ERRQUEUE).
ErrQueueMessage ParseErrQueueMessage(const msghdr& msg);

}  // namespace hostmesh::agent::udp
