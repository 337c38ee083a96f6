#include "common/config/config_error.h"

#include <algorithm>
#include <tuple>

namespace hostmesh::config {
namespace {

bool Before(const ConfigIssue& a, const ConfigIssue& b) {
  return std::tie(a.line, a.column) < std::tie(b.line, b.column);
}

std::string Omitted(const std::vector<ConfigIssue>& listed, std::size_t total) {
  if (total <= listed.size() || listed.empty()) return "";
  const std::size_t more = total - listed.size();
  return listed.front().source + ": ... and " + std::to_string(more) + " more " +
         (more == 1 ? "problem" : "problems") + " (the first " + std::to_string(listed.size()) +
         " by position are listed)";
}

// `text` cut to at most `max` bytes, at a UTF-8 character boundary, "..." added.
std::string Cut(std::string text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text + "...";
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

ConfigError::Listed ConfigError::List(std::vector<ConfigIssue> issues, std::size_t total) {
  total = std::max(total, issues.size());
  std::stable_sort(issues.begin(), issues.end(), Before);
  if (issues.size() > kMaxListedIssues) issues.resize(kMaxListedIssues);
  return {std::move(issues), total};
}

ConfigError::ConfigError(std::vector<ConfigIssue> issues, std::size_t total)
    : ConfigError(List(std::move(issues), total)) {}

ConfigError::ConfigError(Listed listed)
    : std::runtime_error([&] {
        std::string text;
        for (const ConfigIssue& issue : listed.issues) {
          if (!text.empty()) text += '\n';
          text += issue.ToString();
        }
        if (const std::string more = Omitted(listed.issues, listed.total); !more.empty()) {
          text += '\n' + more;
        }
        return text;
      }()),
      issues_(std::move(listed.issues)),
      total_(listed.total) {}

std::string ConfigError::OmittedLine() const {
  return Omitted(issues_, total_);
}

bool IssueSink::Earlier(const Kept& a, const Kept& b) {
  return std::tie(a.issue.line, a.issue.column, a.order) <
         std::tie(b.issue.line, b.issue.column, b.order);
}

void IssueSink::Add(int line, int column, std::string path, std::string message) {
  Kept kept{{source_, line, column, Cut(std::move(path), kMaxIssuePathBytes),
             Cut(std::move(message), kMaxIssueMessageBytes)},
            total_++};
  if (kept_.size() < kMaxListedIssues) {
    kept_.push_back(std::move(kept));
    std::push_heap(kept_.begin(), kept_.end(), Earlier);
  } else if (Earlier(kept, kept_.front())) {
    // The latest of the kept goes; the new one takes its place.
    std::pop_heap(kept_.begin(), kept_.end(), Earlier);
    kept_.back() = std::move(kept);
    std::push_heap(kept_.begin(), kept_.end(), Earlier);
  }
}

void IssueSink::ThrowIfAny() const {
  if (total_ == 0) return;
  std::vector<Kept> sorted = kept_;
  std::sort_heap(sorted.begin(), sorted.end(), Earlier);
  std::vector<ConfigIssue> issues;
  issues.reserve(sorted.size());
  for (Kept& k : sorted) issues.push_back(std::move(k.issue));
  throw ConfigError(std::move(issues), total_);
}

}  // namespace hostmesh::config
