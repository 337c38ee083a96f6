// Crash durability: a child process commits batches from several streams and
// reports each ack over a pipe; the parent SIGKILLs it mid-run (no flush, no
// destructor), reopens the store and finds every acked batch, whole, once.
// Its own binary so the parent is single-threaded when it forks.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <semaphore>
#include <set>
#include <thread>
#include <vector>

#include "analyzer/store/group_committer.h"
#include "analyzer/store/store.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"

namespace hostmesh::analyzer::store {
namespace {

using analyzer::testing::MakeBatch;
using analyzer::testing::TempDir;

constexpr int kStreams = 3;
constexpr int kResultsPerBatch = 100;
constexpr std::uint64_t kBoot = 1;

std::string Agent(int stream) {
  return "h" + std::to_string(stream);
}

// Never returns: commits until killed. Each record on `ack_fd` is
// (stream << 32 | batch_seq), written once the batch is durable.
[[noreturn]] void RunChild(const std::filesystem::path& db, int ack_fd) {
  SystemClock clock;
  std::string error;
  StoreOptions options;
  options.data_dir = db;
  std::unique_ptr<Store> store = Store::Open(clock, options, error);
  if (!store) _exit(2);
  GroupCommitter committer(clock, *store);
  std::vector<std::thread> streams;
  for (int s = 0; s < kStreams; ++s) {
    streams.emplace_back([&, s] {
      auto lane = std::make_shared<CommitLane>();
      std::counting_semaphore<8> in_flight(8);  // like an agent's stream window
      for (std::uint64_t seq = 1;; ++seq) {
        in_flight.acquire();
        committer.Submit(lane,
                         MakeBatch(Agent(s), kBoot, seq, kResultsPerBatch, clock.RealtimeNow()),
                         [&, s](const CommitReport& report, v1::UploadBatch& batch) {
                           if (report.outcome.status != CommitStatus::kStored) _exit(3);
                           const std::uint64_t record =
                               (static_cast<std::uint64_t>(s) << 32) | batch.batch_seq();
                           if (write(ack_fd, &record, sizeof record) != sizeof record) _exit(4);
                           in_flight.release();
                         });
      }
    });
  }
  for (std::thread& t : streams) t.join();
  _exit(0);
}

TEST(store_crash, EveryAckedBatchSurvivesSigkillWholeAndOnce) {
  TempDir dir;
  const std::filesystem::path db = dir.path() / "db";
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    RunChild(db, fds[1]);
  }
  close(fds[1]);

  std::set<std::pair<int, std::uint64_t>> acked;
  auto read_record = [&]() {
    std::uint64_t record = 0;
    std::size_t got = 0;
    while (got < sizeof record) {
      const ssize_t n = read(fds[0], reinterpret_cast<char*>(&record) + got, sizeof record - got);
      if (n <= 0) return false;
      got += static_cast<std::size_t>(n);
    }
    acked.emplace(static_cast<int>(record >> 32), record & 0xffffffffu);
    return true;
  };
  // Kill while all streams are busy committing.
  while (acked.size() < 300) ASSERT_TRUE(read_record()) << "the child died on its own";
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  while (read_record()) {
  }  // acks written before the kill
  close(fds[0]);

  SystemClock clock;
  std::string error;
  StoreOptions options;
  options.data_dir = db;
  std::unique_ptr<Store> store = Store::Open(clock, options, error);
  ASSERT_TRUE(store) << error;

  const auto copies = store->CountResultCopies();
  for (const auto& [identity, n] : copies) {
    ASSERT_EQ(n, 1u) << std::get<0>(identity) << " nic " << std::get<2>(identity) << " seq "
                     << std::get<3>(identity) << " stored " << n << " times";
  }
  const auto by_agent = store->CountResultsByAgent();
  for (int s = 0; s < kStreams; ++s) {
    const std::uint64_t last = store->LastDurableBatchSeq(Agent(s), kBoot);
    std::uint64_t max_acked = 0;
    for (const auto& [stream, seq] : acked) {
      if (stream == s) max_acked = std::max(max_acked, seq);
    }
    EXPECT_GE(last, max_acked) << "an acked batch of " << Agent(s) << " is missing";
    // Batches of a stream commit in order, each whole: exactly the prefix
    // 1..last is there, with all of its results.
    const auto it = by_agent.find(Agent(s));
    EXPECT_EQ(it == by_agent.end() ? 0u : it->second, last * kResultsPerBatch) << Agent(s);
    for (std::uint64_t seq = 1; seq <= max_acked; ++seq) {
      for (std::uint32_t nic = 0; nic < 4; ++nic) {
        ASSERT_EQ(copies.count({Agent(s), kBoot, nic, seq * kResultsPerBatch}), 1u)
            << Agent(s) << " batch " << seq << " nic " << nic;
      }
    }
  }
}

}  // namespace
}  // namespace hostmesh::analyzer::store
