#include "analyzer/ingest/batch_validator.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdint>
#include <unordered_set>

#include "common/base/names.h"
#include "proto/wire/packed_results.h"

namespace hostmesh::analyzer::ingest {

namespace {

std::string Seconds(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s";
}

// time_ns - now, saturated: a time 2^63 ns off is as wrong as one 292 years off.
std::int64_t OffsetNs(std::int64_t time_ns, WallTime now) {
  std::int64_t offset = 0;
  if (__builtin_sub_overflow(time_ns, now.time_since_epoch().count(), &offset)) {
    return time_ns > 0 ? INT64_MAX : INT64_MIN + 1;
  }
  return std::max(offset, INT64_MIN + 1);  // so that -offset exists
}

bool InWindow(std::int64_t time_ns, WallTime now, const ValidationLimits& limits) {
  const std::int64_t offset = OffsetNs(time_ns, now);
  return offset <= limits.max_future.count() && -offset <= limits.max_age.count();
}

// Only called for a time outside the window.
Rejection TimeRejection(std::string_view what, std::int64_t time_ns, WallTime now,
                        const ValidationLimits& limits) {
  const std::chrono::nanoseconds offset{OffsetNs(time_ns, now)};
  if (offset > limits.max_future) {
    return {RejectReason::kFutureTimestamp,
            std::string(what) + " " + std::to_string(time_ns) + " is " + Seconds(offset) +
                " ahead of the analyzer's clock (limit " + Seconds(limits.max_future) + ")"};
  }
  return {RejectReason::kPastTimestamp, std::string(what) + " " + std::to_string(time_ns) + " is " +
                                            Seconds(-offset) + " old (limit " +
                                            Seconds(limits.max_age) + ")"};
}

std::optional<Rejection> CheckNic(std::string_view what, std::uint32_t id, const AgentNics& nics,
                                  const v1::UploadBatch& batch) {
  if (nics.Has(id)) return std::nullopt;
  return Rejection{RejectReason::kUnknownNic,
                   std::string(what) + " " + std::to_string(id) + " is not among the " +
                       std::to_string(nics.size()) + " NICs of the Hello of agent '" +
                       batch.agent_id() + "' boot " + std::to_string(batch.boot_id())};
}

// An address as the agent reports it: dotted IPv4 or IPv6 text.
bool ParsesAsIp(const std::string& text) {
  if (text.empty() || text.size() > INET6_ADDRSTRLEN) return false;
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, text.c_str(), buf) == 1 || inet_pton(AF_INET6, text.c_str(), buf) == 1;
}

// A timestamp of a result (0: not available) within max_probe_span of its send time.
bool NearSend(std::int64_t t, std::int64_t send_ns, const ValidationLimits& limits) {
  if (t == 0) return true;
  std::int64_t d = 0;
  if (__builtin_sub_overflow(t, send_ns, &d)) return false;
  return d <= limits.max_probe_span.count() && d >= -limits.max_probe_span.count();
}

std::optional<Rejection> CheckResult(const v1::ProbeResult& r, int i, const AgentNics& agent,
                                     const v1::UploadBatch& batch, WallTime now,
                                     const ValidationLimits& limits) {
  const auto where = [i](std::string_view field) {
    return "result " + std::to_string(i) + ": " + std::string(field);
  };
  const auto bad = [&](std::string_view field, const std::string& why) {
    return Rejection{RejectReason::kBadResult, where(field) + " " + why};
  };
  if (!InWindow(r.send_time_ns(), now, limits)) {
    return TimeRejection(where("send_time_ns"), r.send_time_ns(), now, limits);
  }
  if (!agent.Has(r.src_nic())) return CheckNic(where("src_nic"), r.src_nic(), agent, batch);
  if (!agent.Has(r.dst_nic())) return CheckNic(where("dst_nic"), r.dst_nic(), agent, batch);
  // Exclusive: a probe that never left its NIC cannot also have been lost on the way.
  if (r.timeout() && r.send_failed()) {
    return bad("timeout", "and send_failed are both set (one fate per probe)");
  }
  if (r.src_port() > 65535 || r.dst_port() > 65535) {
    return bad(r.src_port() > 65535 ? "src_port" : "dst_port", "is not a UDP port");
  }
  for (const auto& [field, t] :
       {std::pair{"app_send_ns", r.app_send_ns()}, std::pair{"nic_send_ns", r.nic_send_ns()},
        std::pair{"nic_recv_ns", r.nic_recv_ns()}, std::pair{"app_recv_ns", r.app_recv_ns()}}) {
    if (!NearSend(t, r.send_time_ns(), limits)) {
      return bad(field, std::to_string(t) + " is more than " + Seconds(limits.max_probe_span) +
                            " from send_time_ns " + std::to_string(r.send_time_ns()));
    }
  }
  if (r.timestamp_error_ns() < 0 || r.timestamp_error_ns() > limits.max_probe_span.count()) {
    return bad("timestamp_error_ns",
               std::to_string(r.timestamp_error_ns()) + " is not a bound on a clock error");
  }
  // Every difference the analysis takes is now far from overflow. A receive
  // stamp before its send is not refused here: ClearContradictoryStamps.
  return std::nullopt;
}

std::optional<Rejection> CheckPath(const v1::PathReport& p, int i, const AgentNics& agent,
                                   const v1::UploadBatch& batch, WallTime now,
                                   const ValidationLimits& limits) {
  const auto where = [i](std::string_view field) {
    return "path report " + std::to_string(i) + ": " + std::string(field);
  };
  const auto bad = [&](const std::string& field, const std::string& why) {
    return Rejection{RejectReason::kBadPath, where(field) + " " + why};
  };
  if (!InWindow(p.time_ns(), now, limits)) {
    return TimeRejection(where("time_ns"), p.time_ns(), now, limits);
  }
  if (!agent.Has(p.src_nic())) return CheckNic(where("src_nic"), p.src_nic(), agent, batch);
  if (!agent.Has(p.dst_nic())) return CheckNic(where("dst_nic"), p.dst_nic(), agent, batch);
  if (static_cast<std::size_t>(p.hops_size()) > limits.max_hops) {
    return bad("hops", "holds " + std::to_string(p.hops_size()) + " hops (limit " +
                           std::to_string(limits.max_hops) + ")");
  }
  if (!ParsesAsIp(p.src_ip())) return bad("src_ip", "is not an IP address");
  if (!ParsesAsIp(p.dst_ip())) return bad("dst_ip", "is not an IP address");
  if (p.src_port() > 65535 || p.dst_port() > 65535 || p.protocol() > 255) {
    return bad("src_port", "dst_port or protocol is out of range");
  }
  for (int h = 0; h < p.hops_size(); ++h) {
    const v1::Hop& hop = p.hops(h);
    const std::string field = "hops[" + std::to_string(h) + "]";
    if (hop.ttl() > 255) return bad(field + ".ttl", "is over 255");
    if (!hop.address().empty() && !ParsesAsIp(hop.address())) {
      return bad(field + ".address", "is neither empty nor an IP address");
    }
    if (hop.rtt_ns() < 0 || hop.rtt_ns() > limits.max_probe_span.count()) {
      return bad(field + ".rtt_ns", std::to_string(hop.rtt_ns()) + " is not a round-trip time");
    }
  }
  return std::nullopt;
}

std::optional<Rejection> CheckTelemetry(const v1::NicTelemetry& t, int i, const AgentNics& agent,
                                        const v1::UploadBatch& batch, WallTime now,
                                        const ValidationLimits& limits) {
  const auto where = [i](std::string_view field) {
    return "telemetry " + std::to_string(i) + ": " + std::string(field);
  };
  if (!InWindow(t.end_ns(), now, limits)) {
    return TimeRejection(where("end_ns"), t.end_ns(), now, limits);
  }
  // A read interval is at most telemetry.period (1 h); a day bounds it with room.
  constexpr std::int64_t kMaxIntervalNs = 24 * 3600 * 1'000'000'000LL;
  std::int64_t interval = 0;
  if (t.start_ns() <= t.end_ns() &&
      (__builtin_sub_overflow(t.end_ns(), t.start_ns(), &interval) || interval > kMaxIntervalNs)) {
    return Rejection{RejectReason::kBadTelemetry,
                     where("start_ns") + " " + std::to_string(t.start_ns()) +
                         " is more than a day before end_ns " + std::to_string(t.end_ns())};
  }
  if (t.start_ns() > t.end_ns()) {
    return Rejection{RejectReason::kBadTelemetry,
                     where("start_ns") + " " + std::to_string(t.start_ns()) + " is after end_ns " +
                         std::to_string(t.end_ns())};
  }
  if (!agent.Has(t.nic())) return CheckNic(where("nic"), t.nic(), agent, batch);
  if (static_cast<std::size_t>(t.deltas_size()) > limits.max_counter_deltas) {
    return Rejection{RejectReason::kBadTelemetry,
                     where("deltas") + " holds " + std::to_string(t.deltas_size()) +
                         " counters (limit " + std::to_string(limits.max_counter_deltas) + ")"};
  }
  for (int d = 0; d < t.deltas_size(); ++d) {
    if (t.deltas(d).has_priority() && t.deltas(d).priority() > 7) {
      return Rejection{
          RejectReason::kBadTelemetry,
          where("deltas[" + std::to_string(d) + "].priority") + " is not a PFC priority (0..7)"};
    }
  }
  return std::nullopt;
}

// Sizes first (events, encoded bytes), then the fields, then each event's.
std::optional<Rejection> CheckFlightRecord(const v1::FlightRecord& f, int i, WallTime now,
                                           const ValidationLimits& limits) {
  const auto bad = [i](const std::string& field, const std::string& why) {
    return Rejection{RejectReason::kBadFlightRecord,
                     "flight record " + std::to_string(i) + ": " + field + " " + why};
  };
  if (static_cast<std::size_t>(f.events_size()) > limits.max_flight_events) {
    return bad("events", "holds " + std::to_string(f.events_size()) + " events (limit " +
                             std::to_string(limits.max_flight_events) + ")");
  }
  const std::size_t bytes = f.ByteSizeLong();
  if (bytes > limits.max_flight_record_bytes) {
    return bad("", "is " + std::to_string(bytes) + " bytes (limit " +
                       std::to_string(limits.max_flight_record_bytes) + ")");
  }
  if (f.incident_id() == 0) return bad("incident_id", "is 0 (local captures are not uploaded)");
  std::int64_t span = 0;
  if (f.from_ns() >= f.to_ns() || __builtin_sub_overflow(f.to_ns(), f.from_ns(), &span) ||
      span > limits.max_flight_range.count()) {
    return bad("from_ns", std::to_string(f.from_ns()) + " to to_ns " + std::to_string(f.to_ns()) +
                              " is not a range of at most " + Seconds(limits.max_flight_range));
  }
  if (!InWindow(f.to_ns(), now, limits)) {
    return TimeRejection("flight record " + std::to_string(i) + ": to_ns", f.to_ns(), now, limits);
  }
  for (int e = 0; e < f.events_size(); ++e) {
    const v1::FlightEvent& event = f.events(e);
    const std::string field = "events[" + std::to_string(e) + "]";
    if (event.text().size() > limits.max_flight_text_bytes) {
      return bad(field + ".text", "is " + std::to_string(event.text().size()) + " bytes (limit " +
                                      std::to_string(limits.max_flight_text_bytes) + ")");
    }
    if (!v1::FlightEvent::Kind_IsValid(event.kind()) ||
        event.kind() == v1::FlightEvent::KIND_UNSPECIFIED) {
      return bad(field + ".kind",
                 std::to_string(static_cast<int>(event.kind())) + " is not a flight event kind");
    }
  }
  return std::nullopt;
}

// A short text of printable characters, or why not.
std::optional<std::string> CheckShortText(const std::string& value, std::size_t limit) {
  if (value.size() > limit) {
    return "is " + std::to_string(value.size()) + " bytes (limit " + std::to_string(limit) + ")";
  }
  for (const char c : value) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "holds a control character";
  }
  return std::nullopt;
}

