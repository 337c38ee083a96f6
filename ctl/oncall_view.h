// hostmeshctl status|rnics|links|incidents|sla: from the analyzer API's JSON
// (/api/v1/...) to an aligned table and an exit code. Pure: tested on fixture
// JSON without an analyzer.
//
// Exit codes (the command adds 2 for usage or a bad response and 3 for an
// unreachable analyzer):
//   status     0 judging windows with agents reporting; 1 stale (the latest
//              judged window lags more than 2 x (window + grace) + 10 s) or
//              agents known but none present in the latest window
//   rnics      1 when any RNIC is not ok (lossy or down) or anomalous
//   links      1 when any link is a suspect (culprit of the better method)
//   incidents  1 when any incident is open
//   sla        1 when an RNIC or network drop rate of the cluster, a rail or a
//              host exceeds the threshold (--max-drop-rate)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ctl/json_reader.h"

namespace hostmesh::ctl {

enum class OncallCommand { kStatus, kRnics, kLinks, kIncidents, kSla };

constexpr int kOncallHealthy = 0;
constexpr int kOncallAnomalous = 1;
constexpr int kOncallBadResponse = 2;
constexpr int kOncallUnreachable = 3;

struct OncallViewOptions {
  std::size_t links_limit = 20;  // table rows of `links`; 0 = all
  double max_drop_rate = 0.001;  // `sla`
};

struct OncallView {
  int exit_code = kOncallHealthy;  // 0, 1, or 2 when the JSON is not what the API serves
  std::string text;                // the table (empty when exit_code is 2)
  std::string error;               // why, when exit_code is 2
};

// The API path of a command ("/api/v1/rnics"; links with ?suspicious).
std::string OncallApiPath(OncallCommand command, bool suspicious);

OncallView RenderOncall(OncallCommand command, const JsonNode& body,
                        const OncallViewOptions& options = {});

// Columns separated by two spaces, each as wide as its widest cell; numeric
// columns (`right`) aligned right.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::vector<bool> right = {});
  void Add(std::vector<std::string> row);
  std::size_t rows() const { return rows_.size(); }
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// Formatting shared by the views; exposed for tests.
std::string FormatPercent(double fraction);        // 0.125 -> "12.50%"
std::string FormatNanoseconds(double ns);          // 1500 -> "1.5us"
std::string FormatWallTime(std::int64_t unix_ns);  // "2024-05-01 12:00:03Z", "-" for 0
std::string FormatSeconds(double seconds);         // 3725 -> "1h02m05s"

}  // namespace hostmesh::ctl
