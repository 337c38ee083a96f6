// The verbs transport's completions: polling each NIC's CQ into send
// timestamps, failures and received probes, and the probes a failed QP or
// CQ takes with it.
#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>

#include "agent/verbs/verbs_transport.h"
#include "agent/verbs/verbs_transport_parts.h"

namespace hostmesh::agent::verbs {

using namespace transport_internal;

std::size_t VerbsTransport::FailInFlight(Nic& nic, std::optional<std::uint32_t> qp_index,
                                         int error) {
  std::size_t dropped = 0;
  for (std::uint32_t slot = 0; slot < nic.send_slots.size(); ++slot) {
    Nic::SendSlot& sent = nic.send_slots[slot];
    if (!sent.busy || (qp_index && sent.qp != *qp_index)) continue;
    sent.busy = false;
    nic.free_send_slots.push_back(slot);
    nic.res.ahs.ReleaseInFlight(sent.key);
    TransportEvent ev;
    ev.kind = TransportEvent::Kind::kSendFailed;
    ev.nic = nic.id;
    ev.sequence = sent.sequence;
    ev.error = error;
    backlog_.push_back(std::move(ev));
    ++dropped;
  }
  return dropped;
}

std::size_t VerbsTransport::Poll(std::vector<TransportEvent>& out, std::size_t max_events) {
  // Not only when some NIC is open: a NIC whose reopen failed is retried here.
  if (max_events == 0 || nics_.empty()) return 0;
  DrainReadyFd();
  CollectAddressHandles();
  const MonoTime now = clock_.MonotonicNow();
  for (NicId id : open_order_) {
    Nic& nic = *nics_[id];
    if (nic.clock && now >= nic.next_sample) SampleClock(nic);
  }
  const std::size_t before = out.size();
  bool left_work = false;
  if (!backlog_.empty()) {
    const std::size_t take = std::min(max_events, backlog_.size());
    std::move(backlog_.begin(), backlog_.begin() + static_cast<std::ptrdiff_t>(take),
              std::back_inserter(out));
    backlog_.erase(backlog_.begin(), backlog_.begin() + static_cast<std::ptrdiff_t>(take));
    left_work = !backlog_.empty();
  }
  const std::size_t n = nics_.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t appended = out.size() - before;
    if (appended >= max_events) {
      left_work = true;
      break;
    }
    const std::size_t id = (next_poll_nic_ + k) % n;
    // A failed CQ only returns errors until the NIC is reopened.
    if (nics_[id] && !nics_[id]->health->failed()) {
      PollNic(*nics_[id], out, max_events - appended, left_work);
    }
  }
  next_poll_nic_ = (next_poll_nic_ + 1) % n;
  // After the polls, so the flushed completions of a QP in error are read
  // before its reset discards what is left.
  for (NicId id = 0; id < health_.size(); ++id) MaintainHealth(id);
  if (!backlog_.empty()) left_work = true;
  // The completion channel only fires for new completions: whatever stays in
  // a CQ must keep the ready fd readable, or the loop would sleep on it.
  if (left_work) WakeLater();
  return out.size() - before;
}

Timestamp VerbsTransport::CompletionTime(Nic& nic, const Completion& c, std::int64_t poll_ns) {
  if (nic.res.cq.mode() == CompletionTimestampMode::kWallclock && c.wallclock_ns != 0) {
    return Timestamp{static_cast<std::int64_t>(c.wallclock_ns), TimestampSource::kHardware};
  }
  if (nic.clock) {
    if (auto host = nic.clock->ToHostNs(c.raw_ts))
      return Timestamp{*host, TimestampSource::kHardware};
    ++stats_[nic.id].unmapped_timestamps;
  }
  return Timestamp{poll_ns, TimestampSource::kUser};
}

