// hostmeshctl bundle ID -o FILE.tar.gz: a support bundle of one incident
// (bundle_files.h). Exit 0 written; 2 usage, a bad response, no evidence
// kept or the file not written; 3 analyzer unreachable.
#include <chrono>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>

#include "ctl/api_fetch.h"
#include "ctl/bundle_files.h"
#include "ctl/commands.h"
#include "ctl/oncall_view.h"
#include "ctl/tar_gz.h"

namespace hostmesh::ctl {

namespace {

struct BundleOptions {
  std::uint64_t id = 0;
  std::string output;
  std::string analyzer = "http://127.0.0.1:8080";
  int timeout_ms = 30000;
};

int RunBundle(const BundleOptions& opt, CommandContext& ctx) {
  const std::string me = "hostmeshctl bundle: ";
  const std::string path = "/api/v1/incidents/" + std::to_string(opt.id);
  const ApiFetch evidence = FetchApi(opt.analyzer, opt.timeout_ms, path + "/evidence", me, ctx.err);
  if (evidence.exit_code != 0) return evidence.exit_code;
  // Optional: an incident resolved long ago is no longer listed, and an
  // older analyzer serves no config.
  std::ostringstream quiet;
  const ApiFetch incident = FetchApi(opt.analyzer, opt.timeout_ms, path, me, quiet);
  const ApiFetch config = FetchApi(opt.analyzer, opt.timeout_ms, "/api/v1/config", me, quiet);
  BundleInputs in;
  in.evidence = evidence.body;
  in.incident = incident.exit_code == 0 ? incident.body : "";
  in.config = config.exit_code == 0 ? config.body : "";
  in.analyzer = evidence.where;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  in.made_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  std::string error;
  const auto files = MakeBundle(opt.id, in, &error);
  if (!files) {
    ctx.err << me << "bad response from " << evidence.where << path << "/evidence: " << error
            << "\n";
    return kOncallBadResponse;
  }
  const std::string folder = "hostmesh-incident-" + std::to_string(opt.id);
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now).count();
  if (!WriteTarGz(opt.output, folder, *files, seconds, &error)) {
    ctx.err << me << error << "\n";
    return kOncallBadResponse;
  }
  std::size_t bytes = 0;
  for (const BundleFile& f : *files) bytes += f.contents.size();
  ctx.out << "wrote " << opt.output << ": " << files->size() << " files, " << bytes
          << " bytes before compression, under " << folder
          << "/ (README.txt says what each holds)\n";
  return 0;
}

}  // namespace

void AddBundleCommand(CLI::App& app, CommandContext& ctx) {
  auto opt = std::make_shared<BundleOptions>();
  CLI::App* sub = app.add_subcommand(
      "bundle",
      "A support bundle of one incident: its evidence as JSON and CSV, flight-recorder "
      "extracts, the analyzer's config without secrets (a .tar.gz)");
  sub->add_option("id", opt->id, "The incident's id (hostmeshctl incidents)")
      ->required()
      ->check(CLI::PositiveNumber);
  sub->add_option("-o,--output", opt->output, "Where to write it, FILE.tar.gz")->required();
  sub->add_option("--analyzer", opt->analyzer, "Analyzer API address, http://HOST:PORT")
      ->envname("HOSTMESH_ANALYZER")
      ->capture_default_str();
  sub->add_option("--timeout-ms", opt->timeout_ms, "Give up on the analyzer after this long")
      ->capture_default_str();
  sub->callback([opt, &ctx] { ctx.exit_code = RunBundle(*opt, ctx); });
}

}  // namespace hostmesh::ctl
