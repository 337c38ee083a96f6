// The project's metric naming rules, checked once when a family is declared.
// prometheus-cpp checks the syntax of names itself; these are the conventions
// promtool lints for, plus what its text serializer cannot write.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hostmesh::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsValidMetricName(std::string_view name);

// [a-zA-Z_][a-zA-Z0-9_]*
bool IsValidLabelName(std::string_view name);

// Throws std::invalid_argument naming the first rule a declaration breaks:
// name syntax; help non-empty and free of backslashes and newlines
// (prometheus-cpp 1.0.1 writes HELP text unescaped); `_total` on counters and
// only on counters; `_bucket`/`_sum`/`_count` kept for histograms; label names
// valid, unique, not reserved (`__` prefix, `le` on histograms).
void ValidateFamilyDeclaration(std::string_view name, std::string_view help, MetricType type,
                               const std::vector<std::string>& label_names = {});

}  // namespace hostmesh::metrics
