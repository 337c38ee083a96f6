#include "agent/recorder/flight_recorder.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace hostmesh::agent::recorder {
namespace {

std::uint8_t Nic8(std::uint32_t nic) {
  return static_cast<std::uint8_t>(std::min<std::uint32_t>(nic, 255));
}

// "rx_fcs_errors" from NIC_COUNTER_RX_FCS_ERRORS: short, as operators read it.
std::string CounterName(v1::NicCounter counter) {
  std::string name = v1::NicCounter_Name(counter);
  constexpr std::string_view kPrefix = "NIC_COUNTER_";
  if (name.starts_with(kPrefix)) name.erase(0, kPrefix.size());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name.empty()) name = std::to_string(static_cast<int>(counter));
  return name;
}

// Bytes a FlightEvent adds to its record: the message, its tag and length.
std::size_t EncodedEventBytes(const v1::FlightEvent& event) {
  const std::size_t n = event.ByteSizeLong();
  return n + 1 + (n < 128 ? 1 : 2);
}

}  // namespace

std::int64_t OneWayNs(const ProbeResult& r) {
  if (r.timeout || r.send_failed) return -1;
  if (r.nic_send_ns != 0 && r.nic_recv_ns != 0) return r.nic_recv_ns - r.nic_send_ns;
  if (r.app_send_ns != 0 && r.app_recv_ns != 0) return r.app_recv_ns - r.app_send_ns;
  return -1;
}

FlightRecorder::FlightRecorder(const Clock& clock, std::size_t capacity_bytes)
    : clock_(clock), ring_(capacity_bytes) {}

void FlightRecorder::Record(FlightEntry entry) {
  std::lock_guard lock(mu_);
  PushLocked(entry);
}

void FlightRecorder::PushLocked(FlightEntry& entry) {
  if (entry.time_ns == 0) entry.time_ns = clock_.RealtimeNow().time_since_epoch().count();
  ring_.Push(entry);
}

void FlightRecorder::RecordProbe(const ProbeResult& r) {
  RecordProbes(std::span<const ProbeResult>(&r, 1));
}

void FlightRecorder::RecordProbes(std::span<const ProbeResult> results) {
  std::lock_guard lock(mu_);
  for (const ProbeResult& r : results) {
    FlightEntry e;
    e.kind = FlightKind::kProbe;
    e.time_ns = r.send_time_ns;
    e.nic = Nic8(r.src_nic);
    e.peer_nic = Nic8(r.dst_nic);
    e.port = r.src_port;
    e.flags = static_cast<std::uint8_t>((r.timeout ? kProbeTimeout : 0) |
                                        (r.send_failed ? kProbeSendFailed : 0));
    e.value_ns = OneWayNs(r);
    PushLocked(e);
  }
}

void FlightRecorder::RecordPath(const tracer::PathReport& report) {
  // The hops as "1:10.0.0.1 2:* ...": enough to see where a path changed.
  std::string text;
  for (const tracer::Hop& hop : report.hops) {
    if (!text.empty()) text += ' ';
    text += std::to_string(hop.ttl) + ':' + (hop.address.IsZero() ? "*" : hop.address.ToString());
    if (text.size() > kMaxEntryText) break;
  }
  FlightEntry e;
  e.kind = FlightKind::kTrace;
  e.time_ns = report.time.time_since_epoch().count();
  e.nic = Nic8(report.src_nic);
  e.peer_nic = Nic8(report.dst_nic);
  e.port = report.tuple.sport;
  e.value = static_cast<std::int32_t>(report.hops.size());
  e.flags = static_cast<std::uint8_t>((report.changed ? kTraceChanged : 0) |
                                      (report.reached_destination ? kTraceReached : 0));
  e.text = text;
  Record(e);
}

void FlightRecorder::RecordCounters(const v1::NicTelemetry& t) {
  // Only what moved: a quiet NIC's read is one short entry.
  std::string text;
  for (const v1::CounterDelta& d : t.deltas()) {
    if (d.delta() == 0) continue;
    if (!text.empty()) text += ' ';
    text += CounterName(d.counter());
    if (d.has_priority()) text += '[' + std::to_string(d.priority()) + ']';
    text += '=' + std::to_string(d.delta());
    if (text.size() > kMaxEntryText) break;
  }
  FlightEntry e;
  e.kind = FlightKind::kCounters;
  e.time_ns = t.end_ns();
  e.nic = Nic8(t.nic());
  e.value = static_cast<std::int32_t>(t.port_state());
  e.flags = static_cast<std::uint8_t>(t.carrier());
  e.value_ns = t.end_ns() - t.start_ns();
  e.text = text;
  Record(e);
}

void FlightRecorder::RecordLog(std::string_view component, std::string_view level,
                               std::string_view line) {
  std::string text;
  text.reserve(component.size() + level.size() + line.size() + 4);
  text.append(level).append(" [").append(component).append("] ").append(line);
  FlightEntry e;
  e.kind = FlightKind::kLog;
  e.text = text;
  Record(e);
}

v1::FlightRecord FlightRecorder::Extract(std::uint64_t incident_id, std::int64_t from_ns,
                                         std::int64_t to_ns, const ExtractLimits& limits) const {
  v1::FlightRecord out;
  Extract(incident_id, from_ns, to_ns, limits, out);
  return out;
}

void FlightRecorder::Extract(std::uint64_t incident_id, std::int64_t from_ns, std::int64_t to_ns,
                             const ExtractLimits& limits, v1::FlightRecord& out) const {
  // Copied out under the lock (a memcpy of at most the ring), encoded after it,
  // so sources never wait for the encoding.
  RingSlice slice;
  {
    std::lock_guard lock(mu_);
    slice = ring_.Slice(from_ns, to_ns);
  }
  std::vector<std::size_t> offsets;
  offsets.reserve(slice.events);
  for (std::size_t at = 0; at < slice.bytes.size();) {
    offsets.push_back(at);
    at += PackedSizeAt(std::span<const std::uint8_t>(slice.bytes).subspan(at));
  }
  // The newest events matter most (the incident is at the end): keep a suffix.
  v1::FlightEvent scratch;
  std::size_t bytes = 64;  // the record's own fields
  std::size_t first = offsets.size();
  while (first > 0 && offsets.size() - first < limits.max_events) {
    scratch.Clear();
    ToProto(Unpack(std::span<const std::uint8_t>(slice.bytes).subspan(offsets[first - 1])),
            scratch);
    const std::size_t add = EncodedEventBytes(scratch);
    if (bytes + add > limits.max_bytes) break;
    bytes += add;
    --first;
  }
  out.Clear();
  out.set_incident_id(incident_id);
  out.set_from_ns(from_ns);
  out.set_to_ns(to_ns);
  out.set_dropped_before(slice.dropped_before);
  out.set_truncated(first > 0);
  out.mutable_events()->Reserve(static_cast<int>(offsets.size() - first));
  for (std::size_t i = first; i < offsets.size(); ++i) {
    ToProto(Unpack(std::span<const std::uint8_t>(slice.bytes).subspan(offsets[i])),
            *out.add_events());
  }
  // The ring is in the order events were recorded: a probe is recorded when
  // its outcome is known, up to the probe timeout after the send time it
  // carries. Readers get them by time.
  auto& events = *out.mutable_events();
  std::stable_sort(events.pointer_begin(), events.pointer_end(),
                   [](const v1::FlightEvent* a, const v1::FlightEvent* b) {
                     return a->time_ns() < b->time_ns();
                   });
}

RingCounters FlightRecorder::counters() const {
  std::lock_guard lock(mu_);
  return ring_.counters();
}

}  // namespace hostmesh::agent::recorder
