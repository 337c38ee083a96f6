#pragma once

// Shell access for tests that build an emulated fabric: runs `fabric` and
// friends with the test's own namespace prefix, so parallel tests and people
// never touch each other's fabrics. A test target that includes this defines
// HOSTMESH_PYTHON3 and HOSTMESH_FABRIC (compile definitions) to use Fabric().

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace hostmesh::testing {

// The namespace prefix of one test process: $HOSTMESH_FABRIC_PREFIX (whoever
// runs the tests, default "hm"), a tag naming the test, and the pid. Runs of
// different people (or CI jobs) never meet, nor do two tests of one run.
inline std::string TestPrefix(const std::string& tag) {
  const char* base = std::getenv("HOSTMESH_FABRIC_PREFIX");
  return std::string(base != nullptr && *base != '\0' ? base : "hm") + tag +
         std::to_string(::getpid()) + "-";
}

// Runs `command` under /bin/sh with HOSTMESH_FABRIC_PREFIX=prefix; its stdout,
// or nullopt when it could not run or exited non-zero.
inline std::optional<std::string> ShellWithPrefix(const std::string& prefix,
                                                  const std::string& command) {
  const std::string full = "HOSTMESH_FABRIC_PREFIX=" + prefix + " " + command;
  FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  if (::pclose(pipe) != 0) return std::nullopt;
  return out;
}

#if defined(HOSTMESH_PYTHON3) && defined(HOSTMESH_FABRIC)
// The command line of `deploy/testbed/fabric ARGS`.
inline std::string FabricCommand(const std::string& args) {
  return std::string(HOSTMESH_PYTHON3) + " " + HOSTMESH_FABRIC + " " + args;
}
#endif

}  // namespace hostmesh::testing
