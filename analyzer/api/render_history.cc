#include "analyzer/api/render_history.h"

#include "analyzer/api/render_fields.h"
#include "analyzer/state/state_codec.h"

namespace hostmesh::analyzer::api {

std::string RenderSlaHistory(const std::vector<v1::state::WindowSummary>& windows,
                             const ApiSnapshot& names, bool truncated) {
  JsonWriter w;
  w.BeginObject().Key("count").Uint(windows.size()).Key("truncated").Bool(truncated);
  w.Key("windows").BeginArray();
  for (const v1::state::WindowSummary& win : windows) {
    w.BeginObject().Key("start_ns").Int(win.start_ns()).Key("end_ns").Int(win.end_ns());
    w.Key("results").Uint(win.results()).Key("agents_present").Uint(win.present_hosts());
    w.Key("agents_absent").BeginArray();
    for (const std::string& agent : win.absent_agents()) w.String(agent);
    w.EndArray().Key("cluster").BeginObject();
    WriteSlaFields(w, state::SlaRowOf(win.cluster()));
    w.EndObject().Key("rails").BeginArray();
    for (const v1::state::RailSla& rail : win.rails()) {
      w.BeginObject().Key("rail").Int(rail.rail());
      WriteSlaFields(w, state::SlaRowOf(rail.sla()));
      w.EndObject();
    }
    w.EndArray().Key("anomalous_rnics").BeginArray();
    for (const v1::state::RnicRef& rnic : win.anomalous_rnics()) {
      w.BeginObject().Key("agent_id").String(rnic.agent_id()).Key("nic").Uint(rnic.nic());
      w.Key("loss").Double(rnic.loss()).EndObject();
    }
    w.EndArray().Key("culprit_links").BeginArray();
    for (std::uint32_t link : win.culprit_links()) WriteLinkName(w, names, link);
    w.EndArray().Key("latency_hotspots").BeginArray();
    for (std::uint32_t link : win.latency_links()) WriteLinkName(w, names, link);
    w.EndArray().Key("coverage_fraction").Double(win.coverage_fraction());
    w.EndObject();
  }
  w.EndArray().EndObject();
  return w.Take();
}

}  // namespace hostmesh::analyzer::api
