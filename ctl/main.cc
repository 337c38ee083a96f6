// hostmeshctl: the on-call CLI. Flags are parsed here only; every subcommand
// calls a library with plain config structs.

#include <iostream>

#include "ctl/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"hostmeshctl: inspect a hostmesh deployment"};
  app.require_subcommand(1);
  hostmesh::ctl::CommandContext ctx{std::cout, std::cerr};
  hostmesh::ctl::AddTopologyCommand(app, ctx);
  hostmesh::ctl::AddTraceCommand(app, ctx);
  hostmesh::ctl::AddOncallCommands(app, ctx);
  hostmesh::ctl::AddIncidentCommand(app, ctx);
  hostmesh::ctl::AddBundleCommand(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;  // usage errors are bad input, like an invalid file
  }
  return ctx.exit_code;
}