void VerbsTransport::PollNic(Nic& nic, std::vector<TransportEvent>& out, std::size_t budget,
                             bool& left_work) {
  VerbsNicStats& stats = stats_[nic.id];
  std::array<Completion, 32> batch{};
  while (budget > 0) {
    const std::size_t want = std::min(budget, batch.size());
    const CqPollResult polled = nic.res.cq.Poll(std::span(batch.data(), want));
    // The software stand-in for (2) and (3): when the application learned of them.
    const std::int64_t poll_ns = Ns(clock_.RealtimeNow());
    for (std::size_t i = 0; i < polled.count; ++i) {
      const Completion& c = batch[i];
      const auto slot = static_cast<std::uint32_t>(c.wr_id & 0xFFFFFFFFu);
      const std::uint64_t kind = c.wr_id >> 32;
      if (kind == kSendKind && slot < nic.send_slots.size()) {
        OnSendCompletion(nic, slot, c, poll_ns, out);
      } else if (kind == kRecvKind && slot < nic.recv_slots) {
        OnReceiveCompletion(nic, slot, c, poll_ns, out);
      }
    }
    budget -= polled.count;
    if (polled.error == EBUSY) {
      ++stats.poll_busy;
      left_work = true;
      return;
    }
    if (polled.error != 0) {
      ++stats.poll_errors;
      Log()->warn("nic {}: polling the CQ failed: {}", nic.config.name,
                  std::strerror(polled.error));
      return;
    }
    if (polled.count < want) return;  // drained
  }
  left_work = true;
}

// A send's completion: its NIC timestamp (2), or its failure.
void VerbsTransport::OnSendCompletion(Nic& nic, std::uint32_t slot, const Completion& c,
                                      std::int64_t poll_ns, std::vector<TransportEvent>& out) {
  VerbsNicStats& stats = stats_[nic.id];
  const Nic::SendSlot sent = nic.send_slots[slot];
  if (!sent.busy) {
    // Its QP was reset after the probe had been reported failed.
    ++stats.stale_completions;
    return;
  }
  nic.send_slots[slot].busy = false;
  nic.free_send_slots.push_back(slot);
  nic.res.ahs.ReleaseInFlight(sent.key);
  TransportEvent ev;
  ev.nic = nic.id;
  ev.sequence = sent.sequence;
  if (c.status == IBV_WC_SUCCESS) {
    ev.kind = TransportEvent::Kind::kSendTimestamp;
    ev.nic_time = CompletionTime(nic, c, poll_ns);
  } else {
    ++stats.send_completion_errors;
    ev.kind = TransportEvent::Kind::kSendFailed;
    ev.error = static_cast<int>(c.status);
    Log()->debug("nic {}: send {} failed: {} (vendor {:#x})", nic.config.name, sent.sequence,
                 ibv_wc_status_str(c.status), c.vendor_err);
    // An error completion may have put the QP in the error state (and a
    // flush says it is there), whether or not the device raises an event.
    CheckQpAfterError(nic, sent.qp);
  }
  out.push_back(std::move(ev));
}

// A receive's completion: a probe with its NIC timestamp (3), then the slot
// posted again.
void VerbsTransport::OnReceiveCompletion(Nic& nic, std::uint32_t slot, const Completion& c,
                                         std::int64_t poll_ns, std::vector<TransportEvent>& out) {
  VerbsNicStats& stats = stats_[nic.id];
  if (c.status != IBV_WC_WR_FLUSH_ERR && nic.recv_level.OnConsumed()) {
    // Every posted receive was used before this poll: whatever arrived
    // after the last one was dropped by the device, unseen.
    if (stats.receive_queue_empty++ == 0) {
      Log()->warn(
          "nic {}: its receive queue ran empty ({} receives used between two polls); probes "
          "arriving then were dropped and read as loss: the agent polls too late (CPU?)",
          nic.config.name, nic.recv_slots);
    }
  }
  if (c.status == IBV_WC_SUCCESS && c.byte_len >= kGrhBytes) {
    ++stats.receives;
    TransportEvent ev;
    ev.kind = TransportEvent::Kind::kReceived;
    ev.nic = nic.id;
    ev.nic_time = CompletionTime(nic, c, poll_ns);
    const std::uint8_t* data = nic.recv_slot(slot) + kGrhBytes;
    ev.payload.assign(data, data + (c.byte_len - kGrhBytes));
    ev.app_time = Timestamp{Ns(clock_.RealtimeNow()), TimestampSource::kUser};
    out.push_back(std::move(ev));
  } else {
    ++stats.receive_errors;
    if (c.status != IBV_WC_SUCCESS) CheckQpAfterError(nic, 0);
  }
  // A flushed receive means the QP is in error: reposting would only flush again.
  if (c.status != IBV_WC_WR_FLUSH_ERR && !PostReceive(nic, slot)) {
    ++stats.receive_repost_failures;
  }
}

}  // namespace hostmesh::agent::verbs
