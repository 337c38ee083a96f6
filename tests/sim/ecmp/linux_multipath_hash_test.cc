#include "sim/ecmp/linux_multipath_hash.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <vector>

namespace hostmesh::sim::ecmp {
namespace {

constexpr std::uint32_t Ip(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

// The reference vectors of the SipHash paper (Aumasson, Bernstein): key bytes
// 00..0f, message bytes 00..len-1, the digest as a little-endian integer.
TEST(SipHash24, PublishedVectors) {
  const SipKey key{0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};
  const std::vector<std::pair<std::size_t, std::uint64_t>> vectors = {
      {0, 0x726fdb47dd0e0e31ULL},  {1, 0x74f839c593dc67fdULL}, {7, 0xab0200f58b01d137ULL},
      {8, 0x93f5f5799a932462ULL},  {9, 0x9e0082df0ba9e4b0ULL}, {12, 0x751e8fbc860ee5fbULL},
      {15, 0xa129ca6149be45e5ULL},
  };
  std::array<std::uint8_t, 64> message{};
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<std::uint8_t>(i);
  for (const auto& [length, digest] : vectors) {
    EXPECT_EQ(SipHash24(key, std::span(message.data(), length)), digest) << "length " << length;
  }
}

TEST(JhashTwoWords, MixesBothWordsAndTheInitval) {
  const std::uint32_t base = JhashTwoWords(1, 2, 0);
  EXPECT_EQ(JhashTwoWords(1, 2, 0), base);
  EXPECT_NE(JhashTwoWords(2, 1, 0), base);
  EXPECT_NE(JhashTwoWords(1, 2, 1), base);
}

TEST(MultipathSipKey, RepeatsTheSeedInEveryHalf) {
  const SipKey key = MultipathSipKey(0x9e3779b9U);
  EXPECT_EQ(key.k0, 0x9e3779b99e3779b9ULL);
  EXPECT_EQ(key.k1, key.k0);
}

// The flow hash is the siphash of struct flow_keys from `basic` on (48 bytes
// for IPv4): checks the byte layout against the generic SipHash24.
TEST(OuterFlowHash, IsTheSiphashOfTheKernelsFlowKeysLayout) {
  const FlowTuple flow{Ip(198, 18, 0, 1), Ip(198, 18, 0, 17), 49152, 4791};
  const SipKey key = MultipathSipKey(1);
  std::array<std::uint8_t, 48> keys{};
  keys[2] = kIpProtoUdp;
  // Ports sort by their raw network-order value read as a little-endian u16:
  // 49152 (bytes c0 00, raw 0x00c0) before 4791 (bytes 12 b7, raw 0xb712), so
  // they stay in place; so do the addresses (raw 0x010012c6 < 0x110012c6).
  keys[28] = 0xc0;
  keys[29] = 0x00;
  keys[30] = 0x12;
  keys[31] = 0xb7;
  const std::array<std::uint8_t, 8> addrs = {198, 18, 0, 1, 198, 18, 0, 17};
  std::copy(addrs.begin(), addrs.end(), keys.begin() + 36);
  const auto expected = static_cast<std::uint32_t>(SipHash24(key, keys));
  EXPECT_EQ(OuterFlowHash(flow, kHashFiveTuple, key), expected);
  EXPECT_EQ(LinuxMultipathHash(flow, kHashFiveTuple, 1), JhashTwoWords(expected, 0, 0) >> 1);
}

// __flow_hash_consistentify sorts the addresses and, independently, the ports.
TEST(LinuxMultipathHash, IsSymmetric) {
  const std::uint32_t a = Ip(198, 18, 0, 3);
  const std::uint32_t b = Ip(198, 18, 1, 2);
  for (std::uint16_t port = 1000; port < 1100; ++port) {
    const std::uint32_t forward = LinuxMultipathHash({a, b, port, 4791}, kHashFiveTuple, 7);
    EXPECT_EQ(LinuxMultipathHash({b, a, 4791, port}, kHashFiveTuple, 7), forward);
    EXPECT_EQ(LinuxMultipathHash({b, a, port, 4791}, kHashFiveTuple, 7), forward);
    EXPECT_EQ(LinuxMultipathHash({a, b, 4791, port}, kHashFiveTuple, 7), forward);
  }
}

TEST(LinuxMultipathHash, IsThirtyOneBitsAndDependsOnEverySelectedField) {
  const FlowTuple flow{Ip(198, 18, 0, 1), Ip(198, 18, 0, 17), 49152, 4791};
  const std::uint32_t h = LinuxMultipathHash(flow, kHashFiveTuple, 1);
  EXPECT_LT(h, 1U << 31);
  FlowTuple other = flow;
  other.src_port = 49153;
  EXPECT_NE(LinuxMultipathHash(other, kHashFiveTuple, 1), h);
  other = flow;
  other.dst_ip = Ip(198, 18, 0, 19);
  EXPECT_NE(LinuxMultipathHash(other, kHashFiveTuple, 1), h);
  other = flow;
  other.ip_proto = 6;
  EXPECT_NE(LinuxMultipathHash(other, kHashFiveTuple, 1), h);
  EXPECT_NE(LinuxMultipathHash(flow, kHashFiveTuple, 2), h);
}

TEST(LinuxMultipathHash, IgnoresFieldsTheMaskLeavesOut) {
  const FlowTuple flow{Ip(198, 18, 0, 1), Ip(198, 18, 0, 17), 49152, 4791};
  const std::uint32_t l3 = kHashSrcIp | kHashDstIp | kHashIpProto;
  FlowTuple other = flow;
  other.src_port = 50000;
  EXPECT_EQ(LinuxMultipathHash(other, l3, 1), LinuxMultipathHash(flow, l3, 1));
  // No outer field at all: the kernel hashes nothing and mixes 0.
  EXPECT_EQ(LinuxMultipathHash(flow, 0, 1), JhashTwoWords(0, 0, 0) >> 1);
  EXPECT_EQ(LinuxMultipathHash(other, 0, 5), JhashTwoWords(0, 0, 0) >> 1);
}

TEST(MultipathHasher, EqualsTheFullHashForEveryProtocolAndMask) {
  for (const std::uint32_t fields :
       {kHashFiveTuple, kHashSrcIp | kHashDstIp, kHashOuterMask, kHashSrcPort, kHashIpProto, 0U}) {
    for (const std::uint32_t seed : {0U, 1U, 0xdeadbeefU}) {
      const MultipathHasher hasher(seed, fields);
      for (const std::uint8_t proto : {kIpProtoUdp, std::uint8_t{6}}) {
        for (std::uint16_t port = 4780; port < 4800; ++port) {
          const FlowTuple flow{Ip(198, 18, 0, 9), Ip(198, 18, 0, 4), port, 4791, proto};
          ASSERT_EQ(hasher(flow), LinuxMultipathHash(flow, fields, seed))
              << "fields " << fields << " seed " << seed << " proto " << int{proto};
        }
      }
    }
  }
}

// fib_rebalance: DIV_ROUND_CLOSEST_ULL((position+1) << 31, alive) - 1, by hand.
TEST(UpperBound, MatchesHandComputedBounds) {
  EXPECT_EQ(UpperBound(0, 1), 2147483647);
  EXPECT_EQ(UpperBound(0, 2), 1073741823);
  EXPECT_EQ(UpperBound(0, 4), 536870911);
  EXPECT_EQ(UpperBound(1, 4), 1073741823);
  EXPECT_EQ(UpperBound(2, 4), 1610612735);
  EXPECT_EQ(UpperBound(3, 4), 2147483647);
  // 2^31/3 = 715827882.67 rounds up, 2*2^31/3 = 1431655765.33 rounds down.
  EXPECT_EQ(UpperBound(0, 3), 715827882);
  EXPECT_EQ(UpperBound(1, 3), 1431655764);
  EXPECT_EQ(UpperBound(2, 3), 2147483647);
  // 2^31/6 = 357913941.33, 5*2^31/6 = 1789569706.67.
  EXPECT_EQ(UpperBound(0, 6), 357913940);
  EXPECT_EQ(UpperBound(4, 6), 1789569706);
  EXPECT_EQ(UpperBound(5, 6), 2147483647);
}

// fib_select_multipath: the first nexthop whose bound is at least the hash.
std::uint32_t ScanBounds(std::uint32_t hash, std::uint32_t alive) {
  for (std::uint32_t j = 0; j < alive; ++j) {
    if (static_cast<std::int64_t>(hash) <= UpperBound(j, alive)) return j;
  }
  return alive;
}

TEST(SelectNexthop, EqualsTheKernelsScanAtEveryBoundary) {
  for (std::uint32_t alive = 1; alive <= 70; ++alive) {
    for (std::uint32_t j = 0; j < alive; ++j) {
      const auto bound = static_cast<std::uint32_t>(UpperBound(j, alive));
      for (const std::uint32_t hash : {bound - 1, bound, bound + 1}) {
        if (hash >= 1U << 31) continue;
        ASSERT_EQ(SelectNexthop(hash, alive), ScanBounds(hash, alive))
            << "hash " << hash << " alive " << alive;
      }
    }
    EXPECT_EQ(SelectNexthop(0, alive), 0U);
    EXPECT_EQ(SelectNexthop((1U << 31) - 1, alive), alive - 1);
  }
  EXPECT_EQ(SelectNexthop(715827882, 3), 0U);
  EXPECT_EQ(SelectNexthop(715827883, 3), 1U);
}

TEST(SelectNexthop, SpreadsFlowsEvenly) {
  std::array<int, 4> counts{};
  for (std::uint32_t port = 0; port < 8192; ++port) {
    const FlowTuple flow{Ip(198, 18, 0, 1), Ip(198, 18, 0, 17),
                         static_cast<std::uint16_t>(49152 + port), 4791};
    ++counts[SelectNexthop(LinuxMultipathHash(flow, kHashFiveTuple, 1), 4)];
  }
  for (const int count : counts) {
    EXPECT_GT(count, 1800);
    EXPECT_LT(count, 2300);
  }
}

}  // namespace
}  // namespace hostmesh::sim::ecmp
