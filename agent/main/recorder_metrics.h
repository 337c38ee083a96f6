#pragma once

// The flight recorder's /metrics: the ring's bytes and events, captures the
// analyzer asked for, uploaded and refused (by reason), and local captures.

#include <atomic>
#include <cstdint>

#include "agent/recorder/capture_desk.h"
#include "agent/recorder/flight_recorder.h"
#include "common/metrics/registry.h"

namespace hostmesh::agent::app {

// Everything passed must outlive the registry's scrapes.
void RegisterRecorderMetrics(metrics::Registry& registry, const recorder::FlightRecorder& recorder,
                             const recorder::CaptureDesk& desk,
                             const std::atomic<std::uint64_t>& local_captures,
                             const std::atomic<std::uint64_t>& local_capture_failures);

}  // namespace hostmesh::agent::app
