#include "tests/support/fake_transport.h"

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>

namespace hostmesh::agent {

FakeTransport::FakeTransport(const Clock& clock, FakeTransportOptions options)
    : clock_(clock),
      options_(options),
      open_(options.num_nics, false),
      send_status_(options.num_nics, SendStatus::kOk) {}

OpenResult FakeTransport::OpenNic(NicId nic) {
  OpenResult result;
  if (nic >= options_.num_nics) {
    result.error = "fake transport: no NIC " + std::to_string(nic);
    return result;
  }
  if (fail_open_.contains(nic)) {
    result.error = "fake transport: NIC " + std::to_string(nic) + " set to fail";
    return result;
  }
  open_[nic] = true;
  result.ok = true;
  result.capabilities.send_timestamps = options_.send_source;
  result.capabilities.recv_timestamps = options_.recv_source;
  return result;
}

void FakeTransport::FailSends(NicId nic, SendStatus status) {
  if (nic < send_status_.size()) send_status_[nic] = status;
}

std::int64_t FakeTransport::RealtimeNs(MonoTime at) const {
  const auto offset =
      clock_.RealtimeNow().time_since_epoch() - clock_.MonotonicNow().time_since_epoch();
  return (at.time_since_epoch() + offset).count();
}

void FakeTransport::Schedule(MonoTime visible, TransportEvent event) {
  events_.push_back(Scheduled{visible, next_order_++, std::move(event)});
  std::push_heap(events_.begin(), events_.end(), Later{});
}

SendResult FakeTransport::Send(const ProbeOrder& order, std::span<const std::uint8_t> payload) {
  const MonoTime now = clock_.MonotonicNow();
  SendResult result;
  result.app_send = {RealtimeNs(now), TimestampSource::kUser};
  if (order.src >= options_.num_nics || !open_[order.src]) {
    result.status = SendStatus::kFailed;
    result.error = EBADF;
    return result;
  }
  if (send_status_[order.src] != SendStatus::kOk) {
    result.status = send_status_[order.src];
    result.error = result.status == SendStatus::kRetryLater ? EAGAIN : ENETDOWN;
    return result;
  }
  result.status = SendStatus::kOk;
  ++sent_;

  const MonoTime nic_send = now + options_.nic_send_delay;
  const Timestamp nic_send_ts{RealtimeNs(nic_send), options_.send_source};
  if (options_.async_send_timestamps) {
    result.nic_send_pending = true;
    TransportEvent stamp;
    stamp.kind = TransportEvent::Kind::kSendTimestamp;
    stamp.nic = order.src;
    stamp.sequence = order.sequence;
    stamp.nic_time = nic_send_ts;
    Schedule(nic_send + options_.send_report_delay, std::move(stamp));
  } else {
    result.nic_send = nic_send_ts;
  }

  // A NIC nobody opened has no receiver: the packet is lost, as on a wire.
  if ((drop_ && drop_(order.src, order.dst, order.src_port)) || order.dst >= options_.num_nics ||
      !open_[order.dst]) {
    ++dropped_;
    return result;
  }
  const MonoTime nic_recv = nic_send + (delay_ ? delay_(order) : options_.one_way_delay);
  const MonoTime app_recv = nic_recv + options_.recv_app_delay;
  TransportEvent received;
  received.kind = TransportEvent::Kind::kReceived;
  received.nic = order.dst;
  received.nic_time = {RealtimeNs(nic_recv), options_.recv_source};
  received.app_time = {RealtimeNs(app_recv), TimestampSource::kUser};
  received.payload.assign(payload.begin(), payload.end());
  if (mutate_) mutate_(order, received.payload);
  Schedule(app_recv, std::move(received));
  return result;
}

void FakeTransport::Inject(NicId nic, std::vector<std::uint8_t> bytes, MonoTime at) {
  TransportEvent received;
  received.kind = TransportEvent::Kind::kReceived;
  received.nic = nic;
  received.nic_time = {RealtimeNs(at), options_.recv_source};
  received.app_time = {RealtimeNs(at), TimestampSource::kUser};
  received.payload = std::move(bytes);
  Schedule(at, std::move(received));
}

std::size_t FakeTransport::Poll(std::vector<TransportEvent>& out, std::size_t max_events) {
  const MonoTime now = clock_.MonotonicNow();
  ++polls_;
  std::size_t appended = 0;
  while (appended < max_events && !events_.empty() && events_.front().visible <= now) {
    std::pop_heap(events_.begin(), events_.end(), Later{});
    TransportEvent& event = events_.back().event;
    if (event.kind == TransportEvent::Kind::kReceived) ++delivered_;
    out.push_back(std::move(event));
    events_.pop_back();
    ++appended;
  }
  return appended;
}

std::optional<MonoTime> FakeTransport::NextEventTime() const {
  if (events_.empty()) return std::nullopt;
  return events_.front().visible;
}

}  // namespace hostmesh::agent
