#pragma once

// What the verbs transport tells whoever keeps a record of its NICs' trouble
// (the agent's flight recorder): RDMA async events, QP recoveries, device
// reopens and NIC clock-fit errors, as they happen. Plain data through a
// std::function, so the module boundary (agent/main/verbs_plugin.h) carries
// no recorder type.

#include <cstdint>
#include <functional>
#include <string>

namespace hostmesh::agent::verbs {

struct NicEventNote {
  enum class Kind : std::uint8_t { kAsyncEvent, kQpRecovery, kReopen, kClockFit };
  Kind kind = Kind::kAsyncEvent;
  std::uint32_t nic = 0;
  std::int64_t value = 0;     // the QP index (QP events, recoveries), else 0
  std::int64_t value_ns = 0;  // clock fit: the fit's error bound
  bool failed = false;        // a recovery or reopen that failed
  std::string text;           // the event's name, or what went wrong
};

// Called on the transport's thread; must not block or call back into it.
using NicEventSink = std::function<void(const NicEventNote&)>;

}  // namespace hostmesh::agent::verbs
