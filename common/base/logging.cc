#include "common/base/logging.h"

#include <spdlog/common.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <stdexcept>

namespace hostmesh {
namespace {

// Indexed by LogLevel.
constexpr std::array<std::string_view, 7> kNames = {"trace", "debug",    "info", "warn",
                                                    "error", "critical", "off"};

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return spdlog::level::trace;
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kCritical:
      return spdlog::level::critical;
    case LogLevel::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

}  // namespace

std::span<const std::string_view> LogLevelNames() {
  return kNames;
}

std::string_view LogLevelName(LogLevel level) {
  return kNames.at(static_cast<size_t>(level));
}

std::optional<LogLevel> ParseLogLevel(std::string_view text, std::string* error) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == text) return static_cast<LogLevel>(i);
  }
  if (error != nullptr) {
    *error = "unknown log level \"" + std::string(text) + "\"; expected one of:";
    for (size_t i = 0; i < kNames.size(); ++i) {
      *error += (i == 0 ? " " : ", ");
      *error += kNames[i];
    }
  }
  return std::nullopt;
}

void InitLogging(LogLevel level, std::string_view pattern) {
  // The registry hands its level and formatter to loggers created later, too.
  spdlog::set_level(ToSpdlog(level));
  spdlog::set_pattern(std::string(pattern));
}

void InitLogging(std::string_view level, std::string_view pattern) {
  std::string error;
  const std::optional<LogLevel> parsed = ParseLogLevel(level, &error);
  if (!parsed) throw std::invalid_argument(error);
  InitLogging(*parsed, pattern);
}

std::shared_ptr<spdlog::logger> GetLogger(const std::string& component) {
  if (auto existing = spdlog::get(component)) return existing;
  try {
    return spdlog::stderr_color_mt(component);
  } catch (const spdlog::spdlog_ex&) {
    // Another thread registered the same name between get and create.
    return spdlog::get(component);
  }
}

}  // namespace hostmesh
