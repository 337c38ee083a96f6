// The trace engine (tracer/trace_engine.h) fed hostile ICMP: each probe the
// engine sends is answered as the fuzz input says (silence, Time Exceeded or
// Unreachable from a chosen address, a late reply to another TTL or an older
// generation, a reply with one byte changed, or raw bytes), after a chosen
// delay, in virtual time. So replies reach the matcher and the hop table with
// the right 5-tuple, which raw bytes alone seldom do. The trace must end, and
// its result must hold together.
#include <fuzzer/FuzzedDataProvider.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "fuzz/fuzz_check.h"
#include "tracer/icmp_builder.h"
#include "tracer/probe_tag.h"
#include "tracer/trace_engine.h"
#include "tracer/trace_io.h"

using namespace hostmesh;
using namespace hostmesh::tracer;

namespace {

class FuzzedTraceIo final : public TraceIo {
 public:
  FuzzedTraceIo(FuzzedDataProvider& in, VirtualClock& clock, const TraceRequest& request)
      : in_(in), clock_(clock), request_(request) {}

  std::string Open(const FiveTuple&, const std::string&) override {
    return in_.ConsumeIntegralInRange(0, 31) == 0 ? "open refused" : "";
  }

  std::string Send(const FiveTuple& tuple, int ttl,
                   std::span<const std::uint8_t> payload) override {
    FUZZ_CHECK(tuple == request_.tuple);
    FUZZ_CHECK(ttl >= 1 && ttl <= kMaxTtl && ttl <= request_.max_ttl);
    FUZZ_CHECK(++sends_ <= 4 * kMaxTtl);
    const auto delay = std::chrono::microseconds{in_.ConsumeIntegralInRange(0, 700'000)};
    const MonoTime at = clock_.MonotonicNow() + delay;
    const Ipv4 hop{0x0a000000u | in_.ConsumeIntegral<std::uint8_t>()};
    const std::size_t quote = in_.ConsumeIntegralInRange<std::size_t>(0, 64);
    switch (in_.ConsumeIntegralInRange(0, 7)) {
      case 0:
        break;  // silent
      case 1:
        Reply(at, BuildIcmpError(hop, tuple.src, 11, 0, tuple, payload, quote));
        break;
      case 2:
        Reply(at, BuildIcmpError(tuple.dst, tuple.src, 3, 3, tuple, payload, quote));
        break;
      case 3:
        Reply(at, BuildIcmpError(hop, tuple.src, 3, in_.ConsumeIntegral<std::uint8_t>(), tuple,
                                 payload, quote));
        break;
      case 4: {  // late: the reply to another TTL or generation of this 5-tuple
        const ProbeTag tag{in_.ConsumeIntegralInRange(0, kMaxTtl + 1),
                           request_.generation + in_.ConsumeIntegralInRange<std::uint32_t>(0, 5),
                           request_.session};
        std::vector<std::uint8_t> other = EncodeProbePayload(tag);
        if (other.empty()) other.assign(payload.begin(), payload.end());
        Reply(at, BuildIcmpError(hop, tuple.src, 11, 0, tuple, other, quote));
        break;
      }
      case 5: {  // one byte changed on the way
        auto packet = BuildIcmpError(hop, tuple.src, 11, 0, tuple, payload, quote);
        const std::size_t at_byte = in_.ConsumeIntegralInRange<std::size_t>(0, packet.size() - 1);
        packet[at_byte] = in_.ConsumeIntegral<std::uint8_t>();
        Reply(at, std::move(packet));
        break;
      }
      case 6: {  // anything at all
        const std::string raw = in_.ConsumeRandomLengthString(128);
        Reply(at, std::vector<std::uint8_t>(raw.begin(), raw.end()));
        break;
      }
      default:  // the same answer twice
        Reply(at, BuildIcmpError(hop, tuple.src, 11, 0, tuple, payload, quote));
        Reply(at + delay, BuildIcmpError(hop, tuple.src, 11, 0, tuple, payload, quote));
        break;
    }
    return in_.ConsumeIntegralInRange(0, 63) == 0 ? "send refused" : "";
  }

  bool Receive(MonoTime deadline, std::vector<std::uint8_t>& packet,
               MonoTime& received_at) override {
    FUZZ_CHECK(++receives_ <= 16 * kMaxTtl);  // a trace that never ends
    if (!pending_.empty() && pending_.begin()->first <= deadline) {
      auto first = pending_.begin();
      MoveTo(first->first);
      packet = std::move(first->second);
      received_at = first->first;
      pending_.erase(first);
      return true;
    }
    if (deadline != MonoTime::max()) MoveTo(deadline);
    return false;
  }

  void SleepUntil(MonoTime until) override { MoveTo(until); }

 private:
  void Reply(MonoTime at, std::vector<std::uint8_t> packet) {
    pending_.emplace(at, std::move(packet));
  }
  void MoveTo(MonoTime t) {
    if (t > clock_.MonotonicNow()) clock_.AdvanceTo(t);
  }

  FuzzedDataProvider& in_;
  VirtualClock& clock_;
  const TraceRequest& request_;
  std::multimap<MonoTime, std::vector<std::uint8_t>> pending_;
  int sends_ = 0;
  int receives_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  TraceRequest request;
  request.tuple = {Ipv4{0x0a000101}, Ipv4{0x0a000201}, 49152, kRoceV2Port, kIpProtoUdp};
  request.max_ttl = in.ConsumeIntegralInRange(1, kMaxTtl);
  request.probe_timeout = std::chrono::milliseconds{in.ConsumeIntegralInRange(1, 500)};
  request.min_probe_interval = std::chrono::milliseconds{in.ConsumeIntegralInRange(0, 3)};
  request.max_silent_run = in.ConsumeIntegralInRange(1, 4);
  request.destination_swallows = in.ConsumeBool();
  request.switch_hops = in.ConsumeIntegralInRange(0, 6);
  if (in.ConsumeBool()) request.first_hop = Ipv4{0x0a000001};
  if (in.ConsumeBool()) {
    for (int i = 0; i < request.switch_hops; ++i) {
      request.known_hops.push_back(Ipv4{0x0a000000u | in.ConsumeIntegral<std::uint8_t>()});
    }
  }
  request.generation = in.ConsumeIntegral<std::uint32_t>();
  request.session = in.ConsumeIntegral<std::uint32_t>();

  VirtualClock clock;
  FuzzedTraceIo io(in, clock, request);
  const TraceResult result = RunTrace(request, io, clock);
  FUZZ_CHECK(result.tuple == request.tuple);
  FUZZ_CHECK(result.hops.size() <= static_cast<std::size_t>(request.max_ttl));
  for (std::size_t i = 0; i < result.hops.size(); ++i) {
    FUZZ_CHECK(result.hops[i].ttl == static_cast<int>(i) + 1);
    // A silent hop is unknown: no address (trace_types.h).
    if (result.hops[i].status == HopStatus::kSilent) FUZZ_CHECK(result.hops[i].address.IsZero());
  }
  FUZZ_CHECK(ToString(result.end) != nullptr);
  FUZZ_CHECK(result.answered_hops() >= 0 && result.silent_hops() >= 0);
  return 0;
}
