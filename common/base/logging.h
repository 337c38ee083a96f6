#pragma once

#include <spdlog/logger.h>

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hostmesh {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kCritical, kOff };

// "2024-01-01T00:00:00.123456+00:00 warning [tracker] message": time, level, component.
inline constexpr std::string_view kLogPattern = "%Y-%m-%dT%H:%M:%S.%f%z %^%l%$ [%n] %v";

// The accepted level names, most verbose first: trace, debug, info, warn, error, critical, off.
std::span<const std::string_view> LogLevelNames();
std::string_view LogLevelName(LogLevel level);

// Parses one of LogLevelNames() (exact spelling). On failure returns nullopt and,
// when `error` is given, stores a message naming the bad value and the allowed ones.
std::optional<LogLevel> ParseLogLevel(std::string_view text, std::string* error = nullptr);

// Sets the level and pattern of every logger, existing and future. Call once from
// main, before starting threads that log.
void InitLogging(LogLevel level, std::string_view pattern = kLogPattern);
// Same from a level string such as a --log-level flag; throws std::invalid_argument
// naming a bad value (startup only, like config parsing).
void InitLogging(std::string_view level, std::string_view pattern = kLogPattern);

// The logger of one component ("scheduler", "uploader", ...), created on first use
// and kept in spdlog's registry; writes to stderr (the journal under systemd).
std::shared_ptr<spdlog::logger> GetLogger(const std::string& component);

// Every line at warn or above of every GetLogger logger is handed to the tap
// as well as written (the agent's flight recorder keeps them). One tap per
// process, called under a lock of its own, so it must not log; an empty
// function removes it (before what it points to goes).
using LogTap =
    std::function<void(std::string_view component, LogLevel level, std::string_view line)>;
void SetLogTap(LogTap tap);

}  // namespace hostmesh
