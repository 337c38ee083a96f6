#pragma once

// ProbeTransport over RDMA verbs: one UD QP per RNIC. All RNICs are local, so
// destinations learn each other's QPN and GID inside this process; there is
// no out-of-band exchange.
//
// Timestamps: (1) host clock just before ibv_post_send; (2) the send CQE's
// NIC timestamp; (3) the receive CQE's NIC timestamp; (4) host clock when the
// receive is read. Raw NIC ticks are mapped to host CLOCK_REALTIME by a
// per-NIC ClockFit refitted from periodic ibv_query_rt_values_ex samples;
// wall-clock CQE stamps are used as they are. Devices without completion
// timestamps (soft-RoCE) fall back to the poll time and report kUser.
//
// The RoCEv2 destination port is always 4791 (the NIC sets it), so
// ProbeOrder::dst_port is not used; the source port comes from the GRH flow
// label of the address handle (flow_label.h), one AH per (destination, port),
// or, on devices that fix it per QP (soft-RoCE, source_port.h), from a pool
// of send QPs whose ports OpenNic reports for the port pool to draw from;
// there one AH per destination serves every port. Address handles are built
// ahead on a thread of their own (address_handle_book.h, background_builder.h):
// when a pair of NICs opens and, for flow labels, for the ports the agent
// names in PrepareSourcePorts (its pool and the next rotation's); a send
// whose handle is not ready is not sent (kRetryLater).
//
// Asynchronous events (nic_health.h) are read from each device's async fd:
// a port down pauses the NIC's sends (refused, reported as send failures), a
// QP in the error state is reset to RTS on a later Poll, and a NIC whose CQ
// or device failed is closed and opened again with back-off (TakeReopened
// names it: on a per-QP device its source ports are new).
//
// Single-threaded like every ProbeTransport: OpenNic, Send and Poll are called
// from the agent's I/O loop.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/core/probe_transport.h"
#include "agent/verbs/address_handle_book.h"
#include "agent/verbs/background_builder.h"
#include "agent/verbs/clock_fit.h"
#include "agent/verbs/completion_queue.h"
#include "agent/verbs/nic_event_note.h"
#include "agent/verbs/nic_health.h"
#include "agent/verbs/nic_resources.h"
#include "agent/verbs/source_port.h"
#include "agent/verbs/verbs_handles.h"
#include "common/base/clock.h"

