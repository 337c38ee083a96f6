// hostmeshctl incident ID [--json]: one incident and its evidence
// (incident_view.h). Exit codes as the on-call commands: 0 resolved, 1 open,
// 2 usage or a bad response (or no such incident), 3 analyzer unreachable.
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>

#include "ctl/api_fetch.h"
#include "ctl/commands.h"
#include "ctl/incident_view.h"

namespace hostmesh::ctl {

namespace {

struct IncidentOptions {
  std::uint64_t id = 0;
  std::string analyzer = "http://127.0.0.1:8080";
  bool json = false;
  int timeout_ms = 5000;
};

int RunIncident(const IncidentOptions& opt, CommandContext& ctx) {
  const std::string me = "hostmeshctl incident: ";
  const std::string path = "/api/v1/incidents/" + std::to_string(opt.id);
  const ApiFetch incident = FetchApi(opt.analyzer, opt.timeout_ms, path, me, ctx.err);
  if (incident.exit_code != 0) return incident.exit_code;
  std::string error;
  const auto incident_json = ParseJson(incident.body, &error);
  if (!incident_json) {
    ctx.err << me << "bad response from " << incident.where << path << ": " << error << "\n";
    return kOncallBadResponse;
  }
  // The evidence: a 404 means none kept, which the view says.
  std::ostringstream quiet;
  const ApiFetch evidence = FetchApi(opt.analyzer, opt.timeout_ms, path + "/evidence", me, quiet);
  std::optional<JsonNode> evidence_json;
  if (evidence.exit_code == 0) {
    evidence_json = ParseJson(evidence.body, &error);
    if (!evidence_json) {
      ctx.err << me << "bad response from " << evidence.where << path << "/evidence: " << error
              << "\n";
      return kOncallBadResponse;
    }
  } else if (evidence.exit_code == kOncallUnreachable) {
    ctx.err << quiet.str();
    return evidence.exit_code;
  }
  if (opt.json) {
    ctx.out << R"({"incident":)" << incident.body << R"(,"evidence":)"
            << (evidence_json ? evidence.body : "null") << "}\n";
  }
  const OncallView view = RenderIncident(*incident_json, evidence_json ? &*evidence_json : nullptr);
  if (view.exit_code == kOncallBadResponse) {
    ctx.err << me << view.error << " (from " << incident.where << path << ")\n";
    return view.exit_code;
  }
  if (!opt.json) ctx.out << view.text;
  return view.exit_code;
}

}  // namespace

void AddIncidentCommand(CLI::App& app, CommandContext& ctx) {
  auto opt = std::make_shared<IncidentOptions>();
  CLI::App* sub = app.add_subcommand(
      "incident", "One incident and the evidence kept for it (exit 1: it is open)");
  sub->add_option("id", opt->id, "The incident's id (hostmeshctl incidents)")
      ->required()
      ->check(CLI::PositiveNumber);
  sub->add_option("--analyzer", opt->analyzer, "Analyzer API address, http://HOST:PORT")
      ->envname("HOSTMESH_ANALYZER")
      ->capture_default_str();
  sub->add_flag("--json", opt->json,
                R"(Print {"incident":...,"evidence":...} as served (exit code as for the text))");
  sub->add_option("--timeout-ms", opt->timeout_ms, "Give up on the analyzer after this long")
      ->capture_default_str();
  sub->callback([opt, &ctx] { ctx.exit_code = RunIncident(*opt, ctx); });
}

}  // namespace hostmesh::ctl
