#pragma once

// An in-memory ProbeTransport for tests (a test double: no production code links it): a probe sent
// from NIC a to NIC b shows up on b after a virtual delay, with all four
// timestamps read off the injected clock. Faults are predicates: drop by
// (src, dst, source port), delay per probe, mutate the bytes in flight.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "agent/core/probe_transport.h"
#include "common/base/clock.h"

namespace hostmesh::agent {

struct FakeTransportOptions {
  std::uint32_t num_nics = 0;
  std::chrono::nanoseconds nic_send_delay = std::chrono::microseconds{2};  // (1) -> (2)
  std::chrono::nanoseconds one_way_delay = std::chrono::microseconds{10};  // (2) -> (3)
  std::chrono::nanoseconds recv_app_delay = std::chrono::microseconds{5};  // (3) -> (4)
  // true: (2) comes as a kSendTimestamp event, like SO_TIMESTAMPING or a send
  // CQE; false: it is returned by Send.
  bool async_send_timestamps = true;
  // How long after (2) its event becomes visible; make it longer than the
  // flight to exercise a send timestamp that arrives after the receive.
  std::chrono::nanoseconds send_report_delay = std::chrono::nanoseconds::zero();
  TimestampSource send_source = TimestampSource::kHardware;
  TimestampSource recv_source = TimestampSource::kHardware;
};

class FakeTransport final : public ProbeTransport {
 public:
  using DropRule = std::function<bool(NicId src, NicId dst, std::uint16_t src_port)>;
  using DelayRule = std::function<std::chrono::nanoseconds(const ProbeOrder&)>;
  using Mutator = std::function<void(const ProbeOrder&, std::vector<std::uint8_t>& bytes)>;

  FakeTransport(const Clock& clock, FakeTransportOptions options);

  OpenResult OpenNic(NicId nic) override;
  SendResult Send(const ProbeOrder& order, std::span<const std::uint8_t> payload) override;
  std::size_t Poll(std::vector<TransportEvent>& out, std::size_t max_events) override;
  int ReadyFd() const override { return -1; }

  // Fault controls; an empty function clears the fault.
  void SetDropRule(DropRule rule) { drop_ = std::move(rule); }
  void SetDelayRule(DelayRule rule) { delay_ = std::move(rule); }  // replaces one_way_delay
  void SetMutator(Mutator mutator) { mutate_ = std::move(mutator); }
  // OpenNic(nic) fails from now on.
  void FailOpen(NicId nic) { fail_open_.insert(nic); }
  // Send from `nic` returns `status` (kOk clears it).
  void FailSends(NicId nic, SendStatus status);
  // Delivers raw bytes to `nic` at monotonic time `at` (foreign or forged packets).
  void Inject(NicId nic, std::vector<std::uint8_t> bytes, MonoTime at);

  // When the next event becomes visible, for a simulation loop's clock.
  std::optional<MonoTime> NextEventTime() const;

  std::uint64_t sent() const { return sent_; }
  std::uint64_t dropped() const { return dropped_; }
  std::uint64_t delivered() const { return delivered_; }
  // Calls of Poll (each a system call on a real transport).
  std::uint64_t polls() const { return polls_; }

 private:
  struct Scheduled {
    MonoTime visible;
    std::uint64_t order;  // FIFO among equal times, so runs replay exactly
    TransportEvent event;
  };
  struct Later {
    bool operator()(const Scheduled& a, const Scheduled& b) const {
      return a.visible != b.visible ? a.visible > b.visible : a.order > b.order;
    }
  };

  std::int64_t RealtimeNs(MonoTime at) const;
  void Schedule(MonoTime visible, TransportEvent event);

  const Clock& clock_;
  FakeTransportOptions options_;
  std::vector<bool> open_;
  std::vector<SendStatus> send_status_;
  std::set<NicId> fail_open_;
  DropRule drop_;
  DelayRule delay_;
  Mutator mutate_;
  std::vector<Scheduled> events_;  // a heap ordered by Later: earliest at front
  std::uint64_t next_order_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t delivered_ = 0;
  std::uint64_t polls_ = 0;
};

}  // namespace hostmesh::agent