// A rate in (0, 1] (NaN fails both tests), a short printable cause and
// signal name, and a since that is not in the future (a step may have been
// taken days ago).
std::optional<Rejection> CheckLoadShedding(const v1::LoadShedding& s, WallTime now,
                                           const ValidationLimits& limits) {
  const auto bad = [](const std::string& why) {
    return Rejection{RejectReason::kBadLoadShedding, "load_shedding." + why};
  };
  if (!(s.rate_fraction() > 0.0 && s.rate_fraction() <= 1.0)) {
    return bad("rate_fraction " + std::to_string(s.rate_fraction()) + " is not in (0, 1]");
  }
  if (auto why = CheckShortText(s.cause(), kMaxSheddingCauseBytes)) return bad("cause " + *why);
  if (auto why = CheckShortText(s.signal(), kMaxSheddingSignalBytes)) return bad("signal " + *why);
  const std::int64_t ahead = s.since_ns() - now.time_since_epoch().count();
  if (s.since_ns() < 0 || ahead > limits.max_future.count()) {
    return bad("since_ns " + std::to_string(s.since_ns()) + " is negative or in the future");
  }
  return std::nullopt;
}

}  // namespace

std::string_view RejectReasonName(RejectReason reason) {
  static constexpr std::array<std::string_view, kRejectReasonCount> kNames = {
      "schema_version",     "unknown_agent",     "bad_batch_seq",
      "future_timestamp",   "past_timestamp",    "unknown_nic",
      "too_many_results",   "too_many_paths",    "too_large",
      "too_many_telemetry", "bad_telemetry",     "bad_result",
      "bad_agent_id",       "bad_path",          "too_many_flight_records",
      "bad_flight_record",  "bad_load_shedding", "unasked_flight_record"};
  return kNames[static_cast<std::size_t>(reason)];
}

