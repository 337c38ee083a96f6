// What an agent's stream hands the analyzer, through the code the analyzer
// runs on it: an AgentHello and an UploadBatch (protobuf wire bytes) into
// IngestHandler::Hello and ::Screen (packed results expanded, schema, agent id, the batch validator
// against the Hello's NICs); an accepted batch is encoded for the store as
// the committer does (Store::Prepare, whose chunks must read back to the
// batch's items) and handed to the AnalysisFeed as the committer does after
// the write (results, path reports resolved on an inventory or learned from
// them, the Hello's NICs); then the windows are judged (AnalysisFeed::Advance,
// IncidentTracker::Update), and the batch's NIC telemetry is summed as the
// API and the diagnosis read it (TelemetryRollup). The batch's header is also
// read by the walk that refuses oversize batches unparsed (ReadBatchHeader),
// which must agree with the parse.
//
// Input: flags(1) hello_len(2, big-endian) hello batch. Flag bit 0: path
// reports resolve on a generated 2-pod inventory, else the fabric is learned.
// The analyzer's clock stands at VirtualClock::kDefaultWallStart
// (2024-01-01T00:00:00Z): batches are accepted within 24 h before and 5 min
// after it. The store (RocksDB, for the Hellos the feed reads back) lives in
// a temporary directory for the whole run.
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "analyzer/analysis/incidents.h"
#include "analyzer/feed/analysis_feed.h"
#include "analyzer/ingest/batch_header.h"
#include "analyzer/ingest/ingest_handler.h"
#include "analyzer/ingest/ingest_stats.h"
#include "analyzer/store/group_committer.h"
#include "analyzer/store/result_codec.h"
#include "analyzer/store/store.h"
#include "analyzer/store/store_keys.h"
#include "analyzer/telemetry/telemetry_rollup.h"
#include "common/base/logging.h"
#include "common/metrics/registry.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/protobuf_quiet.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"

using namespace hostmesh;
using namespace hostmesh::analyzer;

namespace {

struct World {
  VirtualClock clock;
  std::filesystem::path dir;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<store::GroupCommitter> committer;  // the handler's; never given a batch
  metrics::Registry registry;
  std::unique_ptr<ingest::IngestStats> stats;
  std::optional<topology::Topology> inventory;
};

World* world = nullptr;

// At exit only the directory goes: the store stays open (RocksDB's own
// statics may be gone by then, and closing would touch them).
void RemoveStore() {
  if (world == nullptr) return;
  std::error_code ignored;
  std::filesystem::remove_all(world->dir, ignored);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  InitLogging(LogLevel::kOff);
  QuietProtobuf();
  world = new World;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/hm_ingest_fuzz_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  world->dir = pattern;
  std::atexit(RemoveStore);
  store::StoreOptions options;
  options.data_dir = world->dir / "db";
  options.raw_write_buffer_bytes = 4 << 20;
  std::string error;
  world->store = store::Store::Open(world->clock, options, error);
  FUZZ_CHECK(world->store != nullptr);
  world->committer = std::make_unique<store::GroupCommitter>(world->clock, *world->store);
  world->stats = std::make_unique<ingest::IngestStats>(world->registry);
  topology::FabricShape shape;
  shape.hosts = 4;
  shape.rails = 2;
  shape.spines = 2;
  shape.pods = 2;
  world->inventory = topology::BuildTopology(topology::GenerateInventory(shape));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const std::uint8_t flags = data[0];
  const std::size_t hello_len =
      std::min<std::size_t>((std::size_t{data[1]} << 8) | data[2], size - 3);
  v1::AgentHello hello;
  v1::UploadBatch batch;
  if (!hello.ParseFromArray(data + 3, static_cast<int>(hello_len)) ||
      !batch.ParseFromArray(data + 3 + hello_len, static_cast<int>(size - 3 - hello_len))) {
    return 0;
  }
  // The header walk that refuses oversize batches unparsed (batch_header.h)
  // reads what the full parse read.
  {
    v1::UploadBatch header;
    google::protobuf::io::ArrayInputStream in(data + 3 + hello_len,
                                              static_cast<int>(size - 3 - hello_len));
    FUZZ_CHECK(ingest::ReadBatchHeader(in, header));
    FUZZ_CHECK(header.schema_version() == batch.schema_version());
    FUZZ_CHECK(header.boot_id() == batch.boot_id() && header.batch_seq() == batch.batch_seq());
    FUZZ_CHECK(header.agent_id() == batch.agent_id().substr(0, 257));
  }

  ingest::IngestHandler handler(world->clock, *world->store, *world->committer, *world->stats,
                                nullptr, {});
  v1::HelloReply reply;
  // As an insecure analyzer: identity binding is not what this target feeds.
  const ingest::PeerIdentity anyone = ingest::PeerIdentity::Anyone();
  if (handler.Hello(hello, anyone, reply).code != ingest::HelloCode::kOk) return 0;
  const ingest::IngestHandler::Screened screened =
      handler.Screen(batch, batch.ByteSizeLong(), anyone);
  if (!screened.ok()) return 0;  // refused, with why
  FUZZ_CHECK(screened.agent != nullptr && screened.agent->hello.boot_id() == batch.boot_id());
  FUZZ_CHECK(!batch.has_packed_results());  // expanded into results before validation

  // What the committer stores must read back as the batch's items.
  const store::PreparedBatch prepared = store::Store::Prepare(batch);
  std::size_t results = 0;
  for (const auto& [key, value] : prepared.result_chunks) {
    const auto parts = store::ParseChunkKey(key);
    FUZZ_CHECK(parts && parts->agent_id == batch.agent_id() &&
               parts->batch_seq == batch.batch_seq());
    store::ResultChunkReader reader(value);
    v1::ProbeResult r;
    while (reader.Next(r)) ++results;
    FUZZ_CHECK(!reader.corrupt());
  }
  FUZZ_CHECK(results == static_cast<std::size_t>(batch.results_size()));

  analysis::AnalysisConfig config;
  app::AnalysisFeed feed(*world->store, config, (flags & 1) != 0 ? &*world->inventory : nullptr);
  feed.OnBatch(batch, screened.agent->hello);
  analysis::IncidentTracker incidents(config);
  const std::int64_t now = world->clock.RealtimeNow().time_since_epoch().count();
  for (const std::int64_t at :
       {now, now + (config.window + config.grace).count() + config.max_future.count()}) {
    for (const analysis::WindowReport& report : feed.Advance(at)) incidents.Update(report);
  }

  telemetry::TelemetryRollup rollup(
      {}, [&](std::string_view, std::uint64_t, std::uint32_t nic) -> std::optional<std::string> {
        for (const v1::Nic& n : hello.nics()) {
          if (n.id() == nic) return n.name();
        }
        return std::nullopt;
      });
  for (const v1::NicTelemetry& t : batch.telemetry())
    rollup.Add(batch.agent_id(), batch.boot_id(), t);
  for (const telemetry::NicTelemetryRow& row : rollup.Rows()) {
    FUZZ_CHECK(row.totals.samples > 0);
    (void)row.totals.PauseFrames(true);
  }
  return 0;
}
