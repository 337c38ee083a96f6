// The probe payload decoder (agent/core/probe_codec.h): what any host on the
// fabric can send to an agent's probe port. Each input is decoded as it came
// and once more with its checksum made right (so the fuzzer gets past the CRC
// without guessing it), against a fixed boot id and against the boot id it
// carries (so it reaches kOk without guessing 64 bits). An accepted probe must
// encode back to a payload that decodes to the same header.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "agent/core/crc32c.h"
#include "agent/core/probe_codec.h"
#include "fuzz/fuzz_check.h"

using namespace hostmesh::agent;

namespace {

constexpr std::size_t kChecksumOffset = 12;

void Check(std::span<const std::uint8_t> packet) {
  const DecodeResult fixed = DecodeProbe(packet, 0x0123456789abcdefULL);
  FUZZ_CHECK(!DecodeStatusName(fixed.status).empty());
  std::uint64_t carried = 0;
  for (std::size_t i = 16; i < 24 && i < packet.size(); ++i) carried = (carried << 8) | packet[i];
  const DecodeResult own = DecodeProbe(packet, carried);
  if (own.status != DecodeStatus::kOk) return;
  FUZZ_CHECK(own.header.src_nic <= kMaxWireNicId && own.header.dst_nic <= kMaxWireNicId);
  std::vector<std::uint8_t> again(packet.size());
  FUZZ_CHECK(EncodeProbe(own.header, again));
  const DecodeResult back = DecodeProbe(again, carried);
  FUZZ_CHECK(back.status == DecodeStatus::kOk && back.header == own.header);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Check({data, size});
  if (size < kChecksumOffset + 4) return 0;
  std::vector<std::uint8_t> mended(data, data + size);
  for (std::size_t i = 0; i < 4; ++i) mended[kChecksumOffset + i] = 0;
  const std::uint32_t crc = Crc32c(mended);
  for (std::size_t i = 0; i < 4; ++i) {
    mended[kChecksumOffset + i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
  }
  Check(mended);
  return 0;
}
