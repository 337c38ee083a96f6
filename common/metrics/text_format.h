// Prometheus text exposition format 0.0.4.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/metrics/snapshot.h"

namespace hostmesh::metrics {

inline constexpr std::string_view kTextFormatContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Renders families in the order given and series in the order given (the
// registry hands them over sorted). Families without series are left out, as
// the Prometheus Go client does. Pure: no clock, no registry.
std::string RenderText(std::span<const FamilySnapshot> families);

// A sample value as Prometheus reads it back bit for bit: integers without
// exponent ("1000000"), others shortest round-trip ("0.1", "1e-06"), and
// "+Inf", "-Inf", "NaN".
std::string FormatValue(double v);

}  // namespace hostmesh::metrics