namespace hostmesh::agent::verbs {

struct VerbsNicOptions {
  std::string name;         // for logs
  std::string rdma_device;  // "mlx5_0", "rxe0"
  std::uint8_t port = 1;
  std::uint8_t gid_index = 3;  // a RoCEv2 GID of the NIC's address
  std::string ip;              // the NIC's IPv4 address; empty: any RoCEv2 GID goes
};

struct VerbsTransportOptions {
  std::vector<VerbsNicOptions> nics;  // index = NicId
  std::uint8_t hop_limit = 64;        // GRH hop limit = IP TTL
  std::uint8_t traffic_class = 106;   // GRH traffic class = IP DSCP/ECN byte (agent_config.h)
  std::uint8_t service_level = 3;     // AH SL: the VLAN priority on RoCE
  // Shared by all QPs of the agent; bit 31 clear (set means a privileged Q_Key).
  std::uint32_t qkey = 0x484D5348;  // "HMSH"
  std::uint32_t max_payload_bytes = 256;
  std::uint32_t send_queue_depth = 64;
  std::uint32_t recv_queue_depth = 256;    // the agent sizes it for the rate (queue_sizing.h)
  std::size_t max_address_handles = 1024;  // per source NIC
  // Devices that fix the source port per QP (source_port.h): send QPs per NIC,
  // one port each; the port pool draws from their ports (OpenResult::source_ports).
  std::uint32_t source_qps = 32;
  // false forces software timestamps even when the NIC has CQE timestamps.
  bool use_completion_timestamps = true;
  std::chrono::nanoseconds clock_sample_period = std::chrono::seconds{1};
  std::uint32_t clock_samples_per_round = 4;  // back to back; the fit keeps the narrowest
  std::size_t clock_window = 64;
  std::size_t clock_fit_samples = 16;
  // Told of async events, QP recoveries, reopens and clock-fit errors (the
  // agent's flight recorder); empty: nobody.
  NicEventSink on_nic_event;
};

// Counters of one NIC, for the agent's metrics.
struct VerbsNicStats {
  std::uint64_t sends_posted = 0;
  std::uint64_t sends_retry_later = 0;  // send queue or AH table full
  std::uint64_t sends_failed = 0;       // rejected before or by ibv_post_send
  std::uint64_t send_completion_errors = 0;
  std::uint64_t receives = 0;
  std::uint64_t receive_errors = 0;  // failed receive CQEs, runt packets
  std::uint64_t receive_repost_failures = 0;
  std::uint64_t receive_queue_empty = 0;  // polls that found every posted receive used
  std::uint64_t poll_busy = 0;            // EBUSY from ibv_start_poll: retried later
  std::uint64_t poll_errors = 0;
  std::uint64_t address_handles_created = 0;  // by the builder thread
  std::uint64_t sends_waiting_for_ah = 0;     // not sent: the handle was still being built
  std::uint64_t address_handle_errors = 0;    // failed builds (retried after a second)
  std::uint64_t address_handles_dropped = 0;  // built, but the cache was full of busy ones
  std::uint64_t address_handles_evicted = 0;
  std::uint64_t clock_samples = 0;
  std::uint64_t clock_sample_errors = 0;
  std::uint64_t unmapped_timestamps = 0;  // NIC stamp present but no clock fit yet
  std::uint64_t sends_nic_down = 0;       // refused: port down or device failed (nic_health.h)
  std::uint64_t sends_qp_recovering = 0;  // refused: the QP is being reset after an error
  std::uint64_t async_event_errors = 0;   // ibv_get_async_event failures other than EAGAIN
  std::uint64_t stale_completions = 0;    // send CQEs for a slot no longer in flight
};

// The NIC clock mapping state of one NIC, for the clock-fit error metric.
struct VerbsClockState {
  CompletionTimestampMode mode = CompletionTimestampMode::kNone;
  bool fitted = false;
  std::int64_t error_bound_ns = 0;
  double residual_ns = 0;
  double drift_ppm = 0;
};

class VerbsTransport final : public ProbeTransport {
 public:
  VerbsTransport(const Clock& clock, VerbsTransportOptions options);
  ~VerbsTransport() override;
  VerbsTransport(const VerbsTransport&) = delete;
  VerbsTransport& operator=(const VerbsTransport&) = delete;

  OpenResult OpenNic(NicId nic) override;
  SendResult Send(const ProbeOrder& order, std::span<const std::uint8_t> payload) override;
  std::size_t Poll(std::vector<TransportEvent>& out, std::size_t max_events) override;
  // An epoll fd over the NICs' completion channels (and a wake-up eventfd
  // when a Poll left work behind).
  int ReadyFd() const override { return epoll_.get(); }
  std::vector<NicId> TakeReopened() override;
  void PrepareSourcePorts(NicId nic, std::span<const std::uint16_t> ports) override;

  bool is_open(NicId nic) const;
  // Valid for nic < options.nics.size().
  const VerbsNicStats& nic_stats(NicId nic) const;
  VerbsClockState clock_state(NicId nic) const;
  // The async-event state of a NIC opened once (nullptr when never opened);
  // kept across reopens.
  const NicHealth* nic_health(NicId nic) const;
  // The QPN of an open NIC (0 when not open); for logs and tests.
  std::uint32_t qp_num(NicId nic) const;
  // How an open NIC's source ports are chosen (nullopt when not open).
  std::optional<SourcePortMode> source_port_mode(NicId nic) const;

  // Test-only (the agent's debug hooks): moves QP `qp_index` of `nic` (0: its
  // receive QP, 1..: its send QPs) to the error state with ibv_modify_qp, as
  // a device does on a fatal QP error. The transport then finds it there
  // through its flushed completions, like any other QP error, and resets it.
  // An error message when the NIC is not open or has no such QP.
  std::string ForceQpError(NicId nic, std::uint32_t qp_index);
  // Test-only (debug hooks): queues IBV_EVENT_DEVICE_FATAL in the NIC's async
  // events and reads them, so the event takes the reader's path
  // (async_event_reader.h) and the NIC is closed and reopened: no tool can
  // make rxe raise the event while a process holds the device.
  std::string ForceDeviceError(NicId nic);

 private:
  struct Nic;
  struct RealVerbsTraits;
  struct AhJob;
  struct AhBuilt;

