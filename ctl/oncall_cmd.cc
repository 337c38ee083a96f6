// hostmeshctl status|rnics|links [--suspicious]|incidents|sla: the on-call
// view of the analyzer's read-only API (/api/v1/). Tables by default, the
// API's JSON as is with --json. Exit codes (oncall_view.h has the per-command
// rules): 0 healthy or nothing to report, 1 something anomalous, 2 usage or a
// bad response, 3 analyzer unreachable.

#include <cstdlib>
#include <memory>
#include <ostream>
#include <string>

#include "ctl/api_fetch.h"
#include "ctl/commands.h"
#include "ctl/http_client.h"
#include "ctl/json_reader.h"
#include "ctl/oncall_view.h"

namespace hostmesh::ctl {

namespace {

constexpr const char* kDefaultAnalyzer = "http://127.0.0.1:8080";

struct OncallOptions {
  std::string analyzer = kDefaultAnalyzer;
  bool json = false;
  int timeout_ms = 5000;
  bool suspicious = false;
  OncallViewOptions view;
};

const char* CommandName(OncallCommand command) {
  switch (command) {
    case OncallCommand::kStatus:
      return "status";
    case OncallCommand::kRnics:
      return "rnics";
    case OncallCommand::kLinks:
      return "links";
    case OncallCommand::kIncidents:
      return "incidents";
    case OncallCommand::kSla:
      return "sla";
  }
  return "?";
}

int RunOncall(OncallCommand command, const OncallOptions& opt, CommandContext& ctx) {
  const std::string me = std::string("hostmeshctl ") + CommandName(command) + ": ";
  const std::string path = OncallApiPath(command, opt.suspicious);
  const ApiFetch response = FetchApi(opt.analyzer, opt.timeout_ms, path, me, ctx.err);
  if (response.exit_code != 0) return response.exit_code;
  const std::string& where = response.where;
  std::string error;
  if (opt.json) ctx.out << response.body;  // as served; the exit code still follows the rules
  const auto body = ParseJson(response.body, &error);
  if (!body) {
    ctx.err << me << "bad response from the analyzer at " << where << path << ": " << error << "\n";
    return kOncallBadResponse;
  }
  const OncallView view = RenderOncall(command, *body, opt.view);
  if (view.exit_code == kOncallBadResponse) {
    ctx.err << me << view.error << " (from " << where << path << ")\n";
    return view.exit_code;
  }
  if (!opt.json) {
    if (command == OncallCommand::kStatus) ctx.out << "analyzer:   " << where << "\n";
    ctx.out << view.text;
  }
  return view.exit_code;
}

void AddOne(CLI::App& app, CommandContext& ctx, OncallCommand command, const std::string& help) {
  auto opt = std::make_shared<OncallOptions>();
  CLI::App* sub = app.add_subcommand(CommandName(command), help);
  sub->add_option("--analyzer", opt->analyzer, "Analyzer API address, http://HOST:PORT")
      ->envname("HOSTMESH_ANALYZER")
      ->capture_default_str();
  sub->add_flag("--json", opt->json, "Print the API's JSON as is (exit code as for the table)");
  sub->add_option("--timeout-ms", opt->timeout_ms, "Give up on the analyzer after this long")
      ->capture_default_str();
  if (command == OncallCommand::kLinks) {
    sub->add_flag("--suspicious", opt->suspicious, "Only the links blamed for loss");
    sub->add_option("--limit", opt->view.links_limit, "Table rows at most (0: all)")
        ->capture_default_str();
  }
  if (command == OncallCommand::kSla) {
    sub->add_option("--max-drop-rate", opt->view.max_drop_rate,
                    "Exit 1 when an RNIC or network drop rate (cluster, rail or host) exceeds "
                    "this fraction")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
  }
  sub->callback([command, opt, &ctx] { ctx.exit_code = RunOncall(command, *opt, ctx); });
}

}  // namespace

void AddOncallCommands(CLI::App& app, CommandContext& ctx) {
  AddOne(app, ctx, OncallCommand::kStatus,
         "Analyzer health: version, window lag, agents present, open incidents (exit 1: stale "
         "or no agent reporting)");
  AddOne(app, ctx, OncallCommand::kRnics,
         "RNIC verdicts of the latest window (exit 1: an RNIC lossy or down)");
  AddOne(app, ctx, OncallCommand::kLinks,
         "Fabric links ranked by suspected loss (exit 1: a suspect link)");
  AddOne(app, ctx, OncallCommand::kIncidents,
         "Open and recently resolved incidents (exit 1: an incident open)");
  AddOne(app, ctx, OncallCommand::kSla,
         "Drop rates and latency quantiles per cluster, rail and host (exit 1: a drop rate above "
         "--max-drop-rate)");
}

}  // namespace hostmesh::ctl
