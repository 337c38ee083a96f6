// The verbs transport's care of its NICs: NIC clock sampling, the ready fd,
// RDMA async events, QP recovery, reopening a failed device (nic_health.h),
// and the debug hooks that break them on purpose (async_event_reader.h
// reads the events).
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "agent/verbs/flow_label.h"
#include "agent/verbs/gid_check.h"
#include "agent/verbs/verbs_transport.h"
#include "agent/verbs/verbs_transport_parts.h"

namespace hostmesh::agent::verbs {

using namespace transport_internal;

void VerbsTransport::SampleClock(Nic& nic) {
  VerbsNicStats& stats = stats_[nic.id];
  for (std::uint32_t i = 0; i < options_.clock_samples_per_round; ++i) {
    ibv_values_ex values{};
    values.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
    const std::int64_t before = Ns(clock_.RealtimeNow());
    const int rc = ibv_query_rt_values_ex(nic.res.context.get(), &values);
    const std::int64_t after = Ns(clock_.RealtimeNow());
    if (rc != 0) {
      ++stats.clock_sample_errors;
      Note({NicEventNote::Kind::kClockFit, nic.id, 0, nic.clock->error_bound_ns(), true,
            std::string("ibv_query_rt_values_ex: ") + std::strerror(rc)});
      if (!std::exchange(nic.warned_sample_error, true)) {
        Log()->warn("nic {}: ibv_query_rt_values_ex failed: {}; NIC timestamps stay unmapped",
                    nic.config.name, std::strerror(rc));
      }
      break;
    }
    // Providers put the raw tick count in the timespec (mlx5: all of it in tv_nsec).
    const std::uint64_t raw = static_cast<std::uint64_t>(values.raw_clock.tv_sec) * 1'000'000'000u +
                              static_cast<std::uint64_t>(values.raw_clock.tv_nsec);
    if (nic.clock->AddSample(ClockSample{before, raw, after})) {
      ++stats.clock_samples;
    } else {
      ++stats.clock_sample_errors;
      Note({NicEventNote::Kind::kClockFit, nic.id, 0, nic.clock->error_bound_ns(), true,
            "sample rejected (an inverted bracket or a stepped host clock)"});
    }
  }
  nic.next_sample = clock_.MonotonicNow() + nic.sample_period;
}

void VerbsTransport::Note(const NicEventNote& note) const {
  if (options_.on_nic_event) options_.on_nic_event(note);
}

void VerbsTransport::DrainReadyFd() {
  if (!epoll_.valid()) return;
  std::array<epoll_event, 16> ready{};
  const int n = epoll_wait(epoll_.get(), ready.data(), static_cast<int>(ready.size()), 0);
  for (int i = 0; i < n; ++i) {
    const std::uint32_t tag = ready[static_cast<std::size_t>(i)].data.u32;
    if (tag == kWakeTag) {
      std::uint64_t count = 0;
      [[maybe_unused]] const auto got = read(wake_.get(), &count, sizeof(count));
      continue;
    }
    if ((tag & kAsyncTag) != 0) {
      if (is_open(tag & ~kAsyncTag)) ReadAsyncEvents(*nics_[tag & ~kAsyncTag]);
      continue;
    }
    if (!is_open(tag)) continue;
    Nic& nic = *nics_[tag];
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    // Ack at once: ibv_destroy_cq waits for every event it handed out.
    while (ibv_get_cq_event(nic.res.channel.get(), &cq, &context) == 0) ibv_ack_cq_events(cq, 1);
    // Re-arm before polling (Poll polls every CQ after this), so a completion
    // landing in between still raises an event.
    ibv_req_notify_cq(nic.res.cq.cq(), 0);
  }
}

void VerbsTransport::ReadAsyncEvents(Nic& nic) {
  if (!nic.async_events) return;
  AsyncEventScope scope{nic.config.name,
                        nic.config.port,
                        [&nic](std::uint32_t qp_num) { return nic.QpIndex(qp_num); },
                        {}};
  if (options_.on_nic_event) {
    scope.on_event = [this, &nic](std::string_view name, AsyncEventKind kind,
                                  std::optional<std::uint32_t> qp) {
      NicEventNote note{NicEventNote::Kind::kAsyncEvent, nic.id, qp.value_or(0), 0, false, {}};
      note.text = std::string(name) + " (" + std::string(AsyncEventKindName(kind)) + ")";
      options_.on_nic_event(note);
    };
  }
  stats_[nic.id].async_event_errors +=
      DrainAsyncEvents(*nic.async_events, scope, *nic.health, clock_.MonotonicNow());
}

void VerbsTransport::CheckQpAfterError(Nic& nic, std::uint32_t qp_index) {
  if (!nic.health->qp_ready(qp_index)) return;
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(nic.QpAt(qp_index), &attr, IBV_QP_STATE, &init) != 0) return;
  if (attr.qp_state == IBV_QPS_ERR || attr.qp_state == IBV_QPS_SQE) {
    Log()->warn("nic {}: QP {:#x} found in state {} after an error completion; resetting it",
                nic.config.name, nic.QpAt(qp_index)->qp_num,
                attr.qp_state == IBV_QPS_ERR ? "ERR" : "SQE");
    nic.health->OnQpFoundInError(qp_index, clock_.MonotonicNow());
  }
}

