#include "agent/verbs/device_async_events.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

namespace hostmesh::agent::verbs {

std::optional<AsyncEvent> DeviceAsyncEvents::Next(std::string* error) {
  if (!injected_.empty()) {
    const AsyncEvent event = injected_.front();
    injected_.pop_front();
    return event;
  }
  ibv_async_event raw{};
  if (ibv_get_async_event(context_, &raw) != 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      *error = std::string("ibv_get_async_event: ") + std::strerror(errno);
    }
    return std::nullopt;
  }
  AsyncEvent event{.type = raw.event_type};
  if (IsQpEvent(raw.event_type)) event.qp_num = raw.element.qp->qp_num;
  if (IsPortEvent(raw.event_type)) event.port = static_cast<std::uint8_t>(raw.element.port_num);
  ibv_ack_async_event(&raw);
  return event;
}

}  // namespace hostmesh::agent::verbs
