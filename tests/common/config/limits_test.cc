// The bounds on what a broken or hostile config file can cost: the first 100
// issues by position listed and the rest counted, long values and messages
// cut, a map of many keys checked through a hash index, and a file over its
// size cap refused before it is parsed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/config/config_error.h"
#include "common/config/map_reader.h"
#include "common/config/yaml_loader.h"

namespace hostmesh::config {
namespace {

using ::testing::HasSubstr;

ConfigError Caught(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError";
  return ConfigError(std::vector<ConfigIssue>{});
}

TEST(config_limits, TheSinkKeepsTheFirstIssuesByPositionAndCountsTheRest) {
  IssueSink sink("a.yaml");
  // Added from the last line to the first: the kept ones are still lines 1..100.
  for (int line = 1000; line >= 1; --line) sink.Add(line, 1, "k", "bad");
  EXPECT_EQ(sink.total(), 1000U);
  const ConfigError e = Caught([&] { sink.ThrowIfAny(); });
  EXPECT_EQ(e.total(), 1000U);
  ASSERT_EQ(e.issues().size(), kMaxListedIssues);
  for (std::size_t i = 0; i < e.issues().size(); ++i) {
    EXPECT_EQ(e.issues()[i].line, static_cast<int>(i) + 1);
  }
  EXPECT_THAT(e.what(), HasSubstr("a.yaml:100:1: k: bad\na.yaml: ... and 900 more problems"));
}

TEST(config_limits, EveryIssueIsListedUpToTheCap) {
  IssueSink sink("a.yaml");
  for (int line = 1; line <= static_cast<int>(kMaxListedIssues); ++line) sink.Add(line, 0, "", "x");
  const ConfigError e = Caught([&] { sink.ThrowIfAny(); });
  EXPECT_EQ(e.issues().size(), kMaxListedIssues);
  EXPECT_EQ(e.OmittedLine(), "");
  EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("more problem")));
}

TEST(config_limits, IssuesOnOneLineKeepTheirOrder) {
  IssueSink sink("a.yaml");
  sink.Add(3, 1, "b", "second");
  sink.Add(3, 1, "a", "first?");
  sink.Add(1, 1, "c", "top");
  const ConfigError e = Caught([&] { sink.ThrowIfAny(); });
  ASSERT_EQ(e.issues().size(), 3U);
  EXPECT_EQ(e.issues()[0].path, "c");
  EXPECT_EQ(e.issues()[1].path, "b");
  EXPECT_EQ(e.issues()[2].path, "a");
}

TEST(config_limits, LongPathsMessagesAndQuotedValuesAreCut) {
  IssueSink sink("a.yaml");
  sink.Add(1, 1, std::string(5000, 'p'), std::string(5000, 'm'));
  const ConfigError e = Caught([&] { sink.ThrowIfAny(); });
  EXPECT_EQ(e.issues()[0].path.size(), kMaxIssuePathBytes);
  EXPECT_EQ(e.issues()[0].message.size(), kMaxIssueMessageBytes);
  EXPECT_TRUE(e.issues()[0].message.ends_with("..."));

  EXPECT_EQ(Quote(std::string(kMaxQuotedBytes, 'v')),
            "\"" + std::string(kMaxQuotedBytes, 'v') + "\"");
  EXPECT_EQ(Quote(std::string(5000, 'v')),
            "\"" + std::string(kMaxQuotedBytes, 'v') + "...\" (5000 bytes)");
  // Never half a UTF-8 character: "é" is two bytes, the cut falls between them.
  const std::string text = std::string(kMaxQuotedBytes - 1, 'v') + "\xc3\xa9" + "tail";
  EXPECT_EQ(Quote(text), "\"" + std::string(kMaxQuotedBytes - 1, 'v') + "...\" (" +
                             std::to_string(text.size()) + " bytes)");
}