bool VerbsTransport::RecoverQp(Nic& nic, std::uint32_t qp_index) {
  ibv_qp* qp = nic.QpAt(qp_index);
  const std::string where =
      "(" + nic.config.rdma_device + " qpn " + std::to_string(qp->qp_num) + ")";
  if (auto up = BringUpQp(qp, nic, where); !up) {
    Log()->warn("nic {}: QP recovery failed: {}; retrying later", nic.config.name,
                up.error().message);
    return false;
  }
  // The reset dropped whatever was still queued: sends still in flight on
  // this QP are reported failed, and the receive QP gets its buffers back.
  const std::size_t dropped = FailInFlight(nic, qp_index, IBV_WC_WR_FLUSH_ERR);
  if (qp_index == 0) {
    nic.recv_level.Reset(0);  // the reset dropped every posted receive
    for (std::uint32_t slot = 0; slot < nic.recv_slots; ++slot) {
      if (auto posted = PostReceive(nic, slot); !posted) {
        ++stats_[nic.id].receive_repost_failures;
        Log()->warn("nic {}: reposting receives after the reset: {}", nic.config.name,
                    posted.error().message);
        return false;
      }
    }
  }
  Log()->warn("nic {}: QP {:#x} reset and back in RTS ({} sends in flight reported failed)",
              nic.config.name, qp->qp_num, dropped);
  return true;
}

std::string VerbsTransport::ForceQpError(NicId nic, std::uint32_t qp_index) {
  if (!is_open(nic)) return "NIC " + std::to_string(nic) + " is not open";
  Nic& n = *nics_[nic];
  if (qp_index > n.send_qps.size()) {
    return "nic " + n.config.name + " has QPs 0.." + std::to_string(n.send_qps.size()) + ", not " +
           std::to_string(qp_index);
  }
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  if (int rc = ibv_modify_qp(n.QpAt(qp_index), &attr, IBV_QP_STATE); rc != 0) {
    return "ibv_modify_qp(ERR) on nic " + n.config.name + ": " + std::strerror(rc);
  }
  Log()->warn("nic {}: QP {:#x} forced into the error state (debug hook)", n.config.name,
              n.QpAt(qp_index)->qp_num);
  return "";
}

