#include "analyzer/store/chunk_codec.h"

#include <cstdint>

namespace hostmesh::analyzer::store {

void AppendDelimited(std::string& out, const google::protobuf::MessageLite& message) {
  std::size_t size = message.ByteSizeLong();
  for (std::size_t v = size;; v >>= 7) {
    if (v < 0x80) {
      out.push_back(static_cast<char>(v));
      break;
    }
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
  }
  const std::size_t at = out.size();
  out.resize(at + size);
  // ByteSizeLong above cached the sizes this relies on.
  message.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(out.data() + at));
}

bool ReadDelimited(std::string_view& in, google::protobuf::MessageLite& message) {
  std::uint64_t size = 0;
  std::size_t i = 0;
  for (int shift = 0;; shift += 7) {
    if (i >= in.size() || shift > 63) return false;
    const auto byte = static_cast<unsigned char>(in[i++]);
    size |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) break;
  }
  if (size > in.size() - i) return false;
  if (!message.ParseFromArray(in.data() + i, static_cast<int>(size))) return false;
  in.remove_prefix(i + size);
  return true;
}

}  // namespace hostmesh::analyzer::store
