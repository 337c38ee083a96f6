#include "common/config/config_error.h"

#include <algorithm>
#include <tuple>

namespace hostmesh::config {
namespace {

std::vector<ConfigIssue> Sorted(std::vector<ConfigIssue> issues) {
  std::stable_sort(issues.begin(), issues.end(), [](const ConfigIssue& a, const ConfigIssue& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return issues;
}

std::string Describe(const std::vector<ConfigIssue>& issues) {
  std::string text;
  for (const ConfigIssue& issue : issues) {
    if (!text.empty()) text += '\n';
    text += issue.ToString();
  }
  return text;
}

}  // namespace

std::string ConfigIssue::ToString() const {
  std::string text = source;
  if (line > 0) {
    text += ':' + std::to_string(line);
    if (column > 0) text += ':' + std::to_string(column);
  }
  text += ": ";
  if (!path.empty()) text += path + ": ";
  return text + message;
}

ConfigError::ConfigError(std::vector<ConfigIssue> issues)
    : ConfigError(SortedTag{}, Sorted(std::move(issues))) {}

ConfigError::ConfigError(SortedTag, std::vector<ConfigIssue> sorted)
    : std::runtime_error(Describe(sorted)), issues_(std::move(sorted)) {}

void IssueSink::Add(int line, int column, std::string path, std::string message) {
  issues_.push_back({source_, line, column, std::move(path), std::move(message)});
}

void IssueSink::ThrowIfAny() const {
  if (!issues_.empty()) throw ConfigError(issues_);
}

}  // namespace hostmesh::config