// Closes a NIC whose device or CQ failed and opens it again (nic_health.h).
// Its in-flight probes died with the CQ: reported as send failures.
void VerbsTransport::Reopen(NicId id, MonoTime now) {
  NicHealth& health = *health_[id];
  const VerbsNicOptions& cfg = options_.nics[id];
  std::size_t dropped = 0;
  if (is_open(id)) {
    dropped = FailInFlight(*nics_[id], std::nullopt, IBV_WC_WR_FLUSH_ERR);
    // The builder may be using its PD and holds handles of it: both go first.
    if (ah_builder_) ah_builder_->Forget([id](const auto& x) { return x.src == id; });
    nics_[id].reset();  // closing its fds takes them out of the epoll set
    open_order_.erase(std::remove(open_order_.begin(), open_order_.end(), id), open_order_.end());
  }
  // Listed again: a device that was unregistered and registered anew (driver
  // reload, reset) is another ibv_device. Open contexts hold their own.
  device_list_ = UniqueDeviceList();
  device_count_ = 0;
  auto built = Build(id);
  if (!built) {
    health.OnReopen(false, 0, false, now);
    Note({NicEventNote::Kind::kReopen, id, 0, 0, true, built.error().message});
    Log()->warn(
        "nic {}: reopening {} failed (attempt {}): {}; trying again in {} ms", cfg.name,
        cfg.rdma_device, health.counters().reopen_failures, built.error().message,
        health.NextDue()
            ? std::chrono::duration_cast<std::chrono::milliseconds>(*health.NextDue() - now).count()
            : 0);
    return;
  }
  nics_[id] = std::move(built).value();
  open_order_.push_back(id);
  Nic& nic = *nics_[id];
  health.OnReopen(true, static_cast<std::uint32_t>(1 + nic.send_qps.size()),
                  nic.port_active_at_open, now);
  reopened_.push_back(id);
  Note({NicEventNote::Kind::kReopen, id, 0, 0, false, {}});
  PrebuildAddressHandles(nic);
  Log()->warn(
      "nic {}: {} reopened after a device or CQ error ({} sends in flight reported failed); "
      "probing from it resumes{}",
      cfg.name, cfg.rdma_device, dropped,
      nic.port_mode == SourcePortMode::kPerQp ? " from the new send QPs' ports" : "");
}

std::vector<NicId> VerbsTransport::TakeReopened() {
  return std::exchange(reopened_, {});
}

std::string VerbsTransport::ForceDeviceError(NicId nic) {
  if (!is_open(nic) || !nics_[nic]->async_events) {
    return "NIC " + std::to_string(nic) + " is not open";
  }
  Nic& n = *nics_[nic];
  Log()->warn("nic {}: IBV_EVENT_DEVICE_FATAL injected into its async events (debug hook)",
              n.config.name);
  n.async_events->Inject(AsyncEvent{.type = IBV_EVENT_DEVICE_FATAL});
  ReadAsyncEvents(n);
  return "";
}

void VerbsTransport::MaintainHealth(NicId id) {
  if (!health_[id]) return;  // never opened
  NicHealth& health = *health_[id];
  const MonoTime now = clock_.MonotonicNow();
  if (health.ReopenDue(now)) {
    Reopen(id, now);
    return;
  }
  if (!is_open(id)) return;
  Nic& nic = *nics_[id];
  if (health.PortCheckDue(now)) {
    ibv_port_attr attr{};
    if (ibv_query_port(nic.res.context.get(), nic.config.port, &attr) == 0) {
      const bool active = attr.state == IBV_PORT_ACTIVE;
      if (active) {
        Log()->warn("nic {}: port {} is active again (found by query); probing from it resumes",
                    nic.config.name, nic.config.port);
      }
      health.OnPortState(active, now);
    }
  }
  for (std::uint32_t qp : health.RecoveryDue(now)) {
    const bool ok = RecoverQp(nic, qp);
    Note({NicEventNote::Kind::kQpRecovery, id, qp, 0, !ok, {}});
    health.OnRecovery(qp, ok, now);
  }
}

void VerbsTransport::WakeLater() {
  if (!wake_.valid()) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto put = write(wake_.get(), &one, sizeof(one));
}

}  // namespace hostmesh::agent::verbs
