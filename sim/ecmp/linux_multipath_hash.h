#pragma once

// Linux's IPv4 multipath routing decision for a forwarded packet, bit-exact
// with kernel 6.18 (checked against the testbed's kernel by the fixtures in
// tests/sim/ecmp/fixtures): fib_multipath_hash_policy=3 (custom fields), the
// fib_multipath_hash_seed sysctl, and hash-threshold selection among the
// nexthops of a multipath route with equal weights. A re-implementation from
// the kernel's documented behaviour; sim/ecmp/README.md walks through it.

#include <array>
#include <cstdint>
#include <span>

namespace hostmesh::sim::ecmp {

// fib_multipath_hash_fields bits (include/net/ip_fib.h). Only the outer ones
// matter for a packet without encapsulation; the inner hash of such a packet is 0.
inline constexpr std::uint32_t kHashSrcIp = 1U << 0;
inline constexpr std::uint32_t kHashDstIp = 1U << 1;
inline constexpr std::uint32_t kHashIpProto = 1U << 2;
inline constexpr std::uint32_t kHashFlowLabel = 1U << 3;  // IPv6 only: no effect here
inline constexpr std::uint32_t kHashSrcPort = 1U << 4;
inline constexpr std::uint32_t kHashDstPort = 1U << 5;
inline constexpr std::uint32_t kHashOuterMask = 0x3f;
// What every testbed switch sets (0x37): the UDP 5-tuple.
inline constexpr std::uint32_t kHashFiveTuple =
    kHashSrcIp | kHashDstIp | kHashIpProto | kHashSrcPort | kHashDstPort;

inline constexpr std::uint8_t kIpProtoUdp = 17;

// One IPv4 packet's hashed header fields, host byte order.
struct FlowTuple {
  std::uint32_t src_ip = 0;
  std::uint32_t dst_ip = 0;
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  std::uint8_t ip_proto = kIpProtoUdp;
};

struct SipKey {
  std::uint64_t k0 = 0;
  std::uint64_t k1 = 0;
};

// SipHash-2-4 of `data` (lib/siphash.c computes the standard function).
std::uint64_t SipHash24(const SipKey& key, std::span<const std::uint8_t> data);

// jhash_2words (include/linux/jhash.h): Jenkins' final mix of two words.
std::uint32_t JhashTwoWords(std::uint32_t a, std::uint32_t b, std::uint32_t initval);

// The key fib_multipath_hash_construct_key makes of the sysctl's seed: the
// 32-bit seed twice in each 64-bit half.
SipKey MultipathSipKey(std::uint32_t seed);

// The flow hash of the selected fields (fib_multipath_custom_hash_outer):
// __flow_hash_from_keys over struct flow_keys after __flow_hash_consistentify
// (addresses and ports each sorted, so both directions hash alike); never 0.
// 0 when `fields` selects no outer field at all, as the kernel returns.
std::uint32_t OuterFlowHash(const FlowTuple& flow, std::uint32_t fields, const SipKey& key);

// fib_multipath_hash for a forwarded packet under policy 3: the outer flow hash
// mixed with the (zero) inner one by jhash_2words, shifted right by one: 31 bits.
std::uint32_t LinuxMultipathHash(const FlowTuple& flow, std::uint32_t fields, std::uint32_t seed);

// LinuxMultipathHash of one switch (its seed and fields), with the part of
// the siphash that no field of a UDP flow enters (the first 24 of the 48
// bytes) done once: what a simulator calls per probe.
class MultipathHasher {
 public:
  MultipathHasher(std::uint32_t seed, std::uint32_t fields);
  std::uint32_t operator()(const FlowTuple& flow) const;
  std::uint32_t seed() const { return seed_; }

 private:
  std::uint32_t seed_;
  std::uint32_t fields_;
  std::uint8_t prefix_proto_;
  std::array<std::uint64_t, 4> prefix_;  // SipHash state after the first 3 words
};

// fib_rebalance's upper bound of the alive nexthop at `position` (0-based)
// among `alive` equal-weight ones: round((position + 1) * 2^31 / alive) - 1.
// Dead nexthops get -1 in the kernel and are skipped.
std::int32_t UpperBound(std::uint32_t position, std::uint32_t alive);

// fib_select_multipath: the first alive nexthop whose upper bound is at least
// `hash`, as a position among the `alive` ones (alive >= 1). Closed form of
// that scan, no division: hash <= bound(j)  <=>  (hash+1)*n - n/2 <= (j+1)*2^31.
inline std::uint32_t SelectNexthop(std::uint32_t hash, std::uint32_t alive) {
  const std::uint64_t t = (std::uint64_t{hash} + 1) * alive - alive / 2;
  return static_cast<std::uint32_t>((t + (1ULL << 31) - 1) >> 31) - 1;
}

}  // namespace hostmesh::sim::ecmp
