#include "analyzer/config/analyzer_config.h"

#include <algorithm>
#include <array>
#include <string>
#include <tuple>

#include "common/config/log_level_names.h"
#include "common/config/map_reader.h"
#include "common/config/yaml_loader.h"

namespace hostmesh::analyzer {
namespace {

using namespace std::chrono_literals;
using config::kLogLevelNames;
using config::LowerBound;
using config::MapReader;
using config::Range;

// A confidence map: a list of {raw, p} points (analysis/confidence_calibration.h).
// Absent keeps the default; an empty list is the identity (confidence = raw).
void ReadConfidenceMap(MapReader& m, std::string_view key, analysis::ConfidenceMap* out) {
  std::vector<analysis::CalibrationPoint> points;
  bool items_ok = true;
  const bool present = m.Has(key);
  const bool list_ok = m.List(key, [&](MapReader& item) {
    analysis::CalibrationPoint pt;
    items_ok &= item.Required("raw", &pt.raw, Range{0.0, 1.0});
    items_ok &= item.Required("p", &pt.p, Range{0.0, 1.0});
    points.push_back(pt);
  });
  if (!present || !list_ok || !items_ok) return;
  if (const auto why = analysis::ConfidenceMap::Validate(points)) {
    m.Fail(key, *why + " (points sorted by raw, p non-decreasing)");
    return;
  }
  *out = analysis::ConfidenceMap(std::move(points));
}

// Ingest is mutual TLS unless the file says `insecure: true` in so many words;
// without a tls block the files are looked for where the packages put them.
void ReadGrpc(MapReader& m, AnalyzerConfig& cfg) {
  m.Optional("listen", &cfg.grpc_listen);
  m.Optional("insecure", &cfg.grpc_insecure);
  config::ByteSize in_flight{cfg.grpc_max_in_flight_bytes};
  if (m.Optional("max_in_flight_bytes", &in_flight, Range{config::MiB(16), config::GiB(64)})) {
    cfg.grpc_max_in_flight_bytes = in_flight.bytes;
  }
  config::ByteSize rate{cfg.grpc_agent_bytes_per_second};
  if (m.Optional("agent_bytes_per_second", &rate, Range{config::KiB(16), config::GiB(1)})) {
    cfg.grpc_agent_bytes_per_second = rate.bytes;
  }
  // At least a batch of the largest kind (8 MiB), or such an agent never uploads.
  config::ByteSize burst{cfg.grpc_agent_burst_bytes};
  if (m.Optional("agent_burst_bytes", &burst, Range{config::MiB(16), config::GiB(64)})) {
    cfg.grpc_agent_burst_bytes = burst.bytes;
  }
  m.Optional("max_streams_per_agent", &cfg.grpc_max_streams_per_agent, Range{0, 1024});
  m.Optional("stream_opens_per_minute", &cfg.grpc_stream_opens_per_minute,
             Range<std::uint32_t>{0, 60'000});
  // Refused bytes: at least a few honest batches of 80-1000 results (10 to
  // 150 KB); a refused batch that finds the allowance clear is acked REJECTED
  // whatever its size, so the allowance need not hold one at the size limit.
  config::ByteSize refused{cfg.grpc_refused_burst_bytes};
  if (m.Optional("refused_burst_bytes", &refused, Range{config::KiB(256), config::GiB(64)})) {
    cfg.grpc_refused_burst_bytes = refused.bytes;
  }
  config::ByteSize refused_rate{cfg.grpc_refused_bytes_per_second};
  if (m.Optional("refused_bytes_per_second", &refused_rate,
                 Range{config::KiB(1), config::GiB(1)})) {
    cfg.grpc_refused_bytes_per_second = refused_rate.bytes;
  }
  m.Optional("refusal_delay", &cfg.grpc_refusal_delay, Range{0ms, 60s});
  // An agent needs two: its Upload stream and a Hello now and then.
  m.Optional("max_streams_per_connection", &cfg.grpc_max_streams_per_connection,
             Range<std::uint32_t>{2, 1024});
  if (cfg.grpc_insecure && m.Has("tls")) {
    m.Fail("insecure", "true and a tls block contradict each other: remove one");
  }
  m.Map("tls", [&](MapReader& t) {
    for (const auto& [key, path] :
         {std::pair{"cert", &cfg.grpc_tls.cert}, std::pair{"key", &cfg.grpc_tls.key},
          std::pair{"client_ca", &cfg.grpc_tls.ca}}) {
      std::string text;
      if (t.Optional(key, &text)) *path = text;
    }
    t.Optional("spiffe_trust_domain", &cfg.spiffe_trust_domain);
    t.Optional("crl_dir", &cfg.grpc_crl_dir);
  });
}

// Evidence is read from the raw results: it cannot reach further back than
// they are kept (so retention.raw is read before it).
void ReadEvidence(MapReader& m, AnalyzerConfig& cfg) {
  evidence::EvidenceConfig& e = cfg.evidence;
  m.Optional("enabled", &e.enabled);
  for (const auto& [key, span] : {std::pair{"before", &e.before}, {"after", &e.after}}) {
    if (m.Optional(key, span, Range{0s, 24h}) && *span >= cfg.raw_retention) {
      m.Fail(key, "must be below retention.raw (" + config::FormatDuration(cfg.raw_retention) +
                      "): the probes are read back from it");
    }
  }
  config::ByteSize incident{e.incident_bytes};
  if (m.Optional("incident_bytes", &incident, Range{config::KiB(64), config::GiB(1)})) {
    e.incident_bytes = incident.bytes;
  }
  config::ByteSize cap{e.disk_cap_bytes};
  if (m.Optional("disk_cap_bytes", &cap, Range{config::MiB(16), config::GiB(1024)})) {
    e.disk_cap_bytes = cap.bytes;
  }
  m.Optional("max_tuples", &e.max_tuples, Range<std::uint32_t>{1, 1'000'000});
  m.Optional("siblings", &e.siblings, Range<std::uint32_t>{0, 64});
  m.Optional("max_hosts", &e.max_hosts, Range<std::uint32_t>{1, 1024});
}

// thresholds: every decision's setting (docs/analyzer.md, "How the analyzer decides").
void ReadThresholds(MapReader& m, analysis::AnalysisConfig& a) {
  m.Optional("rnic_timeout_fraction", &a.rnic_anomalous_ratio,
             Range{0.0, 1.0, LowerBound::kExclusive});
  m.Optional("rnic_sticky", &a.rnic_sticky, Range{0s, 24h});
  m.Optional("rnic_down_fraction", &a.rnic_down_ratio, Range{0.0, 1.0, LowerBound::kExclusive});
  m.Optional("rnic_down_send_failures", &a.rnic_down_send_failure_share,
             Range{0.0, 1.0, LowerBound::kExclusive});
  // Evidence across windows (docs/analyzer.md, "How the analyzer decides").
  m.Optional("min_loss", &a.min_loss, Range{1e-6, 1.0});
  m.Optional("prior_background_loss", &a.prior_background_loss, Range{0.0, 0.5});
  m.Optional("false_alarms_per_window", &a.false_alarms_per_window,
             Range{0.0, 1.0, LowerBound::kExclusive});
  m.Optional("window_alpha", &a.window_alpha, Range{0.0, 1.0, LowerBound::kExclusive});
  m.Optional("min_failures", &a.min_failures, Range<std::uint32_t>{1, 1'000'000});
  m.Optional("churn_inside", &a.churn_inside, Range{0.0, 1.0, LowerBound::kExclusive});
  m.Optional("churn_own_alpha", &a.churn_own_alpha, Range{0.0, 1.0, LowerBound::kExclusive});
  m.Optional("route_withdrawn_alpha", &a.route_withdrawn_alpha,
             Range{0.0, 1.0, LowerBound::kExclusive});
  m.Optional("hotspot_min_excess", &a.hotspot_min_excess, Range{0ns, 1s});
  m.Optional("hotspot_noise_z", &a.hotspot_noise_z, Range{0.0, 100.0});
  m.Optional("hotspot_open_windows", &a.hotspot_open_windows, Range{1, 1000});
  m.Optional("processing_factor", &a.proc_factor, Range{1.0, 1000.0});
  m.Optional("processing_min_excess", &a.proc_min_excess, Range{0ns, 10s});
  m.Optional("resolve_after_clean_windows", &a.resolve_after_clean_windows, Range{1, 1000});
  m.Optional("resolve_after_unobserved_windows", &a.resolve_after_unobserved_windows,
             Range{1, 100000});
  // Raw scores to calibrated confidences, fitted by `hostmesh-sim calibrate`.
  m.Map("confidence", [&](MapReader& c) {
    ReadConfidenceMap(c, "loss", &a.confidence.loss);
    ReadConfidenceMap(c, "latency", &a.confidence.latency);
    ReadConfidenceMap(c, "processing", &a.confidence.processing);
  });
}

void ReadAnalyzer(MapReader& r, AnalyzerConfig& cfg) {
  r.Optional("log_level", &cfg.log_level, kLogLevelNames);
  r.Map("grpc", [&](MapReader& m) { ReadGrpc(m, cfg); });
  r.Map("http", [&](MapReader& m) {
    m.Optional("listen", &cfg.http_listen);
    config::ReadHttpServerKeys(m, cfg.http);
  });
  std::string data_dir;
  if (r.Optional("data_dir", &data_dir)) cfg.data_dir = data_dir;
  std::string inventory;
  if (r.Optional("inventory", &inventory)) cfg.inventory = inventory;

  analysis::AnalysisConfig& a = cfg.analysis;
  const bool window_ok = r.Optional("window", &a.window, Range{1s, 1h});
  // Grace 0 is allowed: a test or a fleet with synced uploads may not need one.
  r.Optional("grace", &a.grace, Range{0s, 1h});
  // A path must outlive the window its probes are counted in: an explicit
  // path_ttl shorter than window + grace is an error, the default grows.
  if (!r.Has("path_ttl")) {
    a.path_ttl = std::max(a.path_ttl, a.window + a.grace);
  } else if (r.Optional("path_ttl", &a.path_ttl, Range{1s, 24h}) &&
             a.path_ttl < a.window + a.grace) {
    r.Fail("path_ttl",
           "must be at least window + grace (" + config::FormatDuration(a.window + a.grace) + ")");
  }
  // Below 1,024 an honest agent of 8 NICs would meet it.
  r.Optional("max_paths_per_host", &a.max_paths_per_host, Range<std::uint32_t>{1'024, 16'777'216});
  r.Map("thresholds", [&](MapReader& m) { ReadThresholds(m, a); });
  r.Map("retention", [&](MapReader& m) {
    m.Optional("raw", &cfg.raw_retention, Range{1min, 24h * 365});
    if (m.Optional("summaries", &cfg.summary_retention, Range{1min, 24h * 3650}) && window_ok &&
        cfg.summary_retention < a.window) {
      m.Fail("summaries", "must be at least the window (" + config::FormatDuration(a.window) + ")");
    }
  });
  r.Map("evidence", [&](MapReader& m) { ReadEvidence(m, cfg); });
  // A restart replays raw data: it cannot reach further back than it is kept.
  // Explicit restore spans beyond retention.raw are errors, the defaults shrink.
  bool paths_set = false, results_set = false;
  r.Map("restore", [&](MapReader& m) {
    for (const auto& [key, span, set] :
         {std::tuple{"paths", &cfg.restore_paths, &paths_set},
          std::tuple{"results", &cfg.restore_results, &results_set}}) {
      *set = m.Has(key);
      if (m.Optional(key, span, Range{0s, 24h}) && *span > cfg.raw_retention) {
        m.Fail(key, "must be at most retention.raw (" + config::FormatDuration(cfg.raw_retention) +
                        "): a restart replays only what is kept");
      }
    }
  });
  if (!paths_set) cfg.restore_paths = std::min(cfg.restore_paths, cfg.raw_retention);
  if (!results_set) cfg.restore_results = std::min(cfg.restore_results, cfg.raw_retention);
}

}  // namespace

AnalyzerConfig ParseAnalyzerConfig(std::string_view text, std::string_view source_name) {
  return config::ParseConfig<AnalyzerConfig>(text, source_name, ReadAnalyzer);
}

AnalyzerConfig LoadAnalyzerConfig(const std::filesystem::path& path) {
  return config::LoadConfig<AnalyzerConfig>(path, ReadAnalyzer);
}

}  // namespace hostmesh::analyzer
