#include "agent/core/prober.h"

#include <algorithm>
#include <stdexcept>

namespace hostmesh::agent {

Prober::Prober(Scheduler& scheduler, Tracker& tracker, ProbeTransport& transport,
               const Clock& clock, ProberOptions options)
    : scheduler_(scheduler),
      tracker_(tracker),
      transport_(transport),
      clock_(clock),
      options_(options),
      nic_counters_(scheduler.num_nics()),
      payload_(options.payload_bytes) {
  if (options.payload_bytes < kProbeHeaderBytes || options.payload_bytes > kMaxProbePayloadBytes) {
    throw std::invalid_argument("prober: payload_bytes out of range");
  }
  if (options.max_events_per_turn == 0) {
    throw std::invalid_argument("prober: max_events_per_turn must be >= 1");
  }
}

MonoTime Prober::RunOnce(bool events_ready) {
  const MonoTime now = clock_.MonotonicNow();
  // Receives first: a reply that is here by `now` must not be expired below
  // (one may have come since the caller's wait ended).
  bool more_events = false;
  if (events_ready || DeadlineCome(now)) more_events = HandleEvents(now);
  // What the sends made ready at once (software TX stamps are taken inside the
  // send; on a software fabric the probes themselves arrive inside it) is
  // read now, not after one more trip through the loop's wait.
  if (SendDue(now) && !more_events) more_events = HandleEvents(now);
  tracker_.Poll(now);

  if (more_events) return now;
  MonoTime wake = sending_ ? scheduler_.NextDue() : MonoTime::max();
  if (const auto deadline = tracker_.NextDeadline()) wake = std::min(wake, *deadline);
  return wake;
}

bool Prober::DeadlineCome(MonoTime now) const {
  const std::optional<MonoTime> deadline = tracker_.NextDeadline();
  return deadline && *deadline <= now;
}

bool Prober::HandleEvents(MonoTime now) {
  transport_.Reclaim(events_);
  transport_.Poll(events_, options_.max_events_per_turn);
  for (const TransportEvent& event : events_) HandleEvent(event, now);
  return events_.size() >= options_.max_events_per_turn;
}

void Prober::HandleEvent(const TransportEvent& event, MonoTime now) {
  switch (event.kind) {
    case TransportEvent::Kind::kReceived: {
      const DecodeResult decoded = DecodeProbe(event.payload, options_.boot_id);
      if (event.nic < nic_counters_.size()) {
        ++nic_counters_[event.nic].received[static_cast<std::size_t>(decoded.status)];
      }
      if (decoded.status == DecodeStatus::kOk) {
        tracker_.OnReceive(event.nic, decoded.header, event.nic_time, event.app_time, now);
      }
      return;
    }
    case TransportEvent::Kind::kSendTimestamp:
      tracker_.OnSendTimestamp(event.nic, event.sequence, event.nic_time);
      return;
    case TransportEvent::Kind::kSendFailed:
      if (event.nic < nic_counters_.size()) ++nic_counters_[event.nic].send_errors;
      tracker_.OnSendFailed(event.nic, event.sequence);
      return;
  }
}

bool Prober::SendDue(MonoTime now) {
  orders_.clear();
  if (!sending_) return false;
  scheduler_.PopDue(now, orders_);
  if (orders_.empty()) return false;
  const std::int64_t send_time_ns = clock_.RealtimeNow().time_since_epoch().count();
  for (const ProbeOrder& order : orders_) {
    ProbeHeader header;
    header.src_nic = order.src;
    header.dst_nic = order.dst;
    header.boot_id = options_.boot_id;
    header.sequence = order.sequence;
    header.send_time_ns = send_time_ns;
    EncodeProbe(header, payload_);  // cannot fail: size checked at construction, ids < 2^16

    const SendResult sent = transport_.Send(order, payload_);
    ProberNicCounters& counters = nic_counters_[order.src];
    if (sent.status == SendStatus::kRetryLater) {
      // Never left the host: not a network fact, so no result; the sequence
      // just has a gap.
      ++counters.send_retry_later;
      continue;
    }
    SentProbe probe;
    probe.order = order;
    probe.send_time_ns = send_time_ns;
    probe.app_send = sent.app_send;
    probe.nic_send = sent.nic_send;
    probe.nic_send_pending = sent.nic_send_pending;
    probe.payload_bytes = options_.payload_bytes;
    tracker_.OnSend(probe, now);
    if (sent.status == SendStatus::kFailed) {
      // Reported as a send failure, not a timeout: it never reached the
      // network, and the analyzer must not read it as loss.
      ++counters.send_errors;
      tracker_.OnSendFailed(order.src, order.sequence);
    }
  }
  return true;
}

}  // namespace hostmesh::agent