  VerbsResult<std::unique_ptr<Nic>> Build(NicId id);
  // Build's phases, in order.
  VerbsResult<ibv_device*> FindDevice(const std::string& dev_name);
  VerbsStatus OpenDevice(Nic& nic, ibv_device* device, const std::string& where,
                         ibv_device_attr_ex& dev_attr, ibv_port_attr& port_attr);
  VerbsStatus RegisterBuffers(Nic& nic, const ibv_device_attr_ex& dev_attr,
                              const std::string& where);
  VerbsStatus CreateQueues(Nic& nic, const ibv_device_attr_ex& dev_attr, const std::string& where);
  VerbsStatus PostAndArm(Nic& nic, const ibv_port_attr& port_attr, const std::string& where);
  CompletionTimestampMode SetUpClock(Nic& nic, const ibv_device_attr_ex& dev_attr,
                                     const std::string& where);
  VerbsStatus WatchFds(Nic& nic, const std::string& where);
  static VerbsResult<ibv_gid> CheckGid(ibv_context* ctx, const VerbsNicOptions& cfg,
                                       const ibv_port_attr& port_attr, const std::string& where);
  VerbsResult<UniqueQp> CreateUdQp(Nic& nic, std::uint32_t recv_depth, const std::string& where);
  VerbsStatus BringUpQp(ibv_qp* qp, const Nic& nic, const std::string& where);
  VerbsStatus PostReceive(Nic& nic, std::uint32_t slot);
  int PostSend(Nic& src, const Nic& dst, ibv_qp* qp, ibv_ah* ah, std::uint32_t slot,
               std::span<const std::uint8_t> payload, Timestamp* app_send);
  void StartAddressHandleBuilder();
  void RequestAddressHandle(Nic& src, const AddressHandleKey& key);
  void WantAddressHandles(Nic& src, std::span<const NicId> destinations);
  void PrebuildAddressHandles(Nic& opened);
  void CollectAddressHandles();
  void ReadAsyncEvents(Nic& nic);
  void MaintainHealth(NicId id);
  void Reopen(NicId id, MonoTime now);
  // Reports the sends in flight on `qp_index` (every QP: nullopt) as failed.
  std::size_t FailInFlight(Nic& nic, std::optional<std::uint32_t> qp_index, int error);
  bool RecoverQp(Nic& nic, std::uint32_t qp_index);
  void CheckQpAfterError(Nic& nic, std::uint32_t qp_index);
  void SampleClock(Nic& nic);
  // Tells options_.on_nic_event, if set.
  void Note(const NicEventNote& note) const;
  void DrainReadyFd();
  void PollNic(Nic& nic, std::vector<TransportEvent>& out, std::size_t budget, bool& left_work);
  void OnSendCompletion(Nic& nic, std::uint32_t slot, const Completion& c, std::int64_t poll_ns,
                        std::vector<TransportEvent>& out);
  void OnReceiveCompletion(Nic& nic, std::uint32_t slot, const Completion& c, std::int64_t poll_ns,
                           std::vector<TransportEvent>& out);
  Timestamp CompletionTime(Nic& nic, const Completion& c, std::int64_t poll_ns);
  void WakeLater();

  const Clock& clock_;
  VerbsTransportOptions options_;
  // Creation order: device list, epoll and eventfd, then the NICs; the
  // destructor releases the NICs last-opened first, then the rest in reverse.
  UniqueDeviceList device_list_;
  int device_count_ = 0;
  UniqueFd epoll_;
  UniqueFd wake_;
  std::vector<std::unique_ptr<Nic>> nics_;
  std::vector<NicId> open_order_;
  std::vector<VerbsNicStats> stats_;  // kept for NICs that failed to open too
  // Per NIC from its first open on, across reopens; sized once (Nic::health points in).
  std::vector<std::optional<NicHealth>> health_;
  std::vector<NicId> reopened_;  // since the last TakeReopened
  std::uint64_t nic_generations_ = 0;
  // Last: destroyed first (the destructor resets it before the NICs anyway).
  std::unique_ptr<BackgroundBuilder<AhJob, AhBuilt>> ah_builder_;
  std::size_t next_poll_nic_ = 0;  // round robin, so one busy NIC cannot starve others
  // Send failures of in-flight probes a QP reset dropped, handed out by Poll
  // ahead of completions (Poll never returns more than it was asked for).
  std::vector<TransportEvent> backlog_;
};

}  // namespace hostmesh::agent::verbs
