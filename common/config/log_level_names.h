#pragma once

#include <array>

#include "common/base/logging.h"
#include "common/config/map_reader.h"

namespace hostmesh::config {

// The spellings of `log_level` in every program's config.
inline constexpr std::array<EnumName<LogLevel>, 7> kLogLevelNames = {{
    {"trace", LogLevel::kTrace},
    {"debug", LogLevel::kDebug},
    {"info", LogLevel::kInfo},
    {"warn", LogLevel::kWarn},
    {"error", LogLevel::kError},
    {"critical", LogLevel::kCritical},
    {"off", LogLevel::kOff},
}};

}  // namespace hostmesh::config
