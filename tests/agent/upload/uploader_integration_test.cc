// The Uploader over real gRPC against an in-process analyzer stand-in that is
// killed and restarted mid-run. Real time, but no fixed sleeps: every wait polls
// a condition against a deadline.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "agent/upload/uploader.h"
#include "tests/agent/upload/recording_ingest_server.h"

namespace hostmesh::agent::upload {
namespace {

using namespace std::chrono_literals;
using testing::IngestBehavior;
using testing::IngestStore;
using testing::TestIngestServer;

constexpr std::uint32_t kNics = 4;
constexpr std::uint64_t kBoot = 0xB007;

template <typename Condition>
bool Eventually(Condition condition, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);  // polling interval, not a wait for an outcome
  }
  return true;
}

v1::AgentHello Hello() {
  v1::AgentHello hello;
  hello.set_schema_version(v1::SCHEMA_VERSION_1);
  hello.set_agent_id("h003");
  hello.set_boot_id(kBoot);
  hello.set_host("h003");
  return hello;
}

// The longest one Append may take. An Append that waited for the analyzer
// would wait out the 1 s Hello timeout (a refused connect on loopback fails at
// once, so that is what a timing bound can tell); half of it leaves room for a
// thread a loaded 2-core machine keeps off the CPU (100 ms did not).
constexpr auto kNoNetworkWait = 500ms;

UploaderOptions Options(int port) {
  UploaderOptions options;
  options.analyzer_address = "127.0.0.1:" + std::to_string(port);
  options.security.insecure = true;  // a test double of the analyzer
  options.engine.upload.batch_max_results = 20;
  options.engine.upload.batch_max_age = 20ms;
  options.engine.upload.buffer_budget = config::MiB(64);
  options.engine.upload.backoff_initial = 10ms;
  options.engine.upload.backoff_max = 100ms;
  options.engine.ack_timeout = 5s;
  options.engine.upload.hello_timeout = 1s;
  options.jitter_seed = 1;
  return options;
}

// Appends results [first, first + count) spread over the NICs, in groups of
// 8 (a probe loop turn's): every other group through AppendResults (packed),
// the rest one Append each (rows, as older agents send them). Returns the
// longest any single call took.
std::chrono::nanoseconds AppendResults(Uploader& uploader, std::uint64_t first,
                                       std::uint64_t count) {
  const auto fill = [](std::uint64_t i, v1::ProbeResult& result) {
    result.set_src_nic(static_cast<std::uint32_t>(i % kNics));
    result.set_dst_nic(static_cast<std::uint32_t>((i + 1) % kNics));
    result.set_sequence(i / kNics);
    result.set_send_time_ns(static_cast<std::int64_t>(i));
  };
  std::chrono::nanoseconds longest{0};
  const auto timed = [&](const auto& call) {
    const auto start = std::chrono::steady_clock::now();
    call();
    longest = std::max<std::chrono::nanoseconds>(longest, std::chrono::steady_clock::now() - start);
  };
  constexpr std::uint64_t kGroup = 8;
  for (std::uint64_t g = first; g < first + count; g += kGroup) {
    const std::uint64_t n = std::min(kGroup, first + count - g);
    if ((g / kGroup) % 2 == 0) {
      std::vector<ProbeResult> results(n);
      for (std::uint64_t k = 0; k < n; ++k) {
        const std::uint64_t i = g + k;
        results[k].src_nic = static_cast<NicId>(i % kNics);
        results[k].dst_nic = static_cast<NicId>((i + 1) % kNics);
        results[k].sequence = i / kNics;
        results[k].send_time_ns = static_cast<std::int64_t>(i);
      }
      timed([&] { uploader.AppendResults(results); });
      continue;
    }
    for (std::uint64_t i = g; i < g + n; ++i) {
      v1::ProbeResult result;
      fill(i, result);
      timed([&] { uploader.Append(std::move(result)); });
    }
  }
  return longest;
}

void ExpectEveryResultExactlyOnce(const IngestStore& store, std::uint64_t total) {
  const auto results = store.results();
  EXPECT_EQ(results.size(), total);
  std::uint64_t missing = 0;
  for (std::uint64_t i = 0; i < total; ++i) {
    const auto it = results.find({"h003", kBoot, static_cast<std::uint32_t>(i % kNics), i / kNics});
    if (it == results.end()) {
      ++missing;
    } else {
      EXPECT_EQ(it->second, 1) << "result " << i << " counted " << it->second << " times";
    }
  }
  EXPECT_EQ(missing, 0u);
}

