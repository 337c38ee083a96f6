#include "common/metrics/exposition.h"

#include <prometheus/text_serializer.h>

namespace hostmesh::metrics {

std::string RenderText(const std::vector<prometheus::MetricFamily>& families) {
  return prometheus::TextSerializer().Serialize(families);
}

std::string RenderText(const Registry& registry) {
  return RenderText(registry.Collect());
}

}  // namespace hostmesh::metrics