// 20,000 keys in one map, half repeats of a known one and half unknown: each
// is reported (duplicate or unknown, with its line), found through the
// reader's hash index.
TEST(config_limits, AMapOfManyBadKeysIsCountedAndItsFirstIssuesListed) {
  std::string text = "host: h\n";
  for (int i = 0; i < 10'000; ++i) text += "host: h\n";
  for (int i = 0; i < 10'000; ++i) text += "k" + std::to_string(i) + ": 1\n";
  const ConfigError e = Caught([&] {
    ReadYaml(text, "a.yaml", [](MapReader& r) {
      std::string host;
      r.Required("host", &host);
    });
  });
  EXPECT_EQ(e.total(), 20'000U);
  ASSERT_EQ(e.issues().size(), kMaxListedIssues);
  EXPECT_EQ(e.issues()[0].line, 2);
  EXPECT_EQ(e.issues()[0].message, "duplicate key (first at line 1)");
  EXPECT_LT(std::string_view(e.what()).size(), 16'000U);
}

TEST(config_limits, AnUnknownKeyFarFromEveryKnownOneGetsNoSuggestion) {
  const ConfigError e = Caught([] {
    // YAML's implicit keys stop at 1024 characters; an explicit key ("? ") has no limit.
    ReadYaml("host: h\n? " + std::string(100'000, 'x') + "\n: 1\n", "a.yaml", [](MapReader& r) {
      std::string host;
      r.Required("host", &host);
    });
  });
  ASSERT_EQ(e.issues().size(), 1U);
  EXPECT_EQ(e.issues()[0].message, "unknown key");
  EXPECT_LE(e.issues()[0].path.size(), kMaxIssuePathBytes);
}

class FileCap : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_ = ::testing::TempDir() + "hm_config_cap.yaml";
};

TEST_F(FileCap, AConfigOverItsCapIsRefusedBeforeParsing) {
  { std::ofstream(path_) << "host: h\n"; }
  // Sparse: its size is all that is read of it.
  std::filesystem::resize_file(path_, kMaxConfigFileBytes.bytes + 1);
  const ConfigError e =
      Caught([&] { ReadYamlFile(path_, [](MapReader&) { FAIL() << "parsed"; }); });
  ASSERT_EQ(e.issues().size(), 1U);
  EXPECT_EQ(e.issues()[0].source, path_);
  EXPECT_EQ(e.issues()[0].line, 0);
  EXPECT_EQ(e.issues()[0].message,
            "the file is 4194305 bytes, over the cap of 4MiB (4194304 bytes); refused before "
            "parsing");
}

TEST_F(FileCap, AFileAtItsCapIsRead) {
  { std::ofstream(path_) << "host: h\n"; }
  EXPECT_EQ(ReadConfigFile(path_, ByteSize{8}), "host: h\n");
  const ConfigError e = Caught([&] { ReadConfigFile(path_, ByteSize{7}); });
  EXPECT_THAT(e.what(), HasSubstr("the file is 8 bytes, over the cap of 7B (7 bytes)"));
}

TEST_F(FileCap, FilesOfManyPagesAndProcfsFilesAreReadWhole) {
  // Three pages and a bit: read into the result in place, nothing lost or doubled.
  std::string text;
  for (int i = 0; text.size() < 3 * 4096 + 5; ++i) text += "key" + std::to_string(i) + ": v\n";
  { std::ofstream(path_) << text; }
  EXPECT_EQ(ReadConfigFile(path_, kMaxConfigFileBytes), text);
  // A procfs file says it is empty and is not.
  const std::string self = ReadConfigFile("/proc/self/status", kMaxConfigFileBytes);
  EXPECT_THAT(self, HasSubstr("Name:"));
  EXPECT_EQ(self.back(), '\n');
}

TEST_F(FileCap, AStreamPastItsCapIsCutOffWhileReading) {
  // /dev/zero has no size ahead: the read itself stops at the cap.
  const ConfigError e = Caught([] { ReadConfigFile("/dev/zero", ByteSize{1000}); });
  EXPECT_THAT(e.what(),
              HasSubstr("/dev/zero: the file is more than 1000 bytes, over the cap of 1000B"));
}

TEST_F(FileCap, UnreadableFilesNameTheReason) {
  EXPECT_THAT(Caught([] { ReadConfigFile("/nonexistent/a.yaml", kMaxConfigFileBytes); }).what(),
              HasSubstr("/nonexistent/a.yaml: cannot read the file: No such file or directory"));
  EXPECT_THAT(Caught([] { ReadConfigFile("/", kMaxConfigFileBytes); }).what(),
              HasSubstr("/: cannot read the file: is a directory"));
}

}  // namespace
}  // namespace hostmesh::config