// The second analyzer may predate packed results: the batches packed for the
// first are then sent to it as messages.
void KillAndRestartMidRun(bool report_last_durable, bool second_reads_packed) {
  IngestStore store;
  // The first analyzer makes 8 batches durable-and-acked, then keeps storing
  // without acking: those acks are "lost in the crash".
  auto first = std::make_unique<TestIngestServer>(store, "127.0.0.1:0",
                                                  IngestBehavior{8, report_last_durable, true});
  ASSERT_TRUE(first->ok());
  const int port = first->port();

  SystemClock clock;
  Uploader uploader(clock, Options(port), Hello());
  uploader.Start();

  constexpr std::uint64_t kPhase = 400;  // 20 batches per phase
  AppendResults(uploader, 0, kPhase);
  // Kill while the stream is busy: some batches acked, some stored without an
  // ack, perhaps some still on the wire.
  ASSERT_TRUE(Eventually([&] {
    return uploader.Counters().batches_acknowledged >= 8 && store.batch_count() >= 12;
  })) << "batches stored: "
      << store.batch_count();
  first->Kill();
  const std::uint64_t stored_unacked = store.batch_count() - 8;
  EXPECT_EQ(uploader.Counters().batches_acknowledged, 8u);

  const auto down_longest = AppendResults(uploader, kPhase, kPhase);
  ASSERT_TRUE(Eventually([&] { return uploader.Counters().connect_failures >= 2; }))
      << "the uploader keeps trying while the analyzer is down";
  const auto more_down = AppendResults(uploader, 2 * kPhase, kPhase);
  EXPECT_LT(std::max(down_longest, more_down), kNoNetworkWait)
      << "Append must not wait for the network";
  EXPECT_GE(uploader.Counters().queue_depth, 2 * kPhase / 20);

  TestIngestServer second(store, "127.0.0.1:" + std::to_string(port),
                          {UINT64_MAX, report_last_durable, second_reads_packed});
  ASSERT_TRUE(second.ok()) << "port " << port << " could not be reused";
  AppendResults(uploader, 3 * kPhase, kPhase);

  EXPECT_TRUE(uploader.Shutdown(clock.MonotonicNow() + 10s)) << "everything acknowledged";
  ExpectEveryResultExactlyOnce(store, 4 * kPhase);

  const UploadCounters counters = uploader.Counters();
  EXPECT_EQ(counters.queue_depth, 0u);
  EXPECT_EQ(counters.batches_dropped, 0u);
  EXPECT_GE(counters.batches_closed, 4 * kPhase / 20);  // more if age closed some early
  EXPECT_GE(counters.connects, 2u);
  EXPECT_GE(counters.disconnects, 1u);
  EXPECT_GT(store.packed_batches(), 0U);
  EXPECT_EQ(store.malformed_batches(), 0U);
  if (second_reads_packed) {
    EXPECT_EQ(counters.batches_sent_as_rows, 0U);
  } else {
    EXPECT_GE(counters.batches_sent_as_rows, 3 * kPhase / 20);
  }
  if (report_last_durable) {
    // The batches stored but never acked are skipped on the strength of Hello.
    EXPECT_GE(counters.batches_already_durable, stored_unacked);
  } else {
    // They are resent, and the analyzer's dedup answers DUPLICATE.
    EXPECT_GE(counters.batches_duplicate, stored_unacked);
    EXPECT_GE(store.duplicate_batches(), stored_unacked);
    EXPECT_GE(counters.batches_resent, stored_unacked);
  }
}

TEST(upload_integration, KillAndRestartTheAnalyzerLosesAndDuplicatesNothing) {
  KillAndRestartMidRun(/*report_last_durable=*/true, /*second_reads_packed=*/true);
}

TEST(upload_integration, ResentBatchesAreDeduplicatedWhenHelloKnowsNothing) {
  KillAndRestartMidRun(/*report_last_durable=*/false, /*second_reads_packed=*/false);
}

TEST(upload_integration, StartsAndBuffersWithNoAnalyzerAtAll) {
  IngestStore store;
  int port = 0;
  {
    TestIngestServer probe(store, "127.0.0.1:0");  // a port that is free once it dies
    ASSERT_TRUE(probe.ok());
    port = probe.port();
  }
  SystemClock clock;
  Uploader uploader(clock, Options(port), Hello());
  uploader.Start();
  const auto longest = AppendResults(uploader, 0, 1000);
  EXPECT_LT(longest, kNoNetworkWait);
  ASSERT_TRUE(Eventually([&] { return uploader.Counters().connect_failures >= 2; }));
  const MonoTime deadline = clock.MonotonicNow() + 200ms;
  EXPECT_FALSE(uploader.Shutdown(deadline)) << "nothing could be acknowledged";
  EXPECT_LT(clock.MonotonicNow() - deadline, 2s) << "Shutdown honours its deadline";
  const UploadCounters counters = uploader.Counters();
  EXPECT_GE(counters.queue_depth, 1000u / 20);
  EXPECT_EQ(counters.queue_depth, counters.batches_closed) << "all kept, none dropped";
  EXPECT_EQ(counters.connects, 0u);
}

}  // namespace
}  // namespace hostmesh::agent::upload
