// Suite names are lowercase so `ctest -R log` selects them.
#include "common/base/logging.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <stdexcept>

namespace hostmesh {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

TEST(logging, ParsesEveryLevelName) {
  for (std::string_view name : LogLevelNames()) {
    const std::optional<LogLevel> level = ParseLogLevel(name);
    ASSERT_TRUE(level.has_value()) << name;
    EXPECT_EQ(LogLevelName(*level), name);
  }
  EXPECT_EQ(ParseLogLevel("trace"), LogLevel::kTrace);
  EXPECT_EQ(ParseLogLevel("warn"), LogLevel::kWarn);
  EXPECT_EQ(ParseLogLevel("off"), LogLevel::kOff);
}

TEST(logging, RejectsUnknownLevelNamingIt) {
  for (std::string_view bad : {"verbose", "", "INFO", "warning", "info "}) {
    std::string error;
    EXPECT_FALSE(ParseLogLevel(bad, &error).has_value()) << bad;
    EXPECT_EQ(error, "unknown log level \"" + std::string(bad) +
                         "\"; expected one of: trace, debug, info, warn, error, critical, off");
  }
}

TEST(logging, InitFromBadStringThrowsNamingTheValue) {
  try {
    InitLogging(std::string_view("loud"));
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("\"loud\""));
    EXPECT_THAT(e.what(), HasSubstr("trace, debug"));
  }
}

TEST(logging, InitSetsLevelOfExistingAndFutureLoggers) {
  const auto before = GetLogger("test-before");
  InitLogging(std::string_view("warn"));
  const auto after = GetLogger("test-after");
  EXPECT_EQ(before->level(), spdlog::level::warn);
  EXPECT_EQ(after->level(), spdlog::level::warn);

  InitLogging(LogLevel::kDebug);
  EXPECT_EQ(before->level(), spdlog::level::debug);
  EXPECT_EQ(after->level(), spdlog::level::debug);
}

TEST(logging, OneLoggerPerComponent) {
  const auto a = GetLogger("scheduler");
  const auto b = GetLogger("scheduler");
  const auto c = GetLogger("uploader");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a->name(), "scheduler");
  EXPECT_EQ(spdlog::get("uploader"), c);
}

TEST(logging, PatternShowsTimeLevelAndComponent) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("tracker", sink);
  logger.set_pattern(std::string(kLogPattern));
  logger.warn("probe {} timed out", 7);
  EXPECT_THAT(out.str(), MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+[-+][0-9:]+ "
                                      "warning \\[tracker\\] probe 7 timed out\n"));
}

}  // namespace
}  // namespace hostmesh
