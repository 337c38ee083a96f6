#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace hostmesh::config {

// One problem found in a config file, located for the operator.
struct ConfigIssue {
  std::string source;  // file name or the source name given with the text
  int line = 0;        // 1-based; 0 when unknown (e.g. the file could not be read)
  int column = 0;      // 1-based; 0 when unknown
  std::string path;    // key path such as "nics[2].rail"; empty for file-level issues
  std::string message;

  // "agent.yaml:12:5: probe.interval: must be between 1ms and 60s, got "0ms"".
  std::string ToString() const;
};

// Every issue of one file. Thrown only while loading config (startup), never on
// a data path.
class ConfigError : public std::runtime_error {
 public:
  // Issues are ordered by position in the file.
  explicit ConfigError(std::vector<ConfigIssue> issues);

  const std::vector<ConfigIssue>& issues() const { return issues_; }

 private:
  struct SortedTag {};
  ConfigError(SortedTag, std::vector<ConfigIssue> sorted);

  std::vector<ConfigIssue> issues_;
};

// Collects the issues of one source while it is read, so the operator sees all
// of them at once.
class IssueSink {
 public:
  explicit IssueSink(std::string source) : source_(std::move(source)) {}

  void Add(int line, int column, std::string path, std::string message);
  bool empty() const { return issues_.empty(); }
  const std::vector<ConfigIssue>& issues() const { return issues_; }
  // Throws ConfigError carrying every issue, if there is any.
  void ThrowIfAny() const;

 private:
  std::string source_;
  std::vector<ConfigIssue> issues_;
};

}  // namespace hostmesh::config
