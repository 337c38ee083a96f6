#include "agent/verbs/nic_health.h"

#include <infiniband/verbs.h>

#include <algorithm>

namespace hostmesh::agent::verbs {

std::string_view AsyncEventKindName(AsyncEventKind kind) {
  switch (kind) {
    case AsyncEventKind::kPortActive:
      return "port_active";
    case AsyncEventKind::kPortDown:
      return "port_down";
    case AsyncEventKind::kQpFatal:
      return "qp_fatal";
    case AsyncEventKind::kCqError:
      return "cq_error";
    case AsyncEventKind::kDeviceFatal:
      return "device_fatal";
    case AsyncEventKind::kOther:
      break;
  }
  return "other";
}

AsyncEventKind ClassifyAsyncEvent(int event_type) {
  switch (static_cast<ibv_event_type>(event_type)) {
    case IBV_EVENT_PORT_ACTIVE:
      return AsyncEventKind::kPortActive;
    case IBV_EVENT_PORT_ERR:
      return AsyncEventKind::kPortDown;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
      return AsyncEventKind::kQpFatal;
    case IBV_EVENT_CQ_ERR:
      return AsyncEventKind::kCqError;
    case IBV_EVENT_DEVICE_FATAL:
      return AsyncEventKind::kDeviceFatal;
    default:
      return AsyncEventKind::kOther;
  }
}

NicHealth::NicHealth(std::uint32_t qp_count, bool port_up, MonoTime now, NicHealthOptions options)
    : options_(options), qps_(qp_count), port_up_(port_up) {
  next_port_check_ = now + options_.port_recheck;
}

void NicHealth::SetPort(bool up, MonoTime now) {
  if (port_up_ && !up) ++counters_.port_down_transitions;
  port_up_ = up;
  if (!up) next_port_check_ = now + options_.port_recheck;
  if (up) {
    // A QP that waited for the port is tried again at once.
    for (Qp& qp : qps_) {
      if (qp.broken) qp.retry_at = std::min(qp.retry_at, now);
    }
  }
}

void NicHealth::OnEvent(AsyncEventKind kind, std::optional<std::uint32_t> qp, MonoTime now) {
  ++counters_.events[static_cast<std::size_t>(kind)];
  switch (kind) {
    case AsyncEventKind::kPortActive:
      SetPort(true, now);
      return;
    case AsyncEventKind::kPortDown:
      SetPort(false, now);
      return;
    case AsyncEventKind::kQpFatal:
      if (qp && *qp < qps_.size() && !qps_[*qp].broken) qps_[*qp] = Qp{true, 0, now};
      return;
    case AsyncEventKind::kCqError:
    case AsyncEventKind::kDeviceFatal:
      // A second error while already failed changes nothing: the reopen
      // already scheduled (or backing off) stays as it is.
      if (!failed_) {
        failed_ = true;
        reopen_failures_ = 0;
        reopen_at_ = now + options_.first_reopen;
      }
      return;
    case AsyncEventKind::kOther:
      return;
  }
}

void NicHealth::OnQpFoundInError(std::uint32_t qp, MonoTime now) {
  if (qp >= qps_.size() || qps_[qp].broken) return;
  ++counters_.qp_errors_found;
  qps_[qp] = Qp{true, 0, now};
}

void NicHealth::OnPortState(bool active, MonoTime now) {
  SetPort(active, now);
  next_port_check_ = now + options_.port_recheck;
}

void NicHealth::OnRecovery(std::uint32_t qp, bool ok, MonoTime now) {
  if (qp >= qps_.size() || !qps_[qp].broken) return;
  Qp& q = qps_[qp];
  if (ok) {
    q = Qp{};
    ++counters_.qp_recoveries;
    return;
  }
  ++counters_.qp_recovery_failures;
  // first_retry, then 2x, 4x, ... up to max_retry (the shift is capped: no overflow).
  const std::int64_t factor = std::int64_t{1} << std::min<std::uint32_t>(q.failures, 30);
  const auto backoff =
      std::min<std::chrono::nanoseconds>(options_.max_retry, options_.first_retry * factor);
  ++q.failures;
  q.retry_at = now + backoff;
}

void NicHealth::OnReopen(bool ok, std::uint32_t qp_count, bool port_up, MonoTime now) {
  if (!failed_) return;
  if (ok) {
    ++counters_.reopens;
    failed_ = false;
    reopen_failures_ = 0;
    qps_.assign(qp_count, Qp{});
    port_up_ = port_up;
    next_port_check_ = now + options_.port_recheck;
    return;
  }
  ++counters_.reopen_failures;
  const std::int64_t factor = std::int64_t{1} << std::min<std::uint32_t>(reopen_failures_, 30);
  reopen_at_ =
      now + std::min<std::chrono::nanoseconds>(options_.max_reopen, options_.first_reopen * factor);
  ++reopen_failures_;
}

std::vector<std::uint32_t> NicHealth::RecoveryDue(MonoTime now) const {
  std::vector<std::uint32_t> due;
  if (!port_up_ || failed_) return due;
  for (std::uint32_t i = 0; i < qps_.size(); ++i) {
    if (qps_[i].broken && qps_[i].retry_at <= now) due.push_back(i);
  }
  return due;
}

bool NicHealth::PortCheckDue(MonoTime now) const {
  return !port_up_ && !failed_ && now >= next_port_check_;
}

std::optional<MonoTime> NicHealth::NextDue() const {
  if (failed_) return reopen_at_;
  std::optional<MonoTime> next;
  const auto consider = [&](MonoTime t) { next = next ? std::min(*next, t) : t; };
  if (!port_up_) {
    consider(next_port_check_);
    return next;  // QPs wait for the port
  }
  for (const Qp& qp : qps_) {
    if (qp.broken) consider(qp.retry_at);
  }
  return next;
}

}  // namespace hostmesh::agent::verbs
