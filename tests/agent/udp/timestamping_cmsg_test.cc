// Fixtures: control buffers laid out as the kernel writes them for a TX
// timestamp, an ICMP error and a received datagram.
#include "agent/udp/timestamping_cmsg.h"

#include <gtest/gtest.h>
#include <linux/errqueue.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace hostmesh::agent::udp {
namespace {

class ControlBuffer {
 public:
  template <typename T>
  ControlBuffer& Add(int level, int type, const T& value, std::size_t len = sizeof(T)) {
    const std::size_t offset = bytes_.size();
    bytes_.resize(offset + CMSG_SPACE(sizeof(T)));
    cmsghdr header{};
    header.cmsg_level = level;
    header.cmsg_type = type;
    header.cmsg_len = CMSG_LEN(len);
    std::memcpy(bytes_.data() + offset, &header, sizeof(header));
    std::memcpy(bytes_.data() + offset + CMSG_LEN(0), &value, sizeof(T));
    return *this;
  }
  msghdr Msg() {
    msghdr msg{};
    msg.msg_control = bytes_.empty() ? nullptr : bytes_.data();
    msg.msg_controllen = bytes_.size();
    return msg;
  }

 private:
  std::vector<unsigned char> bytes_;
};

scm_timestamping Stamps(long sw_sec, long sw_nsec, long hw_sec = 0, long hw_nsec = 0) {
  scm_timestamping ts{};
  ts.ts[0] = {sw_sec, sw_nsec};
  ts.ts[2] = {hw_sec, hw_nsec};
  return ts;
}

sock_extended_err TxStampErr(std::uint32_t id, std::uint32_t type = SCM_TSTAMP_SND) {
  sock_extended_err err{};
  err.ee_errno = ENOMSG;
  err.ee_origin = SO_EE_ORIGIN_TIMESTAMPING;
  err.ee_info = type;
  err.ee_data = id;
  return err;
}

TEST(ErrQueueMessage, SoftwareTxStampWithItsOptId) {
  ControlBuffer buffer;
  buffer.Add(SOL_SOCKET, SCM_TIMESTAMPING, Stamps(1'700'000'000, 123))
      .Add(SOL_IP, IP_RECVERR, TxStampErr(41));
  const ErrQueueMessage m = ParseErrQueueMessage(buffer.Msg());
  EXPECT_EQ(m.kind, ErrQueueMessage::Kind::kTxTimestamp);
  EXPECT_EQ(m.opt_id, 41U);
  EXPECT_EQ(m.tstamp_type, static_cast<std::uint32_t>(SCM_TSTAMP_SND));
  EXPECT_EQ(m.error, ENOMSG);
  EXPECT_TRUE(m.stamps.present);
  EXPECT_EQ(m.stamps.software_ns, 1'700'000'000'000'000'123);
  EXPECT_EQ(m.stamps.hardware_ns, 0);
}

TEST(ErrQueueMessage, HardwareTxStampOverIpv6AndSchedType) {
  ControlBuffer buffer;
  buffer.Add(SOL_SOCKET, SCM_TIMESTAMPING, Stamps(0, 0, 5, 6))
      .Add(SOL_IPV6, IPV6_RECVERR, TxStampErr(0xFFFF'FFFFU, SCM_TSTAMP_SCHED));
  const ErrQueueMessage m = ParseErrQueueMessage(buffer.Msg());
  EXPECT_EQ(m.kind, ErrQueueMessage::Kind::kTxTimestamp);
  EXPECT_EQ(m.opt_id, 0xFFFF'FFFFU);
  EXPECT_EQ(m.tstamp_type, static_cast<std::uint32_t>(SCM_TSTAMP_SCHED));
  EXPECT_EQ(m.stamps.hardware_ns, 5'000'000'006);
}

TEST(ErrQueueMessage, IcmpPortUnreachableIsNotATimestamp) {
  sock_extended_err err{};
  err.ee_errno = ECONNREFUSED;
  err.ee_origin = SO_EE_ORIGIN_ICMP;
  err.ee_type = 3;
  err.ee_code = 3;
  err.ee_data = 99;  // would look like an OPT_ID
  ControlBuffer buffer;
  buffer.Add(SOL_IP, IP_RECVERR, err);
  const ErrQueueMessage m = ParseErrQueueMessage(buffer.Msg());
  EXPECT_EQ(m.kind, ErrQueueMessage::Kind::kIcmpError);
  EXPECT_EQ(m.error, ECONNREFUSED);
  EXPECT_EQ(m.icmp_type, 3);
  EXPECT_EQ(m.icmp_code, 3);
}

TEST(ErrQueueMessage, Icmp6AndLocalErrors) {
  sock_extended_err err{};
  err.ee_origin = SO_EE_ORIGIN_ICMP6;
  err.ee_type = 1;
  ControlBuffer v6;
  v6.Add(SOL_IPV6, IPV6_RECVERR, err);
  EXPECT_EQ(ParseErrQueueMessage(v6.Msg()).kind, ErrQueueMessage::Kind::kIcmpError);

  err.ee_origin = SO_EE_ORIGIN_LOCAL;
  err.ee_errno = EMSGSIZE;
  ControlBuffer local;
  local.Add(SOL_IP, IP_RECVERR, err);
  const ErrQueueMessage m = ParseErrQueueMessage(local.Msg());
  EXPECT_EQ(m.kind, ErrQueueMessage::Kind::kLocalError);
  EXPECT_EQ(m.error, EMSGSIZE);
}

TEST(ErrQueueMessage, MalformedWhenSomethingIsMissing) {
  ControlBuffer empty;
  EXPECT_EQ(ParseErrQueueMessage(empty.Msg()).kind, ErrQueueMessage::Kind::kMalformed);

  ControlBuffer stamp_only;  // no sock_extended_err: no id to match
  stamp_only.Add(SOL_SOCKET, SCM_TIMESTAMPING, Stamps(1, 2));
  EXPECT_EQ(ParseErrQueueMessage(stamp_only.Msg()).kind, ErrQueueMessage::Kind::kMalformed);

  ControlBuffer err_only;  // timestamping origin but no stamp
  err_only.Add(SOL_IP, IP_RECVERR, TxStampErr(3));
  EXPECT_EQ(ParseErrQueueMessage(err_only.Msg()).kind, ErrQueueMessage::Kind::kMalformed);

  ControlBuffer short_err;  // cmsg_len too small for the struct: not read
  short_err.Add(SOL_SOCKET, SCM_TIMESTAMPING, Stamps(1, 2))
      .Add(SOL_IP, IP_RECVERR, TxStampErr(3), 4);
  EXPECT_EQ(ParseErrQueueMessage(short_err.Msg()).kind, ErrQueueMessage::Kind::kMalformed);
}

TEST(ReceiveCmsgs, SoftwareAndHardwareStamps) {
  ControlBuffer buffer;
  int ttl = 61;
  buffer.Add(SOL_IP, IP_TTL, ttl).Add(SOL_SOCKET, SCM_TIMESTAMPING, Stamps(2, 3, 4, 5));
  const ScmTimestamps ts = ParseReceiveCmsgs(buffer.Msg());
  EXPECT_TRUE(ts.present);
  EXPECT_EQ(ts.software_ns, 2'000'000'003);
  EXPECT_EQ(ts.hardware_ns, 4'000'000'005);
}

TEST(ReceiveCmsgs, NoStampAndTruncatedStamp) {
  ControlBuffer none;
  EXPECT_FALSE(ParseReceiveCmsgs(none.Msg()).present);
  ControlBuffer truncated;
  truncated.Add(SOL_SOCKET, SCM_TIMESTAMPING, Stamps(2, 3), sizeof(timespec));
  EXPECT_FALSE(ParseReceiveCmsgs(truncated.Msg()).present);
}

}  // namespace
}  // namespace hostmesh::agent::udp
