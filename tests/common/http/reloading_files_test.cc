// Rotated files: reloaded when they change, the old version kept when the new
// one does not load, checked at most every period. Real files in a temporary
// directory; time is virtual, nothing sleeps.
#include "common/http/reloading_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

namespace hostmesh::http {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "hm-reload-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::filesystem::path operator/(const char* name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Writes `text` in place, then moves the modification time by `age` from the
// file's last one: coarse file timestamps cannot make two writes look alike.
void Write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::file_time_type before{};
  const bool existed = std::filesystem::exists(path);
  if (existed) before = std::filesystem::last_write_time(path);
  std::ofstream(path, std::ios::trunc) << text;
  if (existed) std::filesystem::last_write_time(path, before + 1s);
}

// A "version" is the file's text when it is a number, else it does not load.
ReloadingFiles<int> Watch(const std::filesystem::path& path) {
  return ReloadingFiles<int>(
      {path},
      [](const std::vector<std::string>& files, std::string* why) -> std::shared_ptr<const int> {
        try {
          return std::make_shared<const int>(std::stoi(files[0]));
        } catch (const std::exception&) {
          *why = "not a number";
          return nullptr;
        }
      },
      5s);
}

constexpr MonoTime kT0{std::chrono::seconds{100}};

TEST(HttpReloadingFiles, LoadsAtStartAndNamesTheFileWhenItCannot) {
  TempDir dir;
  ReloadingFiles<int> missing = Watch(dir / "absent");
  std::string error;
  EXPECT_FALSE(missing.Load(kT0, &error));
  EXPECT_THAT(error, HasSubstr("absent: No such file"));

  Write(dir / "bad", "x");
  ReloadingFiles<int> bad = Watch(dir / "bad");
  EXPECT_FALSE(bad.Load(kT0, &error));
  EXPECT_THAT(error, HasSubstr("bad: not a number"));

  Write(dir / "v", "1");
  ReloadingFiles<int> good = Watch(dir / "v");
  ASSERT_TRUE(good.Load(kT0, &error)) << error;
  EXPECT_EQ(*good.current(), 1);
}

TEST(HttpReloadingFiles, AChangeIsPickedUpAtTheNextCheck) {
  TempDir dir;
  Write(dir / "v", "1");
  ReloadingFiles<int> files = Watch(dir / "v");
  std::string error;
  ASSERT_TRUE(files.Load(kT0, &error));
  EXPECT_EQ(files.Poll(kT0 + 5s, &error), ReloadOutcome::kUnchanged);
  Write(dir / "v", "2");
  EXPECT_EQ(files.Poll(kT0 + 6s, &error), ReloadOutcome::kUnchanged) << "not due yet";
  EXPECT_EQ(*files.current(), 1);
  EXPECT_EQ(files.Poll(kT0 + 10s, &error), ReloadOutcome::kReloaded);
  EXPECT_EQ(*files.current(), 2);
}

TEST(HttpReloadingFiles, ABadVersionKeepsTheOldOneAndIsNotRetriedUntilItChanges) {
  TempDir dir;
  Write(dir / "v", "1");
  ReloadingFiles<int> files = Watch(dir / "v");
  std::string error;
  ASSERT_TRUE(files.Load(kT0, &error));
  const std::shared_ptr<const int> held = files.current();
  Write(dir / "v", "oops");
  EXPECT_EQ(files.Poll(kT0 + 5s, &error), ReloadOutcome::kFailed);
  EXPECT_THAT(error, HasSubstr("not a number"));
  EXPECT_EQ(*files.current(), 1);
  EXPECT_EQ(files.Poll(kT0 + 10s, &error), ReloadOutcome::kUnchanged)
      << "failed once, counted once";
  Write(dir / "v", "3");
  EXPECT_EQ(files.Poll(kT0 + 15s, &error), ReloadOutcome::kReloaded);
  EXPECT_EQ(*files.current(), 3);
  EXPECT_EQ(*held, 1) << "a holder keeps the version it took";
}

TEST(HttpReloadingFiles, AFileReplacedByRenameIsANewVersion) {
  TempDir dir;
  Write(dir / "v", "1");
  ReloadingFiles<int> files = Watch(dir / "v");
  std::string error;
  ASSERT_TRUE(files.Load(kT0, &error));
  Write(dir / "v.new", "4");
  std::filesystem::rename(dir / "v.new", dir / "v");  // how Kubernetes and most tools rotate
  EXPECT_EQ(files.Poll(kT0 + 5s, &error), ReloadOutcome::kReloaded);
  EXPECT_EQ(*files.current(), 4);
  std::filesystem::remove(dir / "v");
  EXPECT_EQ(files.Poll(kT0 + 10s, &error), ReloadOutcome::kFailed);
  EXPECT_THAT(error, HasSubstr("No such file"));
  EXPECT_EQ(*files.current(), 4);
}

}  // namespace
}  // namespace hostmesh::http
