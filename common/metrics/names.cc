#include "common/metrics/names.h"

#include <set>
#include <stdexcept>
#include <string>

#include "common/metrics/buckets.h"

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

void Fail(const FamilySnapshot& family, const std::string& why) {
  throw std::invalid_argument("metric '" + family.name + "': " + why);
}

}  // namespace

bool IsValidMetricName(std::string_view name) {
  return IsValidName(name, /*allow_colon=*/true);
}

bool IsValidLabelName(std::string_view name) {
  return IsValidName(name, /*allow_colon=*/false);
}

void ValidateFamilyDeclaration(const FamilySnapshot& family) {
  const std::string_view name = family.name;
  if (!IsValidMetricName(name)) Fail(family, "name must match [a-zA-Z_:][a-zA-Z0-9_:]*");
  if (family.help.empty()) Fail(family, "help text is empty");

  const bool is_counter = family.type == MetricType::kCounter;
  const bool is_histogram = family.type == MetricType::kHistogram;
  if (is_counter != name.ends_with("_total")) {
    Fail(family, is_counter ? "counter names end in _total" : "only counter names end in _total");
  }
  if (!is_histogram) {
    for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
      if (name.ends_with(suffix)) {
        Fail(family, "suffix " + std::string(suffix) + " is reserved for histograms");
      }
    }
  }

  std::set<std::string_view> seen;
  for (const std::string& label : family.label_names) {
    if (!IsValidLabelName(label)) {
      Fail(family, "label '" + label + "' must match [a-zA-Z_][a-zA-Z0-9_]*");
    }
    if (label.starts_with("__")) Fail(family, "label '" + label + "' is reserved (__ prefix)");
    if (is_histogram && label == "le") Fail(family, "label 'le' is reserved for histogram buckets");
    if (!seen.insert(label).second) Fail(family, "label '" + label + "' is repeated");
  }

  if (is_histogram) {
    try {
      ValidateBucketBounds(family.bucket_bounds);
    } catch (const std::invalid_argument& e) {
      Fail(family, e.what());
    }
  } else if (!family.bucket_bounds.empty()) {
    Fail(family, "only histograms have bucket bounds");
  }
}

}  // namespace hostmesh::metrics