AgentNics::AgentNics(const v1::AgentHello& hello) {
  for (const v1::Nic& nic : hello.nics()) {
    if (nic.id() < 64) {
      low_ |= std::uint64_t{1} << nic.id();
    } else {
      high_.push_back(nic.id());
    }
  }
  std::sort(high_.begin(), high_.end());
  high_.erase(std::unique(high_.begin(), high_.end()), high_.end());
  count_ = static_cast<std::size_t>(__builtin_popcountll(low_)) + high_.size();
}

std::optional<std::string> CheckSchemaVersion(v1::SchemaVersion version) {
  if (version == v1::SCHEMA_VERSION_1) return std::nullopt;
  return "schema version " + std::to_string(static_cast<int>(version)) +
         " is not supported (this analyzer speaks " + std::to_string(v1::SCHEMA_VERSION_1) + ")";
}

std::optional<Rejection> ExpandPacked(v1::UploadBatch& batch, std::size_t encoded_bytes,
                                      const ValidationLimits& limits) {
  // Too large: ValidateBatch refuses it without a walk.
  if (encoded_bytes > limits.max_batch_bytes) return std::nullopt;
  std::optional<wire::ExpandError> error = wire::ExpandPackedResults(batch, limits.max_results);
  if (!error) return std::nullopt;
  return Rejection{error->too_many ? RejectReason::kTooManyResults : RejectReason::kBadResult,
                   std::move(error->message)};
}

