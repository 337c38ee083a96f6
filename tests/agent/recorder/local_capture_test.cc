// The local capture file: JSON lines, written whole under its time's name,
// at most `keep` files.
#include "agent/recorder/local_capture.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hostmesh::agent::recorder {
namespace {

namespace fs = std::filesystem;

class LocalCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hm-capture-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

v1::FlightRecord TwoEvents() {
  v1::FlightRecord record;
  v1::FlightEvent* probe = record.add_events();
  probe->set_time_ns(1'704'067'200'000'000'001);
  probe->set_kind(v1::FlightEvent::KIND_PROBE);
  probe->set_nic(1);
  probe->set_peer_nic(2);
  probe->set_port(50000);
  probe->set_value_ns(-1);
  probe->set_flags(1);
  v1::FlightEvent* log = record.add_events();
  log->set_time_ns(1'704'067'201'000'000'000);
  log->set_kind(v1::FlightEvent::KIND_LOG);
  log->set_text("warn [verbs] nic nic0: port down \xff");  // a cut byte: replaced
  return record;
}

TEST_F(LocalCaptureTest, NamesSortByUtcTime) {
  EXPECT_EQ(CaptureFileName(WallTime{std::chrono::nanoseconds{1'704'067'200'123'456'789}}),
            "flight-20240101T000000.123Z.jsonl");
}

TEST_F(LocalCaptureTest, WritesOneJsonObjectPerEvent) {
  std::string error;
  const WallTime at{std::chrono::seconds{1'704'067'300}};
  const auto path = WriteLocalCapture(TwoEvents(), dir_, at, 10, &error);
  ASSERT_TRUE(path) << error;
  std::ifstream in(*path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["kind"], "probe");
  EXPECT_EQ(lines[0]["time"], "2024-01-01T00:00:00.000000001Z");
  EXPECT_EQ(lines[0]["peer_nic"], 2);
  EXPECT_EQ(lines[0]["value_ns"], -1);
  EXPECT_EQ(lines[1]["kind"], "log");
  EXPECT_FALSE(lines[1].contains("peer_nic"));
  EXPECT_TRUE(lines[1]["text"].get<std::string>().starts_with("warn [verbs]"));
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(".")) << "temporary left behind";
  }
}

TEST_F(LocalCaptureTest, KeepsAtMostTheNewestFiles) {
  std::string error;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        WriteLocalCapture(TwoEvents(), dir_, WallTime{std::chrono::seconds{1000 + i}}, 3, &error))
        << error;
  }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names.front(), CaptureFileName(WallTime{std::chrono::seconds{1002}}));
}

TEST_F(LocalCaptureTest, AnUnwritableDirectoryIsAnErrorNotACrash) {
  std::string error;
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  EXPECT_FALSE(WriteLocalCapture(TwoEvents(), dir_ / "file" / "sub", WallTime{}, 3, &error));
  EXPECT_NE(error.find("cannot create"), std::string::npos);
}

}  // namespace
}  // namespace hostmesh::agent::recorder
