#include "common/metrics/names.h"

#include <set>
#include <stdexcept>
#include <string>

namespace hostmesh::metrics {
namespace {

bool IsAsciiLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsAsciiDigit(char c) {
  return c >= '0' && c <= '9';
}

bool IsValidName(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok =
        IsAsciiLetter(c) || c == '_' || (allow_colon && c == ':') || (i > 0 && IsAsciiDigit(c));
    if (!ok) return false;
  }
  return true;
}

[[noreturn]] void Fail(std::string_view name, const std::string& why) {
  throw std::invalid_argument("metric '" + std::string(name) + "': " + why);
}

}  // namespace

bool IsValidMetricName(std::string_view name) {
  return IsValidName(name, /*allow_colon=*/true);
}

bool IsValidLabelName(std::string_view name) {
  return IsValidName(name, /*allow_colon=*/false);
}

void ValidateFamilyDeclaration(std::string_view name, std::string_view help, MetricType type,
                               const std::vector<std::string>& label_names) {
  if (!IsValidMetricName(name)) Fail(name, "name must match [a-zA-Z_:][a-zA-Z0-9_:]*");
  if (help.empty()) Fail(name, "help text is empty");
  if (help.find_first_of("\\\n") != std::string_view::npos) {
    Fail(name, "help text holds a backslash or a newline (written unescaped)");
  }

  const bool is_counter = type == MetricType::kCounter;
  const bool is_histogram = type == MetricType::kHistogram;
  if (is_counter != name.ends_with("_total")) {
    Fail(name, is_counter ? "counter names end in _total" : "only counter names end in _total");
  }
  if (!is_histogram) {
    for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
      if (name.ends_with(suffix)) {
        Fail(name, "suffix " + std::string(suffix) + " is reserved for histograms");
      }
    }
  }

  std::set<std::string_view> seen;
  for (const std::string& label : label_names) {
    if (!IsValidLabelName(label)) {
      Fail(name, "label '" + label + "' must match [a-zA-Z_][a-zA-Z0-9_]*");
    }
    if (label.starts_with("__")) Fail(name, "label '" + label + "' is reserved (__ prefix)");
    if (is_histogram && label == "le") Fail(name, "label 'le' is reserved for histogram buckets");
    if (!seen.insert(label).second) Fail(name, "label '" + label + "' is repeated");
  }
}

}  // namespace hostmesh::metrics
