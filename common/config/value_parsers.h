#pragma once

// Parsers for the scalar notations config files use. Pure functions: nullopt on
// any malformed or overflowing input; callers phrase the error.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/config/value_types.h"

namespace hostmesh::config {

// "true" or "false". YAML 1.1 spellings (yes/no/on/off) are refused on purpose:
// "no" silently meaning false surprises people.
std::optional<bool> ParseBool(std::string_view text);

// Decimal integers with an optional sign; no spaces, no hex.
std::optional<std::int64_t> ParseInt64(std::string_view text);
std::optional<std::uint64_t> ParseUint64(std::string_view text);

// A finite decimal number ("0.25", "20", "1e3").
std::optional<double> ParseDouble(std::string_view text);

// One or more <number><unit> terms, units ns, us (or µs), ms, s, m, h: "100ms",
// "1.5s", "1m30s", "250us". "0" alone is zero. Fractions are exact to the
// nanosecond (no floating point). Negative durations are refused.
std::optional<std::chrono::nanoseconds> ParseDuration(std::string_view text);
// Shortest exact text in the largest fitting unit: 1500ms -> "1500ms", 60s -> "1m".
std::string FormatDuration(std::chrono::nanoseconds d);

// <number>[ ]<unit>, units B, kB/KB, KiB, MB, MiB, GB, GiB, TB, TiB (unit letters
// case-insensitive), or a plain byte count: "64MiB", "512KiB", "1000", "1.5GiB".
// The result must be a whole number of bytes.
std::optional<ByteSize> ParseByteSize(std::string_view text);
// Exact text in the largest binary unit that divides it: "64MiB", "1000B".
std::string FormatByteSize(ByteSize size);

// An IPv4 dotted quad or an IPv6 address (no brackets, no zone).
std::optional<IpAddress> ParseIpAddress(std::string_view text);

// "host:port", "198.19.128.1:50051", "[fd00::1]:50051"; port 0..65535 (0 is
// accepted here because a listener may ask for an ephemeral port).
std::optional<Endpoint> ParseEndpoint(std::string_view text);

}  // namespace hostmesh::config
