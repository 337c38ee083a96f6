// WindowAccumulator on what agents may send: timestamps the ingest does not
// bound yet.
#include "analyzer/analysis/window_accumulator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "analyzer/analysis/path_table.h"

namespace hostmesh::analysis {
namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

ProbeRecord Received(NicId src, NicId dst, std::int64_t t1, std::int64_t t2, std::int64_t t3,
                     std::int64_t t4) {
  ProbeRecord r;
  r.src_nic = src;
  r.dst_nic = dst;
  r.src_port = 49152;
  r.send_time_ns = 1'704'067'140'900'000'000;
  r.t1_app_send_ns = t1;
  r.t2_nic_send_ns = t2;
  r.t3_nic_recv_ns = t3;
  r.t4_app_recv_ns = t4;
  return r;
}

// Found by fuzz/analyzer_ingest_fuzz.cc: t3 - t2 and (t4 - t1) - latency
// overflowed on extreme timestamps. They saturate: a latency past every
// threshold is slow, one below every threshold is not.
TEST(WindowAccumulator, ExtremeTimestampsSaturateInsteadOfOverflowing) {
  WindowAccumulator window(0, kMax, 1'000'000);
  // Wrapped, t3 - t2 would be -2: not slow.
  window.Add(Received(0, 1, 1, kMin + 1, kMax, 2), PathTable::kNoPath, 0);
  // The fuzzer's input, t3 far below t2: wrapped, a latency of 292 years.
  window.Add(Received(1, 0, kMax, 1'704'067'140'900'003'000, -9'176'629'558'827'109'336, kMin),
             PathTable::kNoPath, 0);
  ASSERT_EQ(window.hosts().size(), 1u);
  const HostWindow& host = window.hosts()[0];
  EXPECT_EQ(host.Pair(0, 1).untraced_ok, 1u);
  EXPECT_EQ(host.Pair(0, 1).untraced_slow, 1u);
  EXPECT_EQ(host.Pair(1, 0).untraced_ok, 1u);
  EXPECT_EQ(host.Pair(1, 0).untraced_slow, 0u);
  EXPECT_EQ(host.latency.count(), 2u);
  EXPECT_EQ(host.processing.count(), 2u);
}

}  // namespace
}  // namespace hostmesh::analysis
