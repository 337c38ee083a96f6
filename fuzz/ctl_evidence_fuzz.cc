// What an analyzer (or anything answering on its address) sends hostmeshctl
// for `incident` and `bundle`, and the incident paths the analyzer parses
// from any HTTP client. The input is "path\nbody": the path after
// /api/v1/incidents/, then a JSON body read both as the incident and as its
// evidence. Views and bundles are text: whatever the body, no crash, and a
// bundle that is made names every file it holds in its README.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analyzer/api/render_evidence.h"
#include "ctl/bundle_files.h"
#include "ctl/incident_view.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  const std::string_view path =
      newline == std::string_view::npos ? input : input.substr(0, newline);
  const std::string body(newline == std::string_view::npos ? "" : input.substr(newline + 1));

  if (const auto parsed = hostmesh::analyzer::api::ParseIncidentPath(path)) {
    FUZZ_CHECK(parsed->id > 0);
  }
  std::string error;
  const auto json = hostmesh::ctl::ParseJson(body, &error);
  if (json) {
    const hostmesh::ctl::OncallView view = hostmesh::ctl::RenderIncident(*json, &*json);
    FUZZ_CHECK(view.exit_code >= 0 && view.exit_code <= 2);
  }
  hostmesh::ctl::BundleInputs in;
  in.evidence = body;
  in.incident = body;
  if (const auto files = hostmesh::ctl::MakeBundle(1, in, &error)) {
    FUZZ_CHECK(!files->empty() && files->front().name == "README.txt");
    for (const hostmesh::ctl::BundleFile& f : *files) {
      if (f.name != "README.txt")
        FUZZ_CHECK(files->front().contents.find(f.name) != std::string::npos);
    }
  }
  return 0;
}
