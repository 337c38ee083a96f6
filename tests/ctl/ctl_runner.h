#pragma once

// Runs a shell command line (the built hostmeshctl, `fabric`) and collects its
// exit code, stdout and stderr.

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace hostmesh::ctl::testing {

struct RunResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;
  std::string err;
};

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// A directory of its own under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "hmctl.XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// `command` through /bin/sh; stderr goes to a file in `dir`.
inline RunResult RunShell(const std::string& command, const TempDir& dir) {
  const auto err_file = dir / "stderr.txt";
  RunResult r;
  FILE* pipe = ::popen((command + " 2>'" + err_file.string() + "'").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    r.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.err = ReadFile(err_file);
  return r;
}

// Single-quoted for /bin/sh.
inline std::string Quote(const std::string& word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string Ctl(const std::string& args) {
  return Quote(HOSTMESH_CTL) + " " + args;
}

}  // namespace hostmesh::ctl::testing
