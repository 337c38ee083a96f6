#pragma once

// The verbs transport's insides, shared by its source files
// (verbs_transport.cc: NICs, send and poll; verbs_address_handles.cc: the
// address-handle builder; verbs_nic_health.cc: clock fits, async events, QP
// recovery and reopening). Included by nothing else.

#include <arpa/inet.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/verbs/address_handle_book.h"
#include "agent/verbs/device_async_events.h"
#include "agent/verbs/queue_sizing.h"
#include "agent/verbs/source_port.h"
#include "agent/verbs/verbs_transport.h"
#include "common/base/logging.h"

namespace hostmesh::agent::verbs {

namespace transport_internal {

// UD receives start with the 40-byte GRH (or the IPv4 header padded to it).
constexpr std::uint32_t kGrhBytes = 40;
// wr_id = kind << 32 | slot, so a completion names its buffer and direction.
constexpr std::uint64_t kRecvKind = 1;
constexpr std::uint64_t kSendKind = 2;
// epoll data of the wake-up eventfd; NIC channels carry their NicId, NIC
// async fds their NicId with kAsyncTag set.
constexpr std::uint32_t kWakeTag = 0xFFFFFFFF;
constexpr std::uint32_t kAsyncTag = 0x80000000;

inline std::uint64_t WrId(std::uint64_t kind, std::uint32_t slot) {
  return kind << 32 | slot;
}
inline std::int64_t Ns(WallTime t) {
  return t.time_since_epoch().count();
}

inline std::string GidText(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, text, sizeof(text));
  return text;
}

inline std::uint32_t MtuBytes(ibv_mtu mtu) {
  return 128u << static_cast<unsigned>(mtu);
}

inline std::shared_ptr<spdlog::logger> Log() {
  return GetLogger("verbs");
}

}  // namespace transport_internal

struct VerbsTransport::RealVerbsTraits {
  using Context = UniqueContext;
  using CompChannel = UniqueCompChannel;
  using Pd = UniquePd;
  using Buffer = std::vector<std::uint8_t>;
  using Mr = UniqueMr;
  using Cq = CompletionQueue;
  using Qp = UniqueQp;
  using AhCache = BasicAddressHandleBook<UniqueAh>;
};

// A job of the address-handle builder thread: everything ibv_create_ah
// needs, copied, plus what tells whether its NIC is still the same.
struct VerbsTransport::AhJob {
  NicId src = 0;
  std::uint64_t generation = 0;  // Nic::generation when submitted
  AddressHandleKey key;
  ibv_pd* pd = nullptr;  // the NIC's; Reopen forgets its jobs before freeing it
  ibv_ah_attr attr{};
};
struct VerbsTransport::AhBuilt {
  NicId src = 0;
  std::uint64_t generation = 0;
  AddressHandleKey key;
  UniqueAh ah;
  int error = 0;
};

struct VerbsTransport::Nic {
  struct SendSlot {
    std::uint64_t sequence = 0;
    AddressHandleKey key;
    std::uint32_t qp = 0;  // index (QpAt) of the QP it was posted on
    bool busy = false;     // posted, completion not seen yet
  };

  NicId id = 0;
  std::uint64_t generation = 0;  // one per Build: a reopened NIC is a new one
  VerbsNicOptions config;
  BasicNicResources<RealVerbsTraits> res;
  ibv_gid gid{};
  std::uint32_t qpn = 0;
  std::uint32_t max_payload = 0;
  std::uint32_t recv_slot_bytes = 0;
  std::uint32_t recv_slots = 0;
  ReceiveQueueLevel recv_level;  // posted receives of res.qp (queue_sizing.h)
  std::vector<SendSlot> send_slots;
  std::vector<std::uint32_t> free_send_slots;
  std::optional<ClockFit> clock;  // when CQEs carry raw ticks
  std::chrono::nanoseconds sample_period{};
  MonoTime next_sample{};
  bool warned_sample_error = false;
  SourcePortMode port_mode = SourcePortMode::kFlowLabel;
  // kPerQp: the send QPs (after `res`, so they go before its CQ) and, sorted
  // by port, the index (QpAt) of the QP that sends from each port.
  std::vector<UniqueQp> send_qps;
  std::vector<std::pair<std::uint16_t, std::uint32_t>> qp_for_port;
  // Async events and QP recovery; QP index 0 is res.qp, i > 0 send_qps[i - 1].
  // Points into VerbsTransport::health_, which outlives a reopen.
  NicHealth* health = nullptr;
  std::optional<DeviceAsyncEvents> async_events;  // of res.context, from WatchFds on
  bool port_active_at_open = false;

  ibv_qp* QpAt(std::uint32_t index) const {
    return index == 0 ? res.qp.get() : send_qps[index - 1].get();
  }
  std::optional<std::uint32_t> QpIndex(std::uint32_t qp_num) const {
    if (qp_num == res.qp.get()->qp_num) return 0;
    for (std::size_t i = 0; i < send_qps.size(); ++i) {
      if (send_qps[i].get()->qp_num == qp_num) return static_cast<std::uint32_t>(i + 1);
    }
    return std::nullopt;
  }
  // The QP index that sends from `port`; nullopt when no QP can.
  // The ports the agent said this NIC will send from (PrepareSourcePorts).
  std::vector<std::uint16_t> prepared_ports;
  bool warned_ah_error = false;

  std::optional<std::uint32_t> SendQp(std::uint16_t port) const {
    if (port_mode == SourcePortMode::kFlowLabel) return 0;
    auto it = std::lower_bound(qp_for_port.begin(), qp_for_port.end(),
                               std::pair<std::uint16_t, std::uint32_t>{port, 0});
    if (it == qp_for_port.end() || it->first != port) return std::nullopt;
    return it->second;
  }

  std::uint8_t* recv_slot(std::uint32_t slot) {
    return res.buffer.data() + std::size_t{slot} * recv_slot_bytes;
  }
  std::uint8_t* send_slot(std::uint32_t slot) {
    return res.buffer.data() + std::size_t{recv_slots} * recv_slot_bytes +
           std::size_t{slot} * max_payload;
  }
};

}  // namespace hostmesh::agent::verbs