std::optional<Rejection> ValidateBatch(const v1::UploadBatch& batch, std::size_t encoded_bytes,
                                       const AgentNics* agent, WallTime now,
                                       const ValidationLimits& limits) {
  if (auto error = CheckSchemaVersion(batch.schema_version())) {
    return Rejection{RejectReason::kSchemaVersion, *error};
  }
  // Sizes before anything that walks the items.
  if (encoded_bytes > limits.max_batch_bytes) {
    return Rejection{RejectReason::kTooLarge, "batch is " + std::to_string(encoded_bytes) +
                                                  " bytes (limit " +
                                                  std::to_string(limits.max_batch_bytes) + ")"};
  }
  if (static_cast<std::size_t>(batch.results_size()) > limits.max_results) {
    return Rejection{RejectReason::kTooManyResults,
                     "batch holds " + std::to_string(batch.results_size()) + " results (limit " +
                         std::to_string(limits.max_results) + ")"};
  }
  if (static_cast<std::size_t>(batch.paths_size()) > limits.max_paths) {
    return Rejection{RejectReason::kTooManyPaths,
                     "batch holds " + std::to_string(batch.paths_size()) + " path reports (limit " +
                         std::to_string(limits.max_paths) + ")"};
  }
  if (static_cast<std::size_t>(batch.telemetry_size()) > limits.max_telemetry) {
    return Rejection{RejectReason::kTooManyTelemetry,
                     "batch holds " + std::to_string(batch.telemetry_size()) +
                         " NIC telemetry records (limit " + std::to_string(limits.max_telemetry) +
                         ")"};
  }
  if (static_cast<std::size_t>(batch.flight_records_size()) > limits.max_flight_records) {
    return Rejection{RejectReason::kTooManyFlightRecords,
                     "batch holds " + std::to_string(batch.flight_records_size()) +
                         " flight records (limit " + std::to_string(limits.max_flight_records) +
                         ")"};
  }
  if (batch.agent_id().empty()) {
    return Rejection{RejectReason::kUnknownAgent, "batch has no agent_id"};
  }
  if (auto why = CheckName(batch.agent_id())) {
    return Rejection{RejectReason::kBadAgentId, "agent_id " + *why};
  }
  if (agent == nullptr) {
    return Rejection{RejectReason::kUnknownAgent, "agent '" + batch.agent_id() + "' boot " +
                                                      std::to_string(batch.boot_id()) +
                                                      " has not said Hello"};
  }
  if (batch.batch_seq() == 0) {
    return Rejection{RejectReason::kBadBatchSeq, "batch_seq is 0 (sequences start at 1)"};
  }
  if (!InWindow(batch.created_ns(), now, limits)) {
    return TimeRejection("created_ns", batch.created_ns(), now, limits);
  }
  // The messages are built only for the item that fails: the loop over 1000s of
  // good results allocates nothing.
  for (int i = 0; i < batch.results_size(); ++i) {
    if (auto r = CheckResult(batch.results(i), i, *agent, batch, now, limits)) return r;
  }
  for (int i = 0; i < batch.paths_size(); ++i) {
    if (auto r = CheckPath(batch.paths(i), i, *agent, batch, now, limits)) return r;
  }
  for (int i = 0; i < batch.telemetry_size(); ++i) {
    if (auto r = CheckTelemetry(batch.telemetry(i), i, *agent, batch, now, limits)) return r;
  }
  for (int i = 0; i < batch.flight_records_size(); ++i) {
    if (auto r = CheckFlightRecord(batch.flight_records(i), i, now, limits)) return r;
  }
  if (batch.has_load_shedding()) {
    if (auto r = CheckLoadShedding(batch.load_shedding(), now, limits)) return r;
  }
  return std::nullopt;
}

