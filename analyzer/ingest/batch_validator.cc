#include "analyzer/ingest/batch_validator.h"

#include <algorithm>
#include <cstdint>

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

}  // namespace

std::string_view RejectReasonName(RejectReason reason) {
  static constexpr std::array<std::string_view, kRejectReasonCount> kNames = {
      "schema_version", "unknown_agent",      "bad_batch_seq",    "future_timestamp",
      "past_timestamp", "unknown_nic",        "too_many_results", "too_many_paths",
      "too_large",      "too_many_telemetry", "bad_telemetry",    "bad_result"};
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
  if (batch.agent_id().empty()) {
    return Rejection{RejectReason::kUnknownAgent, "batch has no agent_id"};
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
    const v1::ProbeResult& r = batch.results(i);
    const auto where = [i](std::string_view field) {
      return "result " + std::to_string(i) + ": " + std::string(field);
    };
    if (!InWindow(r.send_time_ns(), now, limits)) {
      return TimeRejection(where("send_time_ns"), r.send_time_ns(), now, limits);
    }
    if (!agent->Has(r.src_nic())) return CheckNic(where("src_nic"), r.src_nic(), *agent, batch);
    if (!agent->Has(r.dst_nic())) return CheckNic(where("dst_nic"), r.dst_nic(), *agent, batch);
    // Exclusive: a probe that never left its NIC cannot also have been lost on the way.
    if (r.timeout() && r.send_failed()) {
      return Rejection{RejectReason::kBadResult,
                       where("timeout") + " and send_failed are both set (one fate per probe)"};
    }
  }
  for (int i = 0; i < batch.paths_size(); ++i) {
    const v1::PathReport& p = batch.paths(i);
    const auto where = [i](std::string_view field) {
      return "path report " + std::to_string(i) + ": " + std::string(field);
    };
    if (!InWindow(p.time_ns(), now, limits)) {
      return TimeRejection(where("time_ns"), p.time_ns(), now, limits);
    }
    if (!agent->Has(p.src_nic())) return CheckNic(where("src_nic"), p.src_nic(), *agent, batch);
    if (!agent->Has(p.dst_nic())) return CheckNic(where("dst_nic"), p.dst_nic(), *agent, batch);
  }
  for (int i = 0; i < batch.telemetry_size(); ++i) {
    const v1::NicTelemetry& t = batch.telemetry(i);
    const auto where = [i](std::string_view field) {
      return "telemetry " + std::to_string(i) + ": " + std::string(field);
    };
    if (!InWindow(t.end_ns(), now, limits)) {
      return TimeRejection(where("end_ns"), t.end_ns(), now, limits);
    }
    if (t.start_ns() > t.end_ns()) {
      return Rejection{RejectReason::kBadTelemetry,
                       where("start_ns") + " " + std::to_string(t.start_ns()) +
                           " is after end_ns " + std::to_string(t.end_ns())};
    }
    if (!agent->Has(t.nic())) return CheckNic(where("nic"), t.nic(), *agent, batch);
  }
  return std::nullopt;
}

}  // namespace hostmesh::analyzer::ingest
