// Metric and label naming rules: the Prometheus data model plus the project's
// conventions, checked once when a family is declared.
#pragma once

#include <string_view>

#include "common/metrics/snapshot.h"

namespace hostmesh::metrics {

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsValidMetricName(std::string_view name);

// [a-zA-Z_][a-zA-Z0-9_]*
bool IsValidLabelName(std::string_view name);

// Throws std::invalid_argument naming the first rule a declaration breaks:
// name syntax, non-empty help, `_total` on counters and only on counters,
// `_bucket`/`_sum`/`_count` kept for histograms, label names valid, unique,
// not reserved (`__` prefix, `le` on histograms), bucket bounds valid.
void ValidateFamilyDeclaration(const FamilySnapshot& family);

}  // namespace hostmesh::metrics
