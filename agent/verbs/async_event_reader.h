#pragma once

// The reader of one RNIC's RDMA async events, apart from libibverbs' fd: a
// source hands out the events (the device's async fd in production,
// DeviceAsyncEvents in verbs_nic_health.cc; a queue in unit tests), and the
// reader decides what each means for this NIC and feeds NicHealth
// (nic_health.h), logging what it means for probing. A port event of another
// port of the device is not the NIC's business; a QP event names its QP by
// the transport's index, or by none when the QP is not the NIC's.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "agent/verbs/nic_health.h"
#include "common/base/clock.h"

namespace hostmesh::agent::verbs {

// One event as ibv_get_async_event gives it, with its element by number.
struct AsyncEvent {
  int type = 0;              // ibv_event_type
  std::uint32_t qp_num = 0;  // QP events: the QP's number
  std::uint8_t port = 0;     // port events: the port's number
};

class AsyncEventSource {
 public:
  virtual ~AsyncEventSource() = default;
  // The next pending event (acknowledged), or nullopt when none is pending;
  // a failed read also returns nullopt, with the reason in *error.
  virtual std::optional<AsyncEvent> Next(std::string* error) = 0;
};

// What the reader needs to know of the NIC the source belongs to.
struct AsyncEventScope {
  std::string_view nic_name;  // for logs
  std::uint8_t port = 1;      // the device port the NIC uses
  // The transport's index of a QP of this NIC (0: its receive QP), by number.
  std::function<std::optional<std::uint32_t>(std::uint32_t qp_num)> qp_index;
  // Told of each event with its name (may be empty): the flight recorder.
  std::function<void(std::string_view name, AsyncEventKind kind, std::optional<std::uint32_t> qp)>
      on_event;
};

// True when events of this type carry a QP (the others carry a port, a CQ,
// an SRQ or nothing).
bool IsQpEvent(int event_type);
bool IsPortEvent(int event_type);

// Reads every pending event into `health`. Returns the read failures (0 or
// 1: reading stops at the first), each logged at warn.
std::size_t DrainAsyncEvents(AsyncEventSource& source, const AsyncEventScope& scope,
                             NicHealth& health, MonoTime now);

}  // namespace hostmesh::agent::verbs
