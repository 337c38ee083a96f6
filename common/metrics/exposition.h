// The Prometheus text exposition format 0.0.4, written by prometheus-cpp's
// TextSerializer. What it writes: HELP and TYPE lines for every family given,
// label values escaped (backslash, quote, newline), values with 16 significant
// digits ("+Inf", "-Inf", "Nan"), a histogram's _count and _sum before its
// buckets.
#pragma once

#include <prometheus/metric_family.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/metrics/registry.h"

namespace hostmesh::metrics {

inline constexpr std::string_view kTextFormatContentType =
    "text/plain; version=0.0.4; charset=utf-8";

std::string RenderText(const std::vector<prometheus::MetricFamily>& families);

// RenderText(registry.Collect()).
std::string RenderText(const Registry& registry);

}  // namespace hostmesh::metrics
