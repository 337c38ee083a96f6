// What a fleet costs on the analyzer's disk: writes --minutes of uploads of
// --hosts agents (bench/fleet_agent.h: 8 NICs x 10 probes/s, one batch a
// second, path reports of rotated ports) into a real store, plus one window
// summary per 20 s for the same hosts, compacts, and reads each column
// family's SST bytes. Prints bytes per result, per path report, per batch
// (ledger) and per window summary, then bytes per host per day for raw data
// and for aggregates, and what a fleet of --fleet hosts needs for the
// configured retentions.
//
// Usage: store_footprint [--hosts 200] [--minutes 10] [--compression small|fast]
//                        [--raw-layout fifo|level] [--fleet 10000] [--raw-hours 6]
//                        [--summary-days 30]
//                        [--data-dir DIR]
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analyzer/analysis/quantile_sketch.h"
#include "analyzer/analysis/window_report.h"
#include "analyzer/state/state_codec.h"
#include "analyzer/store/store.h"
#include "bench/fleet_agent.h"
#include "common/base/clock.h"

namespace {

namespace store = hostmesh::analyzer::store;
namespace analysis = hostmesh::analysis;
using hostmesh::bench::FleetAgent;

struct Args {
  int hosts = 200;
  int minutes = 10;
  std::string compression = "small";
  std::string layout = "fifo";
  int fleet = 10'000;
  double raw_hours = 6;
  double summary_days = 30;
  std::string data_dir;
};

bool Parse(int argc, char** argv, Args& a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* v = argv[i + 1];
    if (flag == "--hosts") {
      a.hosts = std::atoi(v);
    } else if (flag == "--minutes") {
      a.minutes = std::atoi(v);
    } else if (flag == "--compression") {
      a.compression = v;
    } else if (flag == "--raw-layout") {
      a.layout = v;
    } else if (flag == "--fleet") {
      a.fleet = std::atoi(v);
    } else if (flag == "--raw-hours") {
      a.raw_hours = std::atof(v);
    } else if (flag == "--summary-days") {
      a.summary_days = std::atof(v);
    } else if (flag == "--data-dir") {
      a.data_dir = v;
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && a.hosts > 0 && a.minutes > 0 &&
         (a.compression == "small" || a.compression == "fast") &&
         (a.layout == "fifo" || a.layout == "level");
}

// A judged window of `hosts` hosts with SLA rows as the analyzer stores them
// (quantiles from its sketches of 1,600 probes per host), one anomalous RNIC
// and one culprit link.
analysis::WindowReport Report(int hosts, std::int64_t start_ns, std::mt19937_64& rng) {
  analysis::WindowReport r;
  r.start_ns = start_ns;
  r.end_ns = start_ns + 20'000'000'000;
  r.results = static_cast<std::uint64_t>(hosts) * 1600;
  std::lognormal_distribution<double> wire(9.2, 0.25), proc(10.3, 0.4);
  auto quantiles = [&](std::lognormal_distribution<double>& d, std::uint64_t n) {
    analysis::QuantileSketch sketch;
    for (std::uint64_t i = 0; i < n; ++i) sketch.Add(d(rng));
    return analysis::Quantiles{n, sketch.Quantile(0.5), sketch.Quantile(0.9), sketch.Quantile(0.99),
                               sketch.Quantile(0.999)};
  };
  auto row = [&](std::uint64_t probes) {
    analysis::SlaRow s;
    s.probes = probes;
    s.timeouts = probes / 1000;
    s.network_drops = s.timeouts;
    s.network_drop_rate = 0.001;
    s.latency = quantiles(wire, std::min<std::uint64_t>(probes, 1600));
    s.processing = quantiles(proc, std::min<std::uint64_t>(probes, 1600));
    return s;
  };
  for (int h = 0; h < hosts; ++h) {
    r.present_hosts.push_back(static_cast<analysis::HostId>(h));
    r.sla.hosts.push_back({static_cast<analysis::HostId>(h), row(1600)});
  }
  for (int rail = 0; rail < 8; ++rail) r.sla.rails.push_back({rail, row(200ull * hosts)});
  r.sla.cluster = row(1600ull * hosts);
  analysis::RnicStatus bad;
  bad.host = 3;
  bad.nic = 1;
  bad.anomalous = true;
  bad.loss = 1;
  r.rnics.push_back(bad);
  analysis::Suspect link;
  link.component.link = 12;
  r.loss.culprits.push_back(link);
  r.coverage.fraction = 1;
  r.coverage.traced_probes = r.results;
  return r;
}

std::string Mb(double bytes) {
  char out[32];
  std::snprintf(out, sizeof out, "%.1f MB", bytes / 1e6);
  return out;
}
std::string Gb(double bytes) {
  char out[32];
  std::snprintf(out, sizeof out, "%.0f GB", bytes / 1e9);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!Parse(argc, argv, args)) {
    std::fprintf(
        stderr,
        "usage: %s [--hosts N] [--minutes M] [--compression small|fast] [--raw-layout fifo|level] "
        "[--fleet N] "
        "[--raw-hours H] [--summary-days D] [--data-dir DIR]\n",
        argv[0]);
    return 2;
  }
  bool temporary = false;
  if (args.data_dir.empty()) {
    std::string pattern = std::filesystem::temp_directory_path() / "hm_store_footprint_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) return 1;
    args.data_dir = pattern;
    temporary = true;
  }
  hostmesh::SystemClock clock;
  store::StoreOptions options;
  options.data_dir = args.data_dir;
  options.raw_compression =
      args.compression == "small" ? store::RawCompression::kSmall : store::RawCompression::kFast;
  options.raw_fifo = args.layout == "fifo";
  std::string error;
  auto db = store::Store::Open(clock, options, error);
  if (!db) {
    std::fprintf(stderr, "store_footprint: %s\n", error.c_str());
    return 1;
  }

  // Recent virtual time, so retention keeps all of it.
  const std::int64_t second = 1'000'000'000;
  const std::int64_t now = clock.RealtimeNow().time_since_epoch().count();
  const std::int64_t start = now - std::int64_t{args.minutes} * 60 * second;
  std::vector<FleetAgent> agents;
  for (int h = 0; h < args.hosts; ++h) agents.emplace_back(static_cast<std::uint32_t>(h), start);
  std::uint64_t results = 0, paths = 0, batches = 0, summaries = 0;
  std::mt19937_64 rng(5);
  std::vector<store::PreparedBatch> group;
  std::vector<const store::PreparedBatch*> pointers;
  for (int s = 0; s < args.minutes * 60; ++s) {
    const std::int64_t t = start + std::int64_t{s} * second;
    group.clear();
    for (FleetAgent& agent : agents) {
      if (s == 0) db->PutHello(agent.Hello());
      const auto batch = agent.Batch(t, t + second);
      results += static_cast<std::uint64_t>(batch.results_size());
      paths += static_cast<std::uint64_t>(batch.paths_size());
      group.push_back(store::Store::Prepare(batch));
    }
    pointers.clear();
    for (const auto& b : group) pointers.push_back(&b);
    for (const auto& outcome : db->Commit(pointers)) {
      if (outcome.status != store::CommitStatus::kStored) {
        std::fprintf(stderr, "store_footprint: commit failed: %s\n", outcome.error.c_str());
        return 1;
      }
    }
    batches += group.size();
    if (s % 20 == 19) {
      const auto summary = hostmesh::analyzer::state::EncodeWindowSummary(
          Report(args.hosts, t - 19 * second, rng),
          [&](analysis::HostId h) { return agents[h].agent_id(); });
      db->PutWindowSummary(hostmesh::WallTime{std::chrono::nanoseconds{t - 19 * second}}, "cluster",
                           summary);
      ++summaries;
    }
  }
  // What ingest cost the store in the background: flushes and compactions so far.
  double written = 0, compaction_cpu = 0;
  for (const auto& u : db->Usage()) {
    if (u.name != "raw_results") continue;
    written = static_cast<double>(u.written_bytes);
    compaction_cpu = u.compaction_cpu_seconds;
  }
  if (const auto status = db->Compact(); !status.ok()) {
    std::fprintf(stderr, "store_footprint: %s\n", status.error.c_str());
    return 1;
  }
  std::map<std::string, double> sst;
  for (const auto& u : db->Usage()) sst[u.name] = static_cast<double>(u.sst_bytes);
  std::printf(
      "raw_results while ingesting (%s): %.1f MB written by flushes and compactions "
      "(%.2f x its final size), %.1f s of their CPU (%.2f us per result)\n",
      args.layout.c_str(), written / 1e6, written / sst["raw_results"], compaction_cpu,
      compaction_cpu * 1e6 / static_cast<double>(results));
  db.reset();
  if (temporary) std::filesystem::remove_all(args.data_dir);

  const double per_result = sst["raw_results"] / static_cast<double>(results);
  const double per_path = sst["path_reports"] / static_cast<double>(paths);
  const double per_batch = sst["ledger"] / static_cast<double>(batches);
  const double per_summary_host =
      sst["windows"] / static_cast<double>(summaries) / static_cast<double>(args.hosts);
  const double day = 86'400;
  const double host_seconds = static_cast<double>(args.hosts) * args.minutes * 60;
  const double raw_day = (sst["raw_results"] + sst["path_reports"]) / host_seconds * day;
  const double ledger_day = sst["ledger"] / host_seconds * day;
  const double summary_day = sst["windows"] / host_seconds * day;
  const double fleet = args.fleet;
  // The ledger must outlive any resend from an agent's spool: it keeps its own retention.
  const double ledger_hours =
      std::chrono::duration<double, std::ratio<3600>>(store::StoreOptions{}.ledger_retention)
          .count();
  std::printf(
      "store_footprint: %d hosts x %d min, raw compression %s, after full compaction\n"
      "  raw_results    %s for %llu results: %.1f B/result\n"
      "  path_reports   %s for %llu reports: %.1f B/report\n"
      "  ledger         %s for %llu batches: %.1f B/batch\n"
      "  windows        %s for %llu summaries: %.1f B/host/window\n"
      "per host per day: raw (results + paths) %s, ledger %s, window summaries %s\n"
      "%d hosts, raw kept %.0f h, ledger %.0f h, summaries %.0f days:\n"
      "  raw %s + ledger %s + summaries %s = %s\n",
      args.hosts, args.minutes, args.compression.c_str(), Mb(sst["raw_results"]).c_str(),
      static_cast<unsigned long long>(results), per_result, Mb(sst["path_reports"]).c_str(),
      static_cast<unsigned long long>(paths), per_path, Mb(sst["ledger"]).c_str(),
      static_cast<unsigned long long>(batches), per_batch, Mb(sst["windows"]).c_str(),
      static_cast<unsigned long long>(summaries), per_summary_host, Mb(raw_day).c_str(),
      Mb(ledger_day).c_str(), Mb(summary_day).c_str(), args.fleet, args.raw_hours, ledger_hours,
      args.summary_days, Gb(fleet * raw_day * args.raw_hours / 24).c_str(),
      Gb(fleet * ledger_day * ledger_hours / 24).c_str(),
      Gb(fleet * summary_day * args.summary_days).c_str(),
      Gb(fleet * (raw_day * args.raw_hours / 24 + ledger_day * ledger_hours / 24 +
                  summary_day * args.summary_days))
          .c_str());
  return 0;
}
