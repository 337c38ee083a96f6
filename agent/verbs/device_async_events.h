#pragma once

// A device's async events as an AsyncEventSource (async_event_reader.h):
// ibv_get_async_event on the context's non-blocking async fd, each event
// acknowledged as soon as it is copied. Inject queues an event ahead of the
// device's: the agent's debug hook (rxe cannot raise DEVICE_FATAL while a
// process holds the device), which then takes the reader's own path.

#include <deque>
#include <optional>
#include <string>

#include "agent/verbs/async_event_reader.h"

struct ibv_context;

namespace hostmesh::agent::verbs {

class DeviceAsyncEvents final : public AsyncEventSource {
 public:
  explicit DeviceAsyncEvents(ibv_context* context) : context_(context) {}

  std::optional<AsyncEvent> Next(std::string* error) override;
  void Inject(AsyncEvent event) { injected_.push_back(event); }

 private:
  ibv_context* context_;
  std::deque<AsyncEvent> injected_;
};

}  // namespace hostmesh::agent::verbs
