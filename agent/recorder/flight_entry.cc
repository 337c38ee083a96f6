#include "agent/recorder/flight_entry.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace hostmesh::agent::recorder {
namespace {

template <typename T>
void Put(std::uint8_t* at, T v) {
  std::memcpy(at, &v, sizeof v);
}

template <typename T>
T Get(const std::uint8_t* at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

bool IsProbe(std::uint8_t kind) {
  return kind == static_cast<std::uint8_t>(FlightKind::kProbe);
}

}  // namespace

std::string_view FlightKindName(FlightKind kind) {
  switch (kind) {
    case FlightKind::kProbe:
      return "probe";
    case FlightKind::kTrace:
      return "trace";
    case FlightKind::kAsyncEvent:
      return "async_event";
    case FlightKind::kQpRecovery:
      return "qp_recovery";
    case FlightKind::kTransportReopen:
      return "transport_reopen";
    case FlightKind::kClockFit:
      return "clock_fit";
    case FlightKind::kCounters:
      return "counters";
    case FlightKind::kLog:
      return "log";
  }
  return "unknown";
}

std::string_view CutUtf8(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  // Back off continuation bytes (10xxxxxx) so the cut falls before a sequence.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

void Pack(const FlightEntry& e, std::span<std::uint8_t> out) {
  const std::string_view text =
      e.kind == FlightKind::kProbe ? std::string_view{} : CutUtf8(e.text, kMaxEntryText);
  std::uint8_t* p = out.data();
  p[0] = static_cast<std::uint8_t>(e.kind);
  p[1] = e.nic;
  Put<std::uint16_t>(p + 2, static_cast<std::uint16_t>(text.size()));
  Put<std::int64_t>(p + 4, e.time_ns);
  p[12] = e.peer_nic;
  p[13] = e.flags;
  Put<std::uint16_t>(p + 14, e.port);
  if (e.kind == FlightKind::kProbe) {
    // Over 2 s one way is as good as lost for a flight record: clamped.
    Put<std::int32_t>(p + 16, static_cast<std::int32_t>(std::clamp<std::int64_t>(
                                  e.value_ns, -1, std::numeric_limits<std::int32_t>::max())));
    return;
  }
  Put<std::int32_t>(p + 16, e.value);
  Put<std::int64_t>(p + 20, e.value_ns);
  if (!text.empty()) std::memcpy(p + kGenericBytes, text.data(), text.size());
}

FlightEntry Unpack(std::span<const std::uint8_t> in) {
  const std::uint8_t* p = in.data();
  FlightEntry e;
  e.kind = static_cast<FlightKind>(p[0]);
  e.nic = p[1];
  e.time_ns = PackedTimeAt(in);
  e.peer_nic = p[12];
  e.flags = p[13];
  e.port = Get<std::uint16_t>(p + 14);
  e.value = Get<std::int32_t>(p + 16);
  if (IsProbe(p[0])) {
    // A probe keeps its one-way time in the 32-bit value (-1: none).
    e.value_ns = e.value;
    e.value = 0;
    return e;
  }
  e.value_ns = Get<std::int64_t>(p + 20);
  const std::size_t len = Get<std::uint16_t>(p + 2);
  e.text = {reinterpret_cast<const char*>(p + kGenericBytes), len};
  return e;
}

void ToProto(const FlightEntry& e, v1::FlightEvent& out) {
  out.set_time_ns(e.time_ns);
  out.set_kind(static_cast<v1::FlightEvent::Kind>(e.kind));
  out.set_nic(e.nic);
  out.set_peer_nic(e.peer_nic);
  out.set_port(e.port);
  out.set_value_ns(e.value_ns);
  out.set_value(e.value);
  out.set_flags(e.flags);
  if (!e.text.empty()) out.set_text(std::string(e.text));
}

}  // namespace hostmesh::agent::recorder
