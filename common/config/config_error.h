#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace hostmesh::config {

// A file with thousands of mistakes (or a hostile one) reports the first
// kMaxListedIssues by position and counts the rest ("... and 4900 more"), so
// the message stays small whatever the file holds.
inline constexpr std::size_t kMaxListedIssues = 100;
// Longer key paths and messages are cut (at a character boundary) with "...".
inline constexpr std::size_t kMaxIssuePathBytes = 256;
inline constexpr std::size_t kMaxIssueMessageBytes = 1024;

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

// The issues of one file. Thrown only while loading config (startup), never on
// a data path.
class ConfigError : public std::runtime_error {
 public:
  // Keeps the first kMaxListedIssues by position in the file; `total` counts
  // every issue found (at least issues.size()).
  explicit ConfigError(std::vector<ConfigIssue> issues, std::size_t total = 0);

  // The listed issues, ordered by position.
  const std::vector<ConfigIssue>& issues() const { return issues_; }
  // Every issue found, listed or not.
  std::size_t total() const { return total_; }
  // "... and N more problems in FILE", or "" when every issue is listed.
  std::string OmittedLine() const;

 private:
  struct Listed {
    std::vector<ConfigIssue> issues;  // sorted, at most kMaxListedIssues
    std::size_t total;
  };
  static Listed List(std::vector<ConfigIssue> issues, std::size_t total);
  explicit ConfigError(Listed listed);

  std::vector<ConfigIssue> issues_;
  std::size_t total_;
};

// Collects the issues of one source while it is read, so the operator sees them
// all at once. Keeps the first kMaxListedIssues by position (a bounded heap:
// memory and time stay linear in the number of issues) and counts the rest.
class IssueSink {
 public:
  explicit IssueSink(std::string source) : source_(std::move(source)) {}

  void Add(int line, int column, std::string path, std::string message);
  bool empty() const { return total_ == 0; }
  // Every issue added, kept or not.
  std::size_t total() const { return total_; }
  // Throws ConfigError carrying the kept issues and the count, if there is any.
  void ThrowIfAny() const;

 private:
  struct Kept {
    ConfigIssue issue;
    std::size_t order;  // ties on the same position keep the order of Add
  };
  static bool Earlier(const Kept& a, const Kept& b);

  std::string source_;
  std::vector<Kept> kept_;  // a max-heap by position: the last of the kept on top
  std::size_t total_ = 0;
};

}  // namespace hostmesh::config
