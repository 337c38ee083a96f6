// The analyzer's capture requests as the agent reads them (an UploadAck off
// the wire, agent/upload/uploader.cc): every request the desk takes must
// extract a record within its caps, and a hostile range must neither crash
// nor overflow the policy's arithmetic.
#include <cstddef>
#include <cstdint>

#include "agent/recorder/capture_desk.h"
#include "agent/recorder/flight_recorder.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/protobuf_quiet.h"

using namespace hostmesh;
using namespace hostmesh::agent::recorder;

namespace {

VirtualClock clock_;

// 300 probes at 1000..1299 ns in a ring of 4 KiB: the oldest overwritten.
const FlightRecorder& Recorder() {
  static FlightRecorder* recorder = [] {
    auto* r = new FlightRecorder(clock_, 4096);
    for (int i = 0; i < 300; ++i) {
      agent::ProbeResult p;
      p.send_time_ns = 1000 + i;
      r->RecordProbe(p);
    }
    return r;
  }();
  return *recorder;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  QuietProtobuf();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  v1::UploadAck ack;
  if (!ack.ParseFromArray(data, static_cast<int>(size))) return 0;
  const FlightRecorder& recorder = Recorder();
  const VirtualClock& clock = clock_;
  const ExtractLimits limits{.max_events = 64, .max_bytes = 2048};
  CaptureDesk desk(recorder, {}, limits, clock.MonotonicNow());
  for (const v1::CaptureRequest& request : ack.captures()) {
    const auto record = desk.Answer(request, clock.MonotonicNow());
    if (!record) continue;
    FUZZ_CHECK(request.incident_id() != 0 && request.from_ns() < request.to_ns());
    FUZZ_CHECK(static_cast<std::size_t>(record->events_size()) <= limits.max_events);
    FUZZ_CHECK(record->ByteSizeLong() <= limits.max_bytes);
    for (const v1::FlightEvent& e : record->events()) {
      FUZZ_CHECK(e.time_ns() >= request.from_ns() && e.time_ns() < request.to_ns());
    }
  }
  return 0;
}
