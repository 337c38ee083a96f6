#include "analyzer/api/render_history.h"

#include "analyzer/api/render_fields.h"
#include "analyzer/state/state_codec.h"

namespace hostmesh::analyzer::api {

std::string RenderSlaHistory(const std::vector<v1::state::WindowSummary>& windows,
                             const ApiSnapshot& names, bool truncated) {
  Json j = Json::object();
  j["count"] = windows.size();
  j["truncated"] = truncated;
  Json& out = j["windows"] = Json::array();
  for (const v1::state::WindowSummary& win : windows) {
    Json& w = out.emplace_back(Json::object());
    w["start_ns"] = win.start_ns();
    w["end_ns"] = win.end_ns();
    w["results"] = win.results();
    w["agents_present"] = win.present_hosts();
    Json& absent = w["agents_absent"] = Json::array();
    for (const std::string& agent : win.absent_agents()) absent.push_back(agent);
    AddSlaFields(w["cluster"] = Json::object(), state::SlaRowOf(win.cluster()));
    Json& rails = w["rails"] = Json::array();
    for (const v1::state::RailSla& rail : win.rails()) {
      Json& r = rails.emplace_back(Json::object());
      r["rail"] = rail.rail();
      AddSlaFields(r, state::SlaRowOf(rail.sla()));
    }
    Json& rnics = w["anomalous_rnics"] = Json::array();
    for (const v1::state::RnicRef& rnic : win.anomalous_rnics()) {
      Json& r = rnics.emplace_back(Json::object());
      r["agent_id"] = rnic.agent_id();
      r["nic"] = rnic.nic();
      r["loss"] = JsonNumber(rnic.loss());
    }
    Json& culprits = w["culprit_links"] = Json::array();
    for (std::uint32_t link : win.culprit_links()) culprits.push_back(LinkNameJson(names, link));
    Json& hotspots = w["latency_hotspots"] = Json::array();
    for (std::uint32_t link : win.latency_links()) hotspots.push_back(LinkNameJson(names, link));
    w["coverage_fraction"] = JsonNumber(win.coverage_fraction());
  }
  return DumpJson(j);
}

}  // namespace hostmesh::analyzer::api
