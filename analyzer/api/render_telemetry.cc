#include "analyzer/api/render_telemetry.h"

#include "analyzer/api/json_writer.h"

namespace hostmesh::analyzer::api {
namespace {

void WritePause(
    JsonWriter& w,
    const std::array<std::optional<std::uint64_t>, telemetry::kPfcPriorities>& counters) {
  w.BeginObject();
  for (std::size_t p = 0; p < counters.size(); ++p) {
    if (counters[p]) w.Key(std::to_string(p)).Uint(*counters[p]);
  }
  w.EndObject();
}

}  // namespace

std::string RenderTelemetry(const TelemetryQuery& query, const TelemetryAnswer& answer) {
  JsonWriter w;
  w.BeginObject().Key("from_ns").Int(query.from_ns).Key("to_ns").Int(query.to_ns);
  w.Key("count").Uint(answer.rows.size()).Key("truncated").Bool(answer.truncated);
  w.Key("nics").BeginArray();
  for (const telemetry::NicTelemetryRow& row : answer.rows) {
    const telemetry::NicCounterTotals& t = row.totals;
    w.BeginObject().Key("agent_id").String(row.agent_id).Key("nic").String(row.nic);
    w.Key("samples").Uint(t.samples).Key("start_ns").Int(t.start_ns).Key("end_ns").Int(t.end_ns);
    w.Key("counters").BeginObject();
    for (const auto& [counter, delta] : t.deltas) {
      w.Key(telemetry::CounterName(counter)).Uint(delta);
    }
    w.EndObject();
    w.Key("pfc_pause_received");
    WritePause(w, t.rx_pfc_pause);
    w.Key("pfc_pause_sent");
    WritePause(w, t.tx_pfc_pause);
    w.Key("port_state").Uint(t.port_state).Key("phys_state").Uint(t.phys_state);
    w.Key("carrier").String(telemetry::CarrierName(t.carrier));
    w.Key("pcie");
    if (t.pcie) {
      w.BeginObject()
          .Key("current_width")
          .Uint(t.pcie->current_width)
          .Key("max_width")
          .Uint(t.pcie->max_width)
          .Key("current_speed_gts")
          .Double(t.pcie->current_speed_mts / 1000.0)
          .Key("max_speed_gts")
          .Double(t.pcie->max_speed_mts / 1000.0)
          .Key("downgraded")
          .Bool(t.pcie->Downgraded())
          .EndObject();
    } else {
      w.Null();
    }
    w.Key("read_failures").Uint(t.read_failures).Key("counter_resets").Uint(t.counter_resets);
    w.EndObject();
  }
  w.EndArray().EndObject();
  return w.Take();
}

}  // namespace hostmesh::analyzer::api
