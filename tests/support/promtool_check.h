#pragma once

// Runs `promtool check metrics` on an exposition, for tests of /metrics.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace hostmesh::testing {

struct PromtoolResult {
  bool ok = false;     // ran and exited 0
  std::string output;  // what it printed (empty when all is well)
};

inline PromtoolResult PromtoolCheck(const std::string& promtool, const std::string& text) {
  PromtoolResult result;
  std::string path = ::testing::TempDir() + "hm_promtool_XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    result.output = "cannot create a temp file";
    return result;
  }
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (written) {
    const std::string command = "'" + promtool + "' check metrics < '" + path + "' 2>&1";
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
      char buf[4096];
      std::size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) result.output.append(buf, n);
      const int status = ::pclose(pipe);
      result.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
  }
  ::unlink(path.c_str());
  return result;
}

}  // namespace hostmesh::testing
