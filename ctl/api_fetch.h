// One GET of the analyzer's API for hostmeshctl's on-call commands, with the
// messages and exit codes they share (oncall_view.h): 2 for a bad address,
// an HTTP error or a status other than 200, 3 for an unreachable analyzer.
#pragma once

#include <ostream>
#include <string>

#include "ctl/http_client.h"

namespace hostmesh::ctl {

struct ApiFetch {
  int exit_code = 0;  // 0: `body` holds the 200 answer
  std::string body;
  std::string where;  // the analyzer's address, for messages
};

// `me`: the message prefix ("hostmeshctl incident: ").
ApiFetch FetchApi(const std::string& analyzer, int timeout_ms, const std::string& path,
                  const std::string& me, std::ostream& err);

}  // namespace hostmesh::ctl
