#include "analyzer/store/store_audit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace hostmesh::analyzer::store {
namespace {

TEST(StoreAudit, CountsDuplicatesAndGapsPerAgentBootAndNic) {
  std::map<Store::ResultIdentity, std::uint32_t> copies;
  for (std::uint64_t seq = 1; seq <= 10; ++seq) copies[{"a", 1, 0, seq}] = 1;
  copies[{"a", 1, 0, 4}] = 2;                                        // stored twice
  for (std::uint64_t seq : {5, 6, 9}) copies[{"a", 1, 1, seq}] = 1;  // 7 and 8 missing
  copies[{"a", 2, 0, 100}] = 1;                                      // a new boot
  copies[{"b", 1, 0, 1}] = 1;

  const auto rows = AuditResults(copies);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].agent_id, "a");
  EXPECT_EQ(rows[0].stored, 11u);
  EXPECT_EQ(rows[0].distinct, 10u);
  EXPECT_EQ(rows[0].duplicates, 1u);
  EXPECT_EQ(rows[0].missing, 0u);
  EXPECT_EQ(rows[1].src_nic, 1u);
  EXPECT_EQ(rows[1].first_seq, 5u);
  EXPECT_EQ(rows[1].last_seq, 9u);
  EXPECT_EQ(rows[1].missing, 2u);
  EXPECT_EQ(rows[2].boot_id, 2u);
  EXPECT_EQ(rows[2].missing, 0u);
  EXPECT_EQ(rows[3].agent_id, "b");

  const std::string json = AuditJsonLines(rows);
  EXPECT_NE(json.find(R"({"agent_id":"a","boot_id":1,"src_nic":1,"stored":3,"distinct":3,)"
                      R"("duplicates":0,"first_seq":5,"last_seq":9,"missing":2})"),
            std::string::npos)
      << json;
  EXPECT_EQ(std::count(json.begin(), json.end(), '\n'), 4);
}

TEST(StoreAudit, OnePassInAnyOrderFindsWhatTheFullCountFinds) {
  // Sequences of one NIC arriving out of order (buckets, resends), some twice,
  // some never: the streaming audit agrees with counting every copy, and
  // keeps one run per gap rather than one entry per result.
  std::mt19937_64 rng(9);
  std::map<Store::ResultIdentity, std::uint32_t> copies;
  ResultAuditor auditor;
  std::vector<std::uint64_t> order;
  for (std::uint64_t seq = 1000; seq < 21000; ++seq) {
    if (seq % 1000 == 7) continue;  // 20 gaps
    order.push_back(seq);
    if (seq % 997 == 0) order.push_back(seq);  // stored twice
  }
  for (std::size_t i = 0; i + 50 < order.size(); i += 50) {  // locally shuffled
    std::shuffle(order.begin() + static_cast<std::ptrdiff_t>(i),
                 order.begin() + static_cast<std::ptrdiff_t>(i + 50), rng);
  }
  for (std::uint64_t seq : order) {
    auditor.Add("a", 1, 3, seq);
    ++copies[{"a", 1, 3, seq}];
  }
  const auto rows = auditor.Rows();
  const auto full = AuditResults(copies);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(AuditJsonLines(rows), AuditJsonLines(full));
  EXPECT_EQ(rows[0].missing, 20u);
  EXPECT_EQ(rows[0].duplicates, 20u);
  EXPECT_EQ(rows[0].first_seq, 1000u);
  EXPECT_EQ(rows[0].last_seq, 20999u);
  EXPECT_EQ(auditor.runs(), 21u);
}

TEST(StoreAudit, NothingStoredIsNoRow) {
  EXPECT_TRUE(AuditResults({}).empty());
  EXPECT_EQ(AuditJsonLines({}), "");
}

}  // namespace
}  // namespace hostmesh::analyzer::store
