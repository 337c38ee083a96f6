#include "common/base/logging.h"

#include <spdlog/common.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <mutex>
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

LogLevel FromSpdlog(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return LogLevel::kTrace;
    case spdlog::level::debug:
      return LogLevel::kDebug;
    case spdlog::level::info:
      return LogLevel::kInfo;
    case spdlog::level::warn:
      return LogLevel::kWarn;
    case spdlog::level::err:
      return LogLevel::kError;
    case spdlog::level::critical:
      return LogLevel::kCritical;
    default:
      return LogLevel::kOff;
  }
}

// One sink in every logger, at warn: spdlog skips it for the lines below.
class TapSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  TapSink() { set_level(spdlog::level::warn); }
  void Set(LogTap tap) {
    std::lock_guard lock(mutex_);
    tap_ = std::move(tap);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (!tap_) return;
    tap_(std::string_view(msg.logger_name.data(), msg.logger_name.size()), FromSpdlog(msg.level),
         std::string_view(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override {}

 private:
  LogTap tap_;
};

const std::shared_ptr<TapSink>& Tap() {
  static const auto tap = std::make_shared<TapSink>();
  return tap;
}

}  // namespace

void SetLogTap(LogTap tap) {
  Tap()->Set(std::move(tap));
}

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
    // Created with both sinks, so no sink is ever added to a logger in use.
    auto stderr_sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    auto logger =
        std::make_shared<spdlog::logger>(component, spdlog::sinks_init_list{stderr_sink, Tap()});
    spdlog::initialize_logger(logger);
    spdlog::register_logger(logger);
    return logger;
  } catch (const spdlog::spdlog_ex&) {
    // Another thread registered the same name between get and create.
    return spdlog::get(component);
  }
}

}  // namespace hostmesh
