// Writes the binary seed corpora of the fuzz targets with the project's own
// encoders, so every seed is an input the real writer produces: probes,
// ICMP errors as routers send them, store keys and chunks, stored state, and
// a Hello with batches of results, path reports (traced on a generated
// inventory) and NIC telemetry. Usage: fuzz_seed_corpus <corpus dir>, and
// fuzz_seed_corpus --inventory <dir> for generated inventories (YAML) of two
// small shapes; make-corpus.sh runs both and writes the other text seeds.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "agent/core/probe_codec.h"
#include "analyzer/analysis/incidents.h"
#include "analyzer/feed/learned_topology.h"
#include "analyzer/state/learned_fabric_codec.h"
#include "analyzer/state/state_codec.h"
#include "analyzer/store/chunk_codec.h"
#include "analyzer/store/result_codec.h"
#include "analyzer/store/store_keys.h"
#include "common/base/clock.h"
#include "common/net/roce.h"
#include "hostmesh/v1/analyzer_state.pb.h"
#include "hostmesh/v1/ingest.pb.h"
#include "proto/wire/packed_results.h"
#include "topology/ecmp.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"
#include "topology/inventory_writer.h"
#include "tracer/icmp_builder.h"
#include "tracer/probe_tag.h"

using namespace hostmesh;

