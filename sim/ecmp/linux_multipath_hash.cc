#include "sim/ecmp/linux_multipath_hash.h"

#include <array>
#include <bit>
#include <utility>

namespace hostmesh::sim::ecmp {

namespace {

struct SipState {
  std::uint64_t v0, v1, v2, v3;

  explicit SipState(const std::array<std::uint64_t, 4>& v)
      : v0(v[0]), v1(v[1]), v2(v[2]), v3(v[3]) {}
  std::array<std::uint64_t, 4> Save() const { return {v0, v1, v2, v3}; }

  explicit SipState(const SipKey& key)
      : v0(0x736f6d6570736575ULL ^ key.k0),
        v1(0x646f72616e646f6dULL ^ key.k1),
        v2(0x6c7967656e657261ULL ^ key.k0),
        v3(0x7465646279746573ULL ^ key.k1) {}

  void Round() {
    v0 += v1;
    v1 = std::rotl(v1, 13);
    v1 ^= v0;
    v0 = std::rotl(v0, 32);
    v2 += v3;
    v3 = std::rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = std::rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = std::rotl(v1, 17);
    v1 ^= v2;
    v2 = std::rotl(v2, 32);
  }
  void Compress(std::uint64_t m) {
    v3 ^= m;
    Round();
    Round();
    v0 ^= m;
  }
  std::uint64_t Finish() {
    v2 ^= 0xff;
    Round();
    Round();
    Round();
    Round();
    return v0 ^ v1 ^ v2 ^ v3;
  }
};

std::uint64_t LoadLe64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// struct flow_keys (include/net/flow_dissector.h) from `basic` on, the part
// __flow_hash_from_keys hashes for an IPv4 key: flow_keys_hash_length is
// sizeof(flow_keys) - offsetof(basic) - sizeof(addrs) + sizeof(v4addrs)
// = 80 - 8 - 32 + 8 = 48 bytes, i.e. 6 little-endian words:
//   bytes  0..3   basic: n_proto (0 here), ip_proto, padding
//   bytes  4..7   tags.flow_label
//   bytes  8..23  vlan, cvlan
//   bytes 24..27  keyid
//   bytes 28..31  ports: src, dst (network order)
//   bytes 32..35  icmp
//   bytes 36..43  addrs.v4addrs: src, dst (network order)
//   bytes 44..47  the rest of the addrs union, zeroed by the kernel's memset
constexpr std::size_t kHashedWords = 6;
constexpr std::uint64_t kHashedBytes = kHashedWords * 8;

// A big-endian (network order) field as the little-endian machine sees it
// when it compares or loads it: what the kernel's (__force u32) casts compare.
constexpr std::uint32_t Raw32(std::uint32_t host_order) {
  return __builtin_bswap32(host_order);
}
constexpr std::uint16_t Raw16(std::uint16_t host_order) {
  return __builtin_bswap16(host_order);
}

}  // namespace

std::uint64_t SipHash24(const SipKey& key, std::span<const std::uint8_t> data) {
  SipState s(key);
  const std::size_t words = data.size() / 8;
  for (std::size_t i = 0; i < words; ++i) s.Compress(LoadLe64(data.data() + 8 * i));
  std::uint64_t last = static_cast<std::uint64_t>(data.size()) << 56;
  for (std::size_t i = words * 8; i < data.size(); ++i) {
    last |= std::uint64_t{data[i]} << (8 * (i - words * 8));
  }
  s.Compress(last);
  return s.Finish();
}

std::uint32_t JhashTwoWords(std::uint32_t a, std::uint32_t b, std::uint32_t initval) {
  // __jhash_nwords(a, b, 0, initval + JHASH_INITVAL + (2 << 2)), then __jhash_final.
  const std::uint32_t iv = initval + 0xdeadbeefU + 8U;
  a += iv;
  b += iv;
  std::uint32_t c = iv;
  c ^= b;
  c -= std::rotl(b, 14);
  a ^= c;
  a -= std::rotl(c, 11);
  b ^= a;
  b -= std::rotl(a, 25);
  c ^= b;
  c -= std::rotl(b, 16);
  a ^= c;
  a -= std::rotl(c, 4);
  b ^= a;
  b -= std::rotl(a, 14);
  c ^= b;
  c -= std::rotl(b, 24);
  return c;
}

SipKey MultipathSipKey(std::uint32_t seed) {
  const std::uint64_t half = (std::uint64_t{seed} << 32) | seed;
  return {half, half};
}

namespace {

// The hashed fields of one flow, as flow_keys holds them after consistentify.
struct HashedFields {
  std::uint8_t proto = 0;
  std::uint32_t src = 0;  // raw network-order values
  std::uint32_t dst = 0;
  std::uint16_t sport = 0;
  std::uint16_t dport = 0;
};

HashedFields Select(const FlowTuple& flow, std::uint32_t fields) {
  HashedFields f;
  f.proto = (fields & kHashIpProto) != 0 ? flow.ip_proto : 0;
  f.src = (fields & kHashSrcIp) != 0 ? Raw32(flow.src_ip) : 0;
  f.dst = (fields & kHashDstIp) != 0 ? Raw32(flow.dst_ip) : 0;
  f.sport = (fields & kHashSrcPort) != 0 ? Raw16(flow.src_port) : 0;
  f.dport = (fields & kHashDstPort) != 0 ? Raw16(flow.dst_port) : 0;
  // __flow_hash_consistentify: addresses and ports sorted independently, as
  // the raw (network order) values compare on a little-endian machine.
  if (f.dst < f.src) std::swap(f.src, f.dst);
  if (f.dport < f.sport) std::swap(f.sport, f.dport);
  return f;
}

// The first three words: nothing of the flow but the protocol.
SipState Prefix(const SipKey& key, std::uint8_t proto) {
  SipState s(key);
  s.Compress(std::uint64_t{proto} << 16);  // basic, tags
  s.Compress(0);                           // vlan
  s.Compress(0);                           // cvlan
  return s;
}

std::uint32_t Suffix(SipState s, const HashedFields& f) {
  // keyid, then ports as stored: src at byte 28, dst at byte 30.
  s.Compress((std::uint64_t{f.sport} | (std::uint64_t{f.dport} << 16)) << 32);
  s.Compress(std::uint64_t{f.src} << 32);  // icmp, v4addrs.src
  s.Compress(f.dst);                       // v4addrs.dst, zero padding
  s.Compress(kHashedBytes << 56);
  const auto hash = static_cast<std::uint32_t>(s.Finish());
  return hash == 0 ? 1 : hash;
}

}  // namespace

std::uint32_t OuterFlowHash(const FlowTuple& flow, std::uint32_t fields, const SipKey& key) {
  if ((fields & kHashOuterMask) == 0) return 0;
  const HashedFields f = Select(flow, fields);
  return Suffix(Prefix(key, f.proto), f);
}

std::uint32_t LinuxMultipathHash(const FlowTuple& flow, std::uint32_t fields, std::uint32_t seed) {
  const std::uint32_t outer = OuterFlowHash(flow, fields, MultipathSipKey(seed));
  return JhashTwoWords(outer, /*inner=*/0, 0) >> 1;
}

MultipathHasher::MultipathHasher(std::uint32_t seed, std::uint32_t fields)
    : seed_(seed),
      fields_(fields),
      prefix_proto_((fields & kHashIpProto) != 0 ? kIpProtoUdp : 0),
      prefix_(Prefix(MultipathSipKey(seed), prefix_proto_).Save()) {}

std::uint32_t MultipathHasher::operator()(const FlowTuple& flow) const {
  if ((fields_ & kHashOuterMask) == 0) return LinuxMultipathHash(flow, fields_, seed_);
  const HashedFields f = Select(flow, fields_);
  const SipState prefix =
      f.proto == prefix_proto_ ? SipState(prefix_) : Prefix(MultipathSipKey(seed_), f.proto);
  return JhashTwoWords(Suffix(prefix, f), /*inner=*/0, 0) >> 1;
}

std::int32_t UpperBound(std::uint32_t position, std::uint32_t alive) {
  // DIV_ROUND_CLOSEST_ULL((u64)w << 31, total) - 1 with w = position + 1.
  const std::uint64_t w = std::uint64_t{position} + 1;
  return static_cast<std::int32_t>(static_cast<std::int64_t>(((w << 31) + alive / 2) / alive) - 1);
}

}  // namespace hostmesh::sim::ecmp
