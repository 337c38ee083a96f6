// Fitting a capture's probes to the incident's byte budget: timeouts first,
// successes thinned evenly per 5-tuple.
#include "analyzer/evidence/probe_budget.h"

#include <gtest/gtest.h>

#include <map>

namespace hostmesh::analyzer::evidence {
namespace {

// `n` probes over `tuples` 5-tuples, one in `timeout_every` timed out.
std::vector<v1::evidence::Probe> Probes(int n, int tuples, int timeout_every) {
  std::vector<v1::evidence::Probe> out;
  for (int i = 0; i < n; ++i) {
    v1::evidence::Probe& p = out.emplace_back();
    p.set_tuple(static_cast<std::uint32_t>(i % tuples));
    p.set_send_time_ns(1'704'067'200'000'000'000 + std::int64_t{i} * 1'000'000);
    p.set_timeout(i % timeout_every == 0);
    if (!p.timeout()) {
      p.set_network_ns(8000 + i % 100);
      p.set_processing_ns(20000 + i % 1000);
    }
  }
  return out;
}

std::uint64_t Bytes(const std::vector<v1::evidence::Probe>& probes) {
  std::uint64_t b = 0;
  for (const auto& p : probes) b += EncodedBytes(p);
  return b;
}

TEST(ProbeBudget, WhatFitsIsKeptWhole) {
  auto probes = Probes(100, 4, 10);
  const std::uint64_t bytes = Bytes(probes);
  const BudgetOutcome fit = FitToBudget(probes, bytes);
  EXPECT_EQ(probes.size(), 100u);
  EXPECT_EQ(fit.every, 1u);
  EXPECT_EQ(fit.thinned, 0u);
  EXPECT_EQ(fit.bytes, bytes);
}

TEST(ProbeBudget, OverTheBudgetSuccessesAreThinnedAndEveryTimeoutKept) {
  auto probes = Probes(10000, 8, 50);
  const std::uint64_t bytes = Bytes(probes);
  std::map<std::uint32_t, std::size_t> successes;  // per tuple, before
  for (const auto& p : probes) successes[p.tuple()] += p.timeout() ? 0 : 1;
  const BudgetOutcome fit = FitToBudget(probes, bytes / 4);
  EXPECT_LE(fit.bytes, bytes / 4);
  EXPECT_EQ(fit.bytes, Bytes(probes));
  EXPECT_GE(fit.every, 4u);
  EXPECT_EQ(fit.over_budget, 0u);
  std::size_t timeouts = 0;
  std::map<std::uint32_t, std::size_t> kept;
  for (const auto& p : probes) {
    timeouts += p.timeout() ? 1 : 0;
    if (!p.timeout()) ++kept[p.tuple()];
  }
  EXPECT_EQ(timeouts, 200u);
  EXPECT_EQ(probes.size() + fit.thinned, 10000u);
  // Evenly: every 5-tuple keeps 1 in `every` of its successes.
  ASSERT_EQ(kept.size(), 8u);
  for (const auto& [tuple, n] : kept) {
    EXPECT_NEAR(static_cast<double>(n),
                static_cast<double>(successes[tuple]) / static_cast<double>(fit.every), 1)
        << tuple;
  }
  // Still in send-time order.
  for (std::size_t i = 1; i < probes.size(); ++i) {
    EXPECT_LE(probes[i - 1].send_time_ns(), probes[i].send_time_ns());
  }
}

TEST(ProbeBudget, WhenTimeoutsAloneOverflowTheEarliestAreKept) {
  auto probes = Probes(1000, 4, 1);  // all timed out
  const std::uint64_t budget = Bytes(probes) / 10;
  const std::int64_t first = probes.front().send_time_ns();
  const BudgetOutcome fit = FitToBudget(probes, budget);
  EXPECT_EQ(fit.every, 0u);
  EXPECT_LE(fit.bytes, budget);
  EXPECT_EQ(probes.size() + fit.over_budget, 1000u);
  ASSERT_FALSE(probes.empty());
  EXPECT_EQ(probes.front().send_time_ns(), first) << "the onset is kept";
}

TEST(ProbeBudget, NoBudgetKeepsNothing) {
  auto probes = Probes(10, 2, 3);
  const BudgetOutcome fit = FitToBudget(probes, 0);
  EXPECT_TRUE(probes.empty());
  EXPECT_EQ(fit.bytes, 0u);
  EXPECT_EQ(fit.over_budget + fit.thinned, 10u);
}

}  // namespace
}  // namespace hostmesh::analyzer::evidence
