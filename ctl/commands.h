#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>

namespace hostmesh::ctl {

// What a subcommand needs from main: where to print, and where to leave its
// exit status (0 success, 1 failure, 2 bad input such as an invalid file).
struct CommandContext {
  std::ostream& out;
  std::ostream& err;
  int exit_code = 0;
};

// One function per subcommand family, each in its own file; main.cc calls them
// all. `ctx` outlives the parse.
void AddTopologyCommand(CLI::App& app, CommandContext& ctx);
void AddTraceCommand(CLI::App& app, CommandContext& ctx);
void AddOncallCommands(CLI::App& app, CommandContext& ctx);   // status rnics links incidents sla
void AddIncidentCommand(CLI::App& app, CommandContext& ctx);  // incident ID
void AddBundleCommand(CLI::App& app, CommandContext& ctx);    // bundle ID -o FILE

}  // namespace hostmesh::ctl
