#include "agent/udp/timestamping_cmsg.h"

#include <linux/errqueue.h>
#include <netinet/in.h>

#include <cstring>

namespace hostmesh::agent::udp {
namespace {

std::int64_t Ns(const timespec& ts) {
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

bool IsRecvErr(const cmsghdr& c) {
  return (c.cmsg_level == SOL_IP && c.cmsg_type == IP_RECVERR) ||
         (c.cmsg_level == SOL_IPV6 && c.cmsg_type == IPV6_RECVERR);
}

// cmsg data is not guaranteed to be aligned for the struct: copy it out.
template <typename T>
bool CopyData(const cmsghdr& c, T& out) {
  if (c.cmsg_len < CMSG_LEN(sizeof(T))) return false;
  std::memcpy(&out, CMSG_DATA(&c), sizeof(T));
  return true;
}

void ReadTimestamps(const cmsghdr& c, ScmTimestamps& out) {
  scm_timestamping ts{};
  if (!CopyData(c, ts)) return;
  out.present = true;
  out.software_ns = Ns(ts.ts[0]);
  out.hardware_ns = Ns(ts.ts[2]);
}

bool IsTimestamping(const cmsghdr& c) {
  return c.cmsg_level == SOL_SOCKET && c.cmsg_type == SCM_TIMESTAMPING;
}

}  // namespace

ScmTimestamps ParseReceiveCmsgs(const msghdr& msg) {
  ScmTimestamps out;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr;
       c = CMSG_NXTHDR(const_cast<msghdr*>(&msg), c)) {
    if (IsTimestamping(*c)) ReadTimestamps(*c, out);
  }
  return out;
}

ErrQueueMessage ParseErrQueueMessage(const msghdr& msg) {
  ErrQueueMessage out;
  bool have_err = false;
  sock_extended_err err{};
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr;
       c = CMSG_NXTHDR(const_cast<msghdr*>(&msg), c)) {
    if (IsTimestamping(*c)) {
      ReadTimestamps(*c, out.stamps);
    } else if (IsRecvErr(*c) && CopyData(*c, err)) {
      have_err = true;
    }
  }
  if (!have_err) return out;
  out.error = static_cast<int>(err.ee_errno);
  switch (err.ee_origin) {
    case SO_EE_ORIGIN_TIMESTAMPING:
      // A TX stamp with no stamp in it is of no use to anyone: treat it as noise.
      out.kind = out.stamps.present ? ErrQueueMessage::Kind::kTxTimestamp
                                    : ErrQueueMessage::Kind::kMalformed;
      out.opt_id = err.ee_data;
      out.tstamp_type = err.ee_info;
      break;
    case SO_EE_ORIGIN_ICMP:
    case SO_EE_ORIGIN_ICMP6:
      out.kind = ErrQueueMessage::Kind::kIcmpError;
      out.icmp_type = err.ee_type;
      out.icmp_code = err.ee_code;
      break;
    default:
      out.kind = ErrQueueMessage::Kind::kLocalError;
      break;
  }
  return out;
}

}  // namespace hostmesh::agent::udp