namespace {

std::filesystem::path root;

void Write(const std::string& target, const std::string& name, std::string_view bytes) {
  const std::filesystem::path dir = root / target;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
void Write(const std::string& target, const std::string& name,
           const std::vector<std::uint8_t>& bytes) {
  Write(target, name, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

const std::int64_t kNow = VirtualClock::kDefaultWallStart.time_since_epoch().count();
constexpr std::int64_t kMs = 1'000'000;

void ProbeSeeds() {
  int i = 0;
  for (const std::size_t size :
       {std::size_t{40}, std::size_t{50}, std::size_t{64}, std::size_t{256}}) {
    agent::ProbeHeader header;
    header.src_nic = static_cast<agent::NicId>(i);
    header.dst_nic = static_cast<agent::NicId>(i + 1);
    header.boot_id = 0x0123456789abcdefULL;
    header.sequence = 1000 + static_cast<std::uint64_t>(i);
    header.send_time_ns = kNow + i * kMs;
    std::vector<std::uint8_t> out(size);
    agent::EncodeProbe(header, out);
    Write("probe_codec", "probe_" + std::to_string(size), out);
    ++i;
  }
  Write("probe_codec", "trace_probe", tracer::EncodeProbePayload({3, 7, 42}));
}

tracer::FiveTuple Tuple() {
  return {tracer::Ipv4{0x0a000101}, tracer::Ipv4{0x0a000201}, 49152, tracer::kRoceV2Port,
          tracer::kIpProtoUdp};
}

void IcmpSeeds() {
  const auto tuple = Tuple();
  const auto payload = tracer::EncodeProbePayload({2, 5, 99});
  const tracer::Ipv4 hop{0x0a0000fe};
  Write("tracer_icmp_reply", "time_exceeded_full_quote",
        tracer::BuildIcmpError(hop, tuple.src, 11, 0, tuple, payload, 1000));
  Write("tracer_icmp_reply", "time_exceeded_8_bytes",
        tracer::BuildIcmpError(hop, tuple.src, 11, 0, tuple, payload, 0));
  Write("tracer_icmp_reply", "port_unreachable",
        tracer::BuildIcmpError(tuple.dst, tuple.src, 3, 3, tuple, payload, 16));
  Write("tracer_icmp_reply", "host_unreachable",
        tracer::BuildIcmpError(hop, tuple.src, 3, 1, tuple, payload, 1000));
  // The trace engine's input drives a FuzzedDataProvider: any bytes will do.
  std::vector<std::uint8_t> ramp(64), ones(64, 1), answers(96);
  for (std::size_t k = 0; k < ramp.size(); ++k) ramp[k] = static_cast<std::uint8_t>(k * 7);
  for (std::size_t k = 0; k < answers.size(); ++k)
    answers[k] = static_cast<std::uint8_t>(k % 3 == 0 ? 1 : 0x40);
  Write("tracer_trace_engine", "ramp", ramp);
  Write("tracer_trace_engine", "ones", ones);
  Write("tracer_trace_engine", "answers", answers);
}

v1::ProbeResult Result(std::uint32_t src, std::uint32_t dst, std::uint64_t seq, std::int64_t t,
                       bool timeout) {
  v1::ProbeResult r;
  r.set_src_nic(src);
  r.set_dst_nic(dst);
  r.set_src_port(49152 + static_cast<std::uint32_t>(seq % 16));
  r.set_dst_port(net::kRoceV2Port);
  r.set_sequence(seq);
  r.set_send_time_ns(t);
  r.set_timeout(timeout);
  if (!timeout) {
    r.set_app_send_ns(t + 1000);
    r.set_nic_send_ns(t + 3000);
    r.set_nic_recv_ns(t + 9000);
    r.set_app_recv_ns(t + 15000);
    r.set_send_timestamp_source(v1::TIMESTAMP_SOURCE_KERNEL);
    r.set_recv_timestamp_source(v1::TIMESTAMP_SOURCE_KERNEL);
  }
  r.set_payload_bytes(50);
  return r;
}

v1::NicTelemetry Telemetry(std::uint32_t nic, std::int64_t end) {
  v1::NicTelemetry t;
  t.set_nic(nic);
  t.set_start_ns(end - 1000 * kMs);
  t.set_end_ns(end);
  auto* d = t.add_deltas();
  d->set_counter(v1::NIC_COUNTER_SYMBOL_ERROR);
  d->set_delta(3);
  d = t.add_deltas();
  d->set_counter(v1::NIC_COUNTER_RX_PAUSE);
  d->set_priority(3);
  d->set_delta(120);
  t.set_port_state(4);
  t.set_phys_state(5);
  t.set_carrier(v1::CARRIER_UP);
  t.mutable_pcie()->set_current_width(8);
  t.mutable_pcie()->set_max_width(16);
  return t;
}

struct Traced {
  topology::Topology topo;
  v1::AgentHello hello;
  std::vector<v1::PathReport> paths;
};

// Host 0 of the 2-pod fabric the ingest target loads (analyzer_ingest_fuzz.cc),
// its NICs and a trace of every ECMP path between two of them.
Traced TraceHost0() {
  topology::FabricShape shape;
  shape.hosts = 4;
  shape.rails = 2;
  shape.spines = 2;
  shape.pods = 2;
  Traced out{topology::BuildTopology(topology::GenerateInventory(shape)), {}, {}};
  out.hello.set_schema_version(v1::SCHEMA_VERSION_1);
  out.hello.set_agent_id("host0");
  out.hello.set_boot_id(7);
  out.hello.set_host("host0");
  std::vector<topology::Ipv4> nics;
  for (const topology::Device& device : out.topo.devices()) {
    if (device.tier != topology::Tier::kHost) continue;
    for (topology::InterfaceId id : device.interfaces) nics.push_back(out.topo.interface(id).ip);
    break;
  }
  for (std::size_t k = 0; k < nics.size(); ++k) {
    v1::Nic* nic = out.hello.add_nics();
    nic->set_id(static_cast<std::uint32_t>(k));
    nic->set_name("nic" + std::to_string(k));
    nic->set_rail(static_cast<std::uint32_t>(k));
    nic->set_ip(nics[k].ToString());
  }
  std::uint32_t port = 49152;
  for (const auto& path : topology::EnumerateEcmpPaths(out.topo, nics[0], nics[1])) {
    v1::PathReport report;
    report.set_src_ip(nics[0].ToString());
    report.set_dst_ip(nics[1].ToString());
    report.set_src_nic(0);
    report.set_dst_nic(1);
    report.set_src_port(port++);
    report.set_dst_port(net::kRoceV2Port);
    report.set_protocol(17);
    report.set_time_ns(kNow - 2000 * kMs);
    std::uint32_t ttl = 1;
    for (const topology::Hop& hop : topology::ExpectedHops(out.topo, path, nics[0])) {
      v1::Hop* h = report.add_hops();
      h->set_ttl(ttl++);
      if (hop) h->set_address(hop->ToString());
      h->set_rtt_ns(20'000);
    }
    v1::Hop* last = report.add_hops();
    last->set_ttl(ttl);
    last->set_address(nics[1].ToString());
    report.set_reached_destination(true);
    out.paths.push_back(report);
  }
  return out;
}

std::string IngestInput(std::uint8_t flags, const v1::AgentHello& hello,
                        const v1::UploadBatch& batch) {
  const std::string h = hello.SerializeAsString();
  std::string out;
  out.push_back(static_cast<char>(flags));
  out.push_back(static_cast<char>(h.size() >> 8));
  out.push_back(static_cast<char>(h.size() & 0xff));
  return out + h + batch.SerializeAsString();
}

void IngestAndStoreSeeds(const Traced& traced) {
  v1::UploadBatch batch;
  batch.set_schema_version(v1::SCHEMA_VERSION_1);
  batch.set_agent_id(traced.hello.agent_id());
  batch.set_boot_id(traced.hello.boot_id());
  batch.set_batch_seq(1);
  batch.set_created_ns(kNow - 1000 * kMs);
  const std::int64_t window_start = kNow - 60'000 * kMs;  // judged at once
  for (int k = 0; k < 24; ++k) {
    *batch.add_results() =
        Result(static_cast<std::uint32_t>(k % 2), static_cast<std::uint32_t>((k + 1) % 2),
               static_cast<std::uint64_t>(k), window_start + k * 100 * kMs, k % 7 == 3);
  }
  v1::UploadBatch results_only = batch;
  Write("analyzer_ingest", "results_learned", IngestInput(0, traced.hello, results_only));
  // The same results packed, as current agents send them.
  v1::UploadBatch packed = results_only;
  packed.clear_results();
  std::int64_t previous_send = 0;
  wire::AppendRowsToPacked(results_only.results(), *packed.mutable_packed_results(), previous_send);
  Write("analyzer_ingest", "packed_results", IngestInput(0, traced.hello, packed));
  const std::uint32_t count = packed.packed_results().count();
  const std::string count_bytes{static_cast<char>(count >> 8), static_cast<char>(count & 0xff)};
  Write("packed_results", "results", count_bytes + packed.packed_results().records());
  v1::UploadBatch failures_packed;
  previous_send = 0;
  v1::UploadBatch with_failures = results_only;
  for (v1::ProbeResult& r : *with_failures.mutable_results()) {
    r.set_send_failed(r.timeout());
    r.set_timeout(false);
    r.clear_nic_recv_ns();
  }
  wire::AppendRowsToPacked(with_failures.results(), *failures_packed.mutable_packed_results(),
                           previous_send);
  Write("packed_results", "send_failures",
        count_bytes + failures_packed.packed_results().records());
  for (const v1::PathReport& p : traced.paths) *batch.add_paths() = p;
  *batch.add_telemetry() = Telemetry(0, kNow - 1000 * kMs);
  *batch.add_telemetry() = Telemetry(1, kNow - 1000 * kMs);
  Write("analyzer_ingest", "paths_inventory", IngestInput(1, traced.hello, batch));
  Write("analyzer_ingest", "paths_learned", IngestInput(0, traced.hello, batch));
  v1::UploadBatch failures = results_only;
  failures.set_batch_seq(2);
  for (v1::ProbeResult& r : *failures.mutable_results()) {
    r.set_timeout(false);
    r.set_send_failed(r.src_nic() == 1);
  }
  Write("analyzer_ingest", "send_failures", IngestInput(0, traced.hello, failures));

  // Store chunks as Store::Prepare writes them.
  std::vector<const v1::ProbeResult*> results;
  for (const v1::ProbeResult& r : batch.results()) results.push_back(&r);
  std::string compact;
  analyzer::store::EncodeResultChunk(results, compact);
  Write("store_result_codec", "compact", compact);
  v1::ProbeResult odd = batch.results(0);
  odd.set_src_nic(40);  // past the compact form's NIC range: delimited
  results.push_back(&odd);
  std::string delimited;
  analyzer::store::EncodeResultChunk(results, delimited);
  Write("store_result_codec", "delimited", delimited);
  Write("store_chunks", "probe_results", delimited);
  std::string paths, telemetry;
  for (const v1::PathReport& p : batch.paths()) analyzer::store::AppendDelimited(paths, p);
  for (const v1::NicTelemetry& t : batch.telemetry())
    analyzer::store::AppendDelimited(telemetry, t);
  Write("store_chunks", "paths", paths);
  Write("store_chunks", "telemetry", telemetry);
  std::string hello;
  analyzer::store::AppendTime(hello, kNow);
  hello += traced.hello.SerializeAsString();
  Write("store_chunks", "hello", hello);

  using namespace analyzer::store;
  Write("store_keys", "chunk", ChunkKey(BucketStart(kNow), "host0", 7, 1));
  Write("store_keys", "chunk_negative_time", ChunkKey(BucketStart(-kNow), "h", 1, 99));
  Write("store_keys", "ledger", LedgerKey("host0", 7, 12));
  Write("store_keys", "window", WindowKey(kNow, "cluster"));
  Write("store_keys", "incident", IncidentKey(kNow, 5));
}

void StateSeeds(const Traced& traced) {
  v1::state::WindowSummary summary;
  summary.set_start_ns(kNow);
  summary.set_end_ns(kNow + 20'000 * kMs);
  summary.set_results(1000);
  summary.set_present_hosts(4);
  summary.add_absent_agents("host3");
  auto fill = [](v1::state::SlaRow* row, std::uint64_t probes) {
    row->set_probes(probes);
    row->set_timeouts(3);
    row->set_rnic_drops(1);
    row->set_network_drops(2);
    row->mutable_latency()->set_count(probes - 3);
    row->mutable_latency()->set_p50_ns(8000);
    row->mutable_latency()->set_p99_ns(30000);
  };
  fill(summary.mutable_cluster(), 1000);
  auto* rail = summary.add_rails();
  rail->set_rail(1);
  fill(rail->mutable_sla(), 500);
  auto* host = summary.add_hosts();
  host->set_host(2);
  host->set_agent_id("host2");
  fill(host->mutable_sla(), 250);
  summary.add_culprit_links(3);
  summary.set_coverage_fraction(0.75);
  Write("state_codec", "window_summary", summary.SerializeAsString());

  analysis::Incident link;
  link.id = 4;
  link.kind = analysis::IncidentKind::kLinkLoss;
  link.suspect.kind = analysis::Component::Kind::kLink;
  link.suspect.link = 12;
  link.summary = "link 12";
  link.confidence = 0.9;
  link.evidence.failures = 40;
  link.evidence.good = 900;
  link.evidence.example_paths = {{1, 12, 7}};
  link.evidence.first_seen_ns = kNow;
  link.evidence.last_seen_ns = kNow + 20'000 * kMs;
  link.evidence.windows = 1;
  Write("state_codec", "incident_link", analyzer::state::EncodeIncident(link));
  analysis::Incident rnic;
  rnic.id = 9;
  rnic.kind = analysis::IncidentKind::kRnicDown;
  rnic.suspect.kind = analysis::Component::Kind::kRnic;
  rnic.suspect.host = 1;
  rnic.suspect.nic = 1;
  rnic.open = false;
  rnic.resolved_ns = kNow;
  rnic.diagnosis.type = "link_flapping";
  rnic.diagnosis.rule = "carrier_changes";
  rnic.diagnosis.counters = {{"carrier_changes", 4}};
  Write("state_codec", "incident_rnic_resolved", analyzer::state::EncodeIncident(rnic));

  // A fabric learned from the traces of host 0, as the analyzer stores it.
  analyzer::app::LearnedTopology learned;
  learned.AddHello("host0", traced.hello);
  for (const v1::PathReport& report : traced.paths) {
    analysis::PathRecord record;
    learned.Convert(0, "host0", report, record);
  }
  Write("state_learned_fabric", "host0_traced",
        analyzer::state::EncodeLearnedFabric(learned.Export()));
}

void InventorySeeds(const std::filesystem::path& dir) {
  topology::FabricShape two_tiers;
  two_tiers.hosts = 2;
  two_tiers.rails = 2;
  two_tiers.spines = 2;
  topology::FabricShape three_tiers = two_tiers;
  three_tiers.hosts = 1;
  three_tiers.spines = 1;
  three_tiers.tiers = 3;
  three_tiers.aggregations = 1;
  std::filesystem::create_directories(dir);
  for (const auto& [name, shape] :
       {std::pair{"two_tiers.yaml", two_tiers}, std::pair{"three_tiers.yaml", three_tiers}}) {
    const std::string yaml = topology::WriteInventoryYaml(topology::GenerateInventory(shape), {});
    std::ofstream(dir / name).write(yaml.data(), static_cast<std::streamsize>(yaml.size()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--inventory") {
    InventorySeeds(argv[2]);
    return 0;
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir> | --inventory <dir>\n", argv[0]);
    return 2;
  }
  root = argv[1];
  ProbeSeeds();
  IcmpSeeds();
  const Traced traced = TraceHost0();
  IngestAndStoreSeeds(traced);
  StateSeeds(traced);
  return 0;
}
