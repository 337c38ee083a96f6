#include "ctl/api_fetch.h"

#include <chrono>

#include "ctl/oncall_view.h"

namespace hostmesh::ctl {

ApiFetch FetchApi(const std::string& analyzer, int timeout_ms, const std::string& path,
                  const std::string& me, std::ostream& err) {
  ApiFetch out;
  std::string error;
  const auto endpoint = ParseHttpEndpoint(analyzer, &error);
  if (!endpoint) {
    err << me << error << "\n";
    out.exit_code = kOncallBadResponse;
    return out;
  }
  if (timeout_ms <= 0) {
    err << me << "--timeout-ms must be positive\n";
    out.exit_code = kOncallBadResponse;
    return out;
  }
  HttpOptions http;
  http.timeout = std::chrono::milliseconds(timeout_ms);
  const HttpResponse response = HttpGet(*endpoint, path, http);
  out.where = endpoint->ToString();
  if (response.error == HttpError::kUnreachable) {
    err << me << "analyzer unreachable at " << out.where << ": " << response.message
        << " (set --analyzer or HOSTMESH_ANALYZER)\n";
    out.exit_code = kOncallUnreachable;
    return out;
  }
  if (response.error != HttpError::kNone) {
    err << me << "bad response from the analyzer at " << out.where << path << ": "
        << response.message << "\n";
    out.exit_code = kOncallBadResponse;
    return out;
  }
  if (response.status != 200) {
    err << me << "the analyzer at " << out.where << " answered " << response.status << " "
        << response.reason << " for " << path;
    if (!response.body.empty()) err << ": " << response.body.substr(0, 200);
    err << "\n";
    out.exit_code = kOncallBadResponse;
    return out;
  }
  out.body = response.body;
  return out;
}

}  // namespace hostmesh::ctl
