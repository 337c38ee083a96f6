#include "agent/verbs/async_event_reader.h"

#include <infiniband/verbs.h>

#include "common/base/logging.h"

namespace hostmesh::agent::verbs {
namespace {

std::string_view Meaning(AsyncEventKind kind) {
  switch (kind) {
    case AsyncEventKind::kPortDown:
      return ": probing from it pauses";
    case AsyncEventKind::kPortActive:
      return ": probing from it resumes";
    case AsyncEventKind::kQpFatal:
      return ": the QP will be reset";
    default:
      return ": the NIC stops sending until it is reopened";
  }
}

}  // namespace

bool IsQpEvent(int event_type) {
  switch (static_cast<ibv_event_type>(event_type)) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      return true;
    default:
      return false;
  }
}

bool IsPortEvent(int event_type) {
  switch (static_cast<ibv_event_type>(event_type)) {
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE:
      return true;
    default:
      return false;
  }
}

std::size_t DrainAsyncEvents(AsyncEventSource& source, const AsyncEventScope& scope,
                             NicHealth& health, MonoTime now) {
  const auto log = GetLogger("verbs");
  std::string error;
  while (const std::optional<AsyncEvent> event = source.Next(&error)) {
    AsyncEventKind kind = ClassifyAsyncEvent(event->type);
    std::optional<std::uint32_t> qp;
    if (IsQpEvent(event->type)) qp = scope.qp_index(event->qp_num);
    // Another port of the device is not this NIC's business: counted only.
    if (IsPortEvent(event->type) && event->port != scope.port) kind = AsyncEventKind::kOther;
    const char* name = ibv_event_type_str(static_cast<ibv_event_type>(event->type));
    if (kind == AsyncEventKind::kOther) {
      log->info("nic {}: async event {}", scope.nic_name, name);
    } else {
      log->warn("nic {}: async event {}{}", scope.nic_name, name, Meaning(kind));
    }
    if (scope.on_event) scope.on_event(name, kind, qp);
    health.OnEvent(kind, qp, now);
  }
  if (error.empty()) return 0;
  log->warn("nic {}: reading async events: {}", scope.nic_name, error);
  return 1;
}

}  // namespace hostmesh::agent::verbs