std::optional<std::string> ValidateHello(const v1::AgentHello& hello, std::size_t encoded_bytes,
                                         const ValidationLimits& limits) {
  if (encoded_bytes > limits.max_hello_bytes) {
    return "Hello is " + std::to_string(encoded_bytes) + " bytes (limit " +
           std::to_string(limits.max_hello_bytes) + ")";
  }
  if (static_cast<std::size_t>(hello.nics_size()) > limits.max_nics) {
    return "nics: " + std::to_string(hello.nics_size()) + " NICs (limit " +
           std::to_string(limits.max_nics) + ")";
  }
  if (auto why = CheckName(hello.agent_id())) return "agent_id " + *why;
  if (auto why = CheckName(hello.host())) return "host " + *why;
  if (hello.agent_version().size() > kMaxNameBytes) {
    return "agent_version is " + std::to_string(hello.agent_version().size()) + " bytes (limit " +
           std::to_string(kMaxNameBytes) + ")";
  }
  std::unordered_set<std::uint32_t> ids;
  std::unordered_set<std::string_view> names;
  for (int i = 0; i < hello.nics_size(); ++i) {
    const v1::Nic& nic = hello.nics(i);
    const std::string where = "nics[" + std::to_string(i) + "].";
    if (!ids.insert(nic.id()).second) {
      return where + "id " + std::to_string(nic.id()) + " is listed twice";
    }
    if (auto why = CheckName(nic.name())) return where + "name " + *why;
    if (!names.insert(nic.name()).second)
      return where + "name '" + nic.name() + "' is listed twice";
    if (!ParsesAsIp(nic.ip())) return where + "ip is not an IP address";
    for (const auto& [field, value] :
         {std::pair{"netdev", &nic.netdev()}, std::pair{"rdma_device", &nic.rdma_device()},
          std::pair{"gid", &nic.gid()}}) {
      if (value->empty()) continue;
      if (auto why = CheckName(*value, 64)) return where + field + " " + *why;
    }
  }
  return std::nullopt;
}

namespace {

// A later stamp that reads earlier than its pair by more than clock error allows.
constexpr std::int64_t kStampSlackNs = 1'000'000;

// Both nonzero, and `later` before `earlier` beyond `error` and the slack.
// Called on validated results only: no sum here can overflow.
bool Contradict(std::int64_t earlier, std::int64_t later, std::int64_t error) {
  return earlier != 0 && later != 0 && later + error + kStampSlackNs < earlier;
}

}  // namespace

std::size_t ClearContradictoryStamps(v1::UploadBatch& batch) {
  std::size_t cleared = 0;
  for (v1::ProbeResult& r : *batch.mutable_results()) {
    if (Contradict(r.nic_send_ns(), r.nic_recv_ns(), r.timestamp_error_ns())) {
      r.set_nic_send_ns(0);
      r.set_nic_recv_ns(0);
      ++cleared;
    }
    if (Contradict(r.app_send_ns(), r.app_recv_ns(), 0)) {
      r.set_app_send_ns(0);
      r.set_app_recv_ns(0);
      ++cleared;
    }
  }
  return cleared;
}

}  // namespace hostmesh::analyzer::ingest
