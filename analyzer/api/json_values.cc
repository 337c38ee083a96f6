#include "analyzer/api/json_values.h"

#include <cmath>
#include <cstdint>

namespace hostmesh::analyzer::api {

Json JsonNumber(double value) {
  if (!std::isfinite(value)) return nullptr;
  if (std::trunc(value) == value && std::fabs(value) < 1e15) {
    return static_cast<std::int64_t>(value);
  }
  return value;
}

std::string DumpJson(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace hostmesh::analyzer::api
