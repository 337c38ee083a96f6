#include "analyzer/main/config_json.h"

#include <nlohmann/json.hpp>

#include "common/config/value_parsers.h"

namespace hostmesh::analyzer::app {

namespace {

using Json = nlohmann::ordered_json;

std::string Duration(std::chrono::nanoseconds d) {
  return config::FormatDuration(d);
}

// A path that may hold or name a secret: whether it is set, not where.
std::string Redacted(const std::string& path) {
  return path.empty() ? "" : "(redacted)";
}

}  // namespace

std::string RenderConfigJson(const AnalyzerConfig& c, std::string_view version) {
  Json j;
  j["version"] = version;
  j["log_level"] = LogLevelName(c.log_level);
  Json& grpc = j["grpc"];
  grpc["listen"] = c.grpc_listen.ToString();
  grpc["insecure"] = c.grpc_insecure;
  grpc["tls"] = {{"cert", c.grpc_tls.cert.string()},
                 {"key", Redacted(c.grpc_tls.key.string())},
                 {"client_ca", c.grpc_tls.ca.string()},
                 {"crl_dir", c.grpc_crl_dir}};
  grpc["spiffe_trust_domain"] = c.spiffe_trust_domain;
  grpc["max_in_flight_bytes"] = c.grpc_max_in_flight_bytes;
  grpc["agent_bytes_per_second"] = c.grpc_agent_bytes_per_second;
  grpc["agent_burst_bytes"] = c.grpc_agent_burst_bytes;
  grpc["max_streams_per_agent"] = c.grpc_max_streams_per_agent;
  grpc["stream_opens_per_minute"] = c.grpc_stream_opens_per_minute;
  Json& http = j["http"];
  http["listen"] = c.http_listen.ToString();
  http["tls"] = {{"cert", c.http.tls_cert},
                 {"key", Redacted(c.http.tls_key)},
                 {"client_ca", c.http.tls_client_ca}};
  http["bearer_token_file"] = Redacted(c.http.bearer_token_file);
  http["protect_metrics"] = c.http.protect_metrics;
  http["max_connections"] = c.http.max_connections;
  http["max_connections_per_peer"] = c.http.max_connections_per_peer;
  j["data_dir"] = c.data_dir.string();
  j["inventory"] = c.inventory.string();
  const analysis::AnalysisConfig& a = c.analysis;
  j["window"] = Duration(a.window);
  j["grace"] = Duration(a.grace);
  j["path_ttl"] = Duration(a.path_ttl);
  j["max_paths_per_host"] = a.max_paths_per_host;
  j["thresholds"] = {{"rnic_timeout_fraction", a.rnic_anomalous_ratio},
                     {"rnic_sticky", Duration(a.rnic_sticky)},
                     {"rnic_down_fraction", a.rnic_down_ratio},
                     {"min_loss", a.min_loss},
                     {"prior_background_loss", a.prior_background_loss},
                     {"false_alarms_per_window", a.false_alarms_per_window},
                     {"window_alpha", a.window_alpha},
                     {"min_failures", a.min_failures},
                     {"hotspot_min_excess", Duration(a.hotspot_min_excess)},
                     {"hotspot_open_windows", a.hotspot_open_windows},
                     {"processing_factor", a.proc_factor},
                     {"resolve_after_clean_windows", a.resolve_after_clean_windows}};
  j["retention"] = {{"raw", Duration(c.raw_retention)},
                    {"summaries", Duration(c.summary_retention)}};
  j["restore"] = {{"paths", Duration(c.restore_paths)}, {"results", Duration(c.restore_results)}};
  const evidence::EvidenceConfig& e = c.evidence;
  j["evidence"] = {{"enabled", e.enabled},
                   {"before", Duration(e.before)},
                   {"after", Duration(e.after)},
                   {"incident_bytes", e.incident_bytes},
                   {"disk_cap_bytes", e.disk_cap_bytes},
                   {"max_tuples", e.max_tuples},
                   {"siblings", e.siblings},
                   {"max_hosts", e.max_hosts}};
  return j.dump(2) + "\n";
}

}  // namespace hostmesh::analyzer::app
