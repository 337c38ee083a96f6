// The analyzer's stored judgement (analyzer/state/state_codec.h) as a restart
// and the history API read it back, damaged or written by another version:
// window summaries (and the SLA rows the history renders from them) and
// incidents, which StateKeeper::Restore hands the IncidentTracker, whose next
// window then updates or resolves them. A decoded incident must encode back to
// one that decodes the same.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "analyzer/analysis/incidents.h"
#include "analyzer/state/state_codec.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/quiet_protobuf_target.h"

using namespace hostmesh;
using namespace hostmesh::analyzer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (const auto summary = state::DecodeWindowSummary(bytes)) {
    (void)state::SlaRowOf(summary->cluster());
    for (const auto& rail : summary->rails()) (void)state::SlaRowOf(rail.sla());
    for (const auto& host : summary->hosts()) (void)state::SlaRowOf(host.sla());
  }
  std::optional<analysis::Incident> incident = state::DecodeIncident(bytes);
  if (!incident) return 0;
  const std::optional<analysis::Incident> again =
      state::DecodeIncident(state::EncodeIncident(*incident));
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(state::EncodeIncident(*again) == state::EncodeIncident(*incident));

  analysis::IncidentTracker tracker;
  const std::uint64_t id = incident->id;
  std::vector<analysis::Incident> restored;
  restored.push_back(std::move(*incident));
  tracker.Restore(std::move(restored), 1);
  FUZZ_CHECK(tracker.Find(id) != nullptr);
  // The first window after the restart: nothing seen, so open incidents age.
  analysis::WindowReport report;
  report.start_ns = 1'704'067'200'000'000'000;
  report.end_ns = report.start_ns + 20'000'000'000;
  (void)tracker.Update(report);
  return 0;
}
