#pragma once

// What one RNIC's asynchronous events (ibv_get_async_event on the device's
// async fd) mean for probing, as pure logic: the transport reads the events
// and the port state, feeds them here, and does what this decides, so the
// state machine is tested with a fake clock and no device.
//
// - Port down (IBV_EVENT_PORT_ERR, or a query that finds it not active):
//   probing from the NIC pauses; sends are refused at once and reported as
//   send failures, never timeouts. While down the port is queried again every
//   port_recheck, so a missed PORT_ACTIVE cannot pause it for ever.
// - QP fatal (IBV_EVENT_QP_FATAL, a QP found in the error state): that QP is
//   reset and brought back to RTS, at once when the port is up, then with a
//   doubling back-off while the reset keeps failing. Sends on it are refused
//   until then.
// - CQ error or device fatal: the CQ or the context is gone; nothing short of
//   reopening the device helps. The NIC stops sending (send failures) and the
//   transport closes it and opens it again, first after first_reopen, then
//   with a doubling back-off up to max_reopen while the open keeps failing
//   (a device in reset, a driver reloading). A reopened NIC starts over with
//   fresh QPs; the counters go on.
//
// QPs are named by an index the transport gives them (0: the receive QP).

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/base/clock.h"

namespace hostmesh::agent::verbs {

enum class AsyncEventKind : std::uint8_t {
  kPortActive,
  kPortDown,
  kQpFatal,  // also QP request and access errors: the QP is in the error state
  kCqError,
  kDeviceFatal,
  kOther,  // path migration, SRQ limits, GID changes, ...: counted only
};
inline constexpr std::size_t kAsyncEventKindCount = 6;
std::string_view AsyncEventKindName(AsyncEventKind kind);

// The kind of an ibv_event_type value.
AsyncEventKind ClassifyAsyncEvent(int event_type);

struct NicHealthOptions {
  std::chrono::nanoseconds first_retry = std::chrono::milliseconds{100};
  std::chrono::nanoseconds max_retry = std::chrono::seconds{10};
  std::chrono::nanoseconds port_recheck = std::chrono::seconds{1};
  std::chrono::nanoseconds first_reopen = std::chrono::seconds{1};
  std::chrono::nanoseconds max_reopen = std::chrono::seconds{60};
};

struct NicHealthCounters {
  std::array<std::uint64_t, kAsyncEventKindCount> events{};
  std::uint64_t qp_recoveries = 0;          // QPs brought back to RTS
  std::uint64_t qp_recovery_failures = 0;   // resets that failed (retried later)
  std::uint64_t qp_errors_found = 0;        // QPs found in error by a query, not an event
  std::uint64_t port_down_transitions = 0;  // up -> down, from events or queries
  std::uint64_t reopens = 0;                // device reopened after a CQ or device error
  std::uint64_t reopen_failures = 0;        // reopen attempts that failed (retried later)
};

class NicHealth {
 public:
  NicHealth(std::uint32_t qp_count, bool port_up, MonoTime now, NicHealthOptions options = {});

  // An event; `qp` names the QP of a QP event (ignored for the others).
  void OnEvent(AsyncEventKind kind, std::optional<std::uint32_t> qp, MonoTime now);
  // The port state a query found (ibv_query_port) while a recheck was due.
  void OnPortState(bool active, MonoTime now);
  // `qp` was found in the error state without an event (a query after an
  // error completion): recovered like a fatal QP, counted apart.
  void OnQpFoundInError(std::uint32_t qp, MonoTime now);
  // The outcome of resetting `qp` to RTS (RecoveryDue named it).
  void OnRecovery(std::uint32_t qp, bool ok, MonoTime now);
  // The outcome of reopening the failed device (ReopenDue said so). On
  // success the NIC has `qp_count` fresh QPs and its port is as found.
  void OnReopen(bool ok, std::uint32_t qp_count, bool port_up, MonoTime now);

  // Probing from this NIC may go on (port up, device usable).
  bool can_send() const { return port_up_ && !failed_; }
  // `qp` is usable (not waiting for recovery).
  bool qp_ready(std::uint32_t qp) const { return qp < qps_.size() && !qps_[qp].broken; }
  bool port_up() const { return port_up_; }
  // The device or CQ is beyond repair until the NIC is reopened.
  bool failed() const { return failed_; }

  // QPs whose reset is due at `now` (the port must be up to bring a QP to RTS).
  std::vector<std::uint32_t> RecoveryDue(MonoTime now) const;
  // The port should be queried (it is down and last looked at port_recheck ago).
  bool PortCheckDue(MonoTime now) const;
  // The failed device should be closed and opened again now.
  bool ReopenDue(MonoTime now) const { return failed_ && now >= reopen_at_; }
  // The earliest time something here wants doing; nullopt if nothing waits.
  std::optional<MonoTime> NextDue() const;

  const NicHealthCounters& counters() const { return counters_; }

 private:
  struct Qp {
    bool broken = false;
    std::uint32_t failures = 0;  // consecutive failed resets
    MonoTime retry_at{};
  };
  void SetPort(bool up, MonoTime now);

  NicHealthOptions options_;
  std::vector<Qp> qps_;
  bool port_up_;
  bool failed_ = false;
  std::uint32_t reopen_failures_ = 0;  // consecutive, since the device failed
  MonoTime reopen_at_{};
  MonoTime next_port_check_{};
  NicHealthCounters counters_;
};

}  // namespace hostmesh::agent::verbs
