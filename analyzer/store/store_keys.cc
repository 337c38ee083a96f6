#include "analyzer/store/store_keys.h"

#include <limits>

namespace hostmesh::analyzer::store {

namespace {

constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;

template <typename T>
void AppendBigEndian(std::string& out, T v) {
  for (int shift = static_cast<int>(sizeof(T) * 8) - 8; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

template <typename T>
T ReadBigEndian(std::string_view in) {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    v = static_cast<T>((v << 8) | static_cast<unsigned char>(in[i]));
  }
  return v;
}

}  // namespace

std::int64_t BucketStart(std::int64_t time_ns) {
  const std::int64_t bucket = kRawBucket.count();
  std::int64_t q = time_ns / bucket;
  if (time_ns % bucket < 0) --q;
  // The first seconds after INT64_MIN have no bucket start of their own (it
  // would be below INT64_MIN): they share the lowest one there is.
  std::int64_t start = 0;
  if (__builtin_mul_overflow(q, bucket, &start)) return std::numeric_limits<std::int64_t>::min();
  return start;
}

void AppendU16(std::string& out, std::uint16_t v) {
  AppendBigEndian(out, v);
}
void AppendU32(std::string& out, std::uint32_t v) {
  AppendBigEndian(out, v);
}
void AppendU64(std::string& out, std::uint64_t v) {
  AppendBigEndian(out, v);
}
void AppendTime(std::string& out, std::int64_t time_ns) {
  AppendU64(out, static_cast<std::uint64_t>(time_ns) ^ kSignBit);
}
std::uint32_t ReadU32(std::string_view in) {
  return ReadBigEndian<std::uint32_t>(in);
}
std::uint64_t ReadU64(std::string_view in) {
  return ReadBigEndian<std::uint64_t>(in);
}
std::int64_t ReadTime(std::string_view in) {
  return static_cast<std::int64_t>(ReadU64(in) ^ kSignBit);
}

void AppendAgent(std::string& out, std::string_view agent_id) {
  if (agent_id.size() > kMaxAgentIdBytes) agent_id = agent_id.substr(0, kMaxAgentIdBytes);
  AppendU16(out, static_cast<std::uint16_t>(agent_id.size()));
  out.append(agent_id);
}

std::string TimeKey(std::int64_t time_ns) {
  std::string key;
  AppendTime(key, time_ns);
  return key;
}

std::string ChunkKey(std::int64_t bucket_ns, std::string_view agent_id, std::uint64_t boot_id,
                     std::uint64_t batch_seq) {
  std::string key;
  key.reserve(8 + 2 + agent_id.size() + 16);
  AppendTime(key, bucket_ns);
  AppendAgent(key, agent_id);
  AppendU64(key, boot_id);
  AppendU64(key, batch_seq);
  return key;
}

std::string LedgerPrefix(std::string_view agent_id, std::uint64_t boot_id) {
  std::string key;
  AppendAgent(key, agent_id);
  AppendU64(key, boot_id);
  return key;
}

std::string LedgerKey(std::string_view agent_id, std::uint64_t boot_id, std::uint64_t batch_seq) {
  std::string key = LedgerPrefix(agent_id, boot_id);
  AppendU64(key, batch_seq);
  return key;
}

std::string HelloKey(std::string_view agent_id, std::uint64_t boot_id) {
  return LedgerPrefix(agent_id, boot_id);
}

std::string WindowKey(std::int64_t window_start_ns, std::string_view scope) {
  std::string key = TimeKey(window_start_ns);
  key.append(scope);
  return key;
}

std::string IncidentKey(std::int64_t opened_ns, std::uint64_t incident_id) {
  std::string key = TimeKey(opened_ns);
  AppendU64(key, incident_id);
  return key;
}

std::string EvidenceKey(std::uint64_t incident_id, std::uint32_t part) {
  std::string key;
  AppendU64(key, incident_id);
  AppendU32(key, part);
  return key;
}

std::optional<ChunkKeyParts> ParseChunkKey(std::string_view key) {
  if (key.size() < 8 + 2 + 16) return std::nullopt;
  ChunkKeyParts parts;
  parts.bucket_ns = ReadTime(key);
  const std::size_t agent_len = ReadBigEndian<std::uint16_t>(key.substr(8));
  if (key.size() != 8 + 2 + agent_len + 16) return std::nullopt;
  parts.agent_id = key.substr(10, agent_len);
  parts.boot_id = ReadU64(key.substr(10 + agent_len));
  parts.batch_seq = ReadU64(key.substr(18 + agent_len));
  return parts;
}

std::string FlightRecordPrefix(std::uint64_t incident_id) {
  std::string key;
  AppendU64(key, incident_id);
  return key;
}

std::string FlightRecordKey(std::uint64_t incident_id, std::string_view agent_id,
                            std::uint64_t boot_id, std::uint64_t batch_seq) {
  std::string key = FlightRecordPrefix(incident_id);
  AppendAgent(key, agent_id);
  AppendU64(key, boot_id);
  AppendU64(key, batch_seq);
  return key;
}

std::optional<FlightRecordKeyParts> ParseFlightRecordKey(std::string_view key) {
  // The same shape as a chunk key, the incident id where the bucket is.
  const std::optional<ChunkKeyParts> chunk = ParseChunkKey(key);
  if (!chunk) return std::nullopt;
  return FlightRecordKeyParts{ReadU64(key), chunk->agent_id, chunk->boot_id, chunk->batch_seq};
}

std::uint64_t LedgerKeySeq(std::string_view key) {
  return key.size() >= 8 ? ReadU64(key.substr(key.size() - 8)) : 0;
}

}  // namespace hostmesh::analyzer::store
