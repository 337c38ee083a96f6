// Files an operator rotates without a restart (a certificate and its key, a
// CA bundle, a token): read at start, then looked at again at most every
// `check_every` and reloaded when one of them changed. A new version that
// does not load leaves the old one in service. Time is passed in; the server's
// housekeeping thread polls, request threads only read current().
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/base/clock.h"

namespace hostmesh::http {

// What stat(2) says of a file, through symlinks (a Kubernetes Secret volume
// swaps a symlink to a new directory: the inode changes). Equal stamps mean
// unchanged.
struct FileStamp {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t size = -1;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

// The stamp of `path`, or nullopt with the reason.
std::optional<FileStamp> StampOf(const std::filesystem::path& path, std::string* error);
// The whole file, or nullopt with the reason; files over `max_bytes` are errors.
std::optional<std::string> ReadSmallFile(const std::filesystem::path& path, std::size_t max_bytes,
                                         std::string* error);

enum class ReloadOutcome { kUnchanged, kReloaded, kFailed };

template <typename T>
class ReloadingFiles {
 public:
  // Builds a T from the files' contents (same order as the paths); nullptr
  // with *error when they do not make one.
  using Loader =
      std::function<std::shared_ptr<const T>(const std::vector<std::string>&, std::string*)>;

  ReloadingFiles(std::vector<std::filesystem::path> paths, Loader loader,
                 std::chrono::nanoseconds check_every, std::size_t max_bytes = 1 << 20)
      : paths_(std::move(paths)),
        loader_(std::move(loader)),
        check_every_(check_every),
        max_bytes_(max_bytes) {}

  // The first load; false with the reason (naming the file) when it fails.
  bool Load(MonoTime now, std::string* error) {
    next_check_ = now + check_every_;
    return Attempt(error);
  }

  // Reloads when a check is due and a file changed since the last attempt
  // (a version that failed is not retried until it changes again).
  ReloadOutcome Poll(MonoTime now, std::string* error) {
    if (now < next_check_) return ReloadOutcome::kUnchanged;
    next_check_ = now + check_every_;
    std::vector<std::optional<FileStamp>> stamps;
    for (const auto& path : paths_) {
      std::string ignored;
      stamps.push_back(StampOf(path, &ignored));
    }
    if (stamps == attempted_) return ReloadOutcome::kUnchanged;
    return Attempt(error) ? ReloadOutcome::kReloaded : ReloadOutcome::kFailed;
  }

  // The version in service (never null after a successful Load).
  std::shared_ptr<const T> current() const {
    std::lock_guard lock(mu_);
    return current_;
  }

  const std::vector<std::filesystem::path>& paths() const { return paths_; }

 private:
  bool Attempt(std::string* error) {
    std::vector<std::optional<FileStamp>> stamps;
    std::vector<std::string> contents;
    bool read_ok = true;
    for (const auto& path : paths_) {
      std::string why;
      // Stamped before reading: a change while reading shows at the next check.
      stamps.push_back(StampOf(path, &why));
      std::optional<std::string> text = ReadSmallFile(path, max_bytes_, &why);
      if (!stamps.back() || !text) {
        if (read_ok) *error = path.string() + ": " + why;
        read_ok = false;
        continue;
      }
      contents.push_back(std::move(*text));
    }
    attempted_ = std::move(stamps);
    if (!read_ok) return false;
    std::string why;
    std::shared_ptr<const T> loaded = loader_(contents, &why);
    if (!loaded) {
      *error = Names() + ": " + why;
      return false;
    }
    std::lock_guard lock(mu_);
    current_ = std::move(loaded);
    return true;
  }

  std::string Names() const {
    std::string names;
    for (const auto& path : paths_) names += (names.empty() ? "" : " and ") + path.string();
    return names;
  }

  const std::vector<std::filesystem::path> paths_;
  const Loader loader_;
  const std::chrono::nanoseconds check_every_;
  const std::size_t max_bytes_;
  MonoTime next_check_{};
  std::vector<std::optional<FileStamp>> attempted_;
  mutable std::mutex mu_;
  std::shared_ptr<const T> current_;
};

}  // namespace hostmesh::http
