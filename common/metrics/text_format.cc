#include "common/metrics/text_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace hostmesh::metrics {
namespace {

void AppendValue(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[32];
  std::to_chars_result printed;
  // Below 2^63 an integral double converts to int64 exactly; printing it as an
  // integer avoids the "1e+06" that shortest-form formatting would choose.
  if (std::trunc(v) == v && std::fabs(v) < 0x1p63) {
    printed = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(v));
  } else {
    printed = std::to_chars(buf, buf + sizeof buf, v);
  }
  out.append(buf, printed.ptr);
}

void AppendCount(std::string& out, std::uint64_t n) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, n).ptr);
}

// HELP text escapes backslash and newline only.
void AppendHelp(std::string& out, std::string_view help) {
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

// Label values also escape the double quote that would end them.
void AppendLabelValue(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

void AppendLabel(std::string& out, std::string_view name, std::string_view value, bool first) {
  if (!first) out += ',';
  out += name;
  out += "=\"";
  AppendLabelValue(out, value);
  out += '"';
}

// `{a="x",b="y"}`, plus le="..." for histogram buckets; nothing when empty.
void AppendLabels(std::string& out, const FamilySnapshot& family, const SeriesSnapshot& series,
                  std::optional<std::string_view> le = std::nullopt) {
  const std::size_t n = std::min(family.label_names.size(), series.label_values.size());
  if (n == 0 && !le) return;
  out += '{';
  for (std::size_t i = 0; i < n; ++i) {
    AppendLabel(out, family.label_names[i], series.label_values[i], i == 0);
  }
  if (le) AppendLabel(out, "le", *le, n == 0);
  out += '}';
}

// A sample line up to its value: name, suffix, labels and the space.
void AppendSeriesName(std::string& out, const FamilySnapshot& family, const SeriesSnapshot& series,
                      std::string_view suffix = {},
                      std::optional<std::string_view> le = std::nullopt) {
  out += family.name;
  out += suffix;
  AppendLabels(out, family, series, le);
  out += ' ';
}

// le_values: the family's bounds already formatted, shared by its series.
void AppendHistogram(std::string& out, const FamilySnapshot& family, const SeriesSnapshot& series,
                     const std::vector<std::string>& le_values) {
  const std::size_t buckets = std::min(le_values.size(), series.cumulative_counts.size());
  for (std::size_t i = 0; i < buckets; ++i) {
    AppendSeriesName(out, family, series, "_bucket", le_values[i]);
    AppendCount(out, series.cumulative_counts[i]);
    out += '\n';
  }
  const std::uint64_t count =
      series.cumulative_counts.empty() ? 0 : series.cumulative_counts.back();
  AppendSeriesName(out, family, series, "_bucket", "+Inf");
  AppendCount(out, count);
  out += '\n';
  AppendSeriesName(out, family, series, "_sum");
  AppendValue(out, series.sum);
  out += '\n';
  AppendSeriesName(out, family, series, "_count");
  AppendCount(out, count);
  out += '\n';
}

std::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string FormatValue(double v) {
  std::string out;
  AppendValue(out, v);
  return out;
}

std::string RenderText(std::span<const FamilySnapshot> families) {
  std::string out;
  for (const FamilySnapshot& family : families) {
    if (family.series.empty()) continue;
    out += "# HELP ";
    out += family.name;
    out += ' ';
    AppendHelp(out, family.help);
    out += "\n# TYPE ";
    out += family.name;
    out += ' ';
    out += TypeName(family.type);
    out += '\n';
    if (family.type == MetricType::kHistogram) {
      std::vector<std::string> le_values;
      le_values.reserve(family.bucket_bounds.size());
      for (double bound : family.bucket_bounds) le_values.push_back(FormatValue(bound));
      for (const SeriesSnapshot& series : family.series) {
        AppendHistogram(out, family, series, le_values);
      }
      continue;
    }
    for (const SeriesSnapshot& series : family.series) {
      AppendSeriesName(out, family, series);
      AppendValue(out, series.value);
      out += '\n';
    }
  }
  return out;
}

}  // namespace hostmesh::metrics
