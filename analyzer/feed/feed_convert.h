#pragma once

// The wire -> analysis conversion, one piece for the analyzer's AnalysisFeed
// and the fleet simulator (sim/), so what the simulator measures is what the
// analyzer does with an upload: probe results field for field, path reports
// resolved onto the fabric's links, NIC rails from the agent's Hello.

#include <optional>
#include <span>
#include <vector>

#include "analyzer/analysis/types.h"
#include "hostmesh/v1/ingest.pb.h"
#include "topology/path_resolver.h"

namespace hostmesh::analyzer::app {

analysis::ProbeRecord ToProbeRecord(analysis::HostId host, const v1::ProbeResult& result);

enum class PathConversion : std::uint8_t {
  kResolved,
  // Cut short (a gray link ate the rest), continued by the only shortest walk
  // the fabric allows to the destination: resolved.
  kContinued,
  // Cut short, and several continuations fit: `out` holds the answered part
  // and every way on as candidates. The 5-tuple's previous path stands where
  // it fits (PathTable::Add); otherwise the failures of its probes are shared
  // among the candidates (a gray link that eats the traceroute stays in view
  // when port rotation brings 5-tuples never traced before the fault).
  kCutShort,
  kUnresolved,
};

// A report's addresses: false when src or dst does not parse or there are more hops
// than PathResolver::kMaxHops (a hop address that does not parse is silent).
// `hops` holds kMaxHops; *count is set.
bool ParseTrace(const v1::PathReport& report, topology::Ipv4* src, topology::Ipv4* dst,
                topology::Hop* hops, std::size_t* count);

// A report's addresses parsed once, for every reader of one report (the
// resolver, the inventory checks).
struct ParsedTrace {
  topology::Ipv4 src;
  topology::Ipv4 dst;
  topology::Hop hops[topology::PathResolver::kMaxHops];
  std::size_t count = 0;
  std::span<const topology::Hop> trace() const { return {hops, count}; }
};
// As ParseTrace above; false leaves `out` unspecified.
bool ParseTrace(const v1::PathReport& report, ParsedTrace* out);

// Beyond this many links one ambiguous position may be, its candidates are not kept.
inline constexpr std::size_t kMaxCandidatesPerPosition = 64;

// `report`'s identity and `resolved`'s links (kUnknown where ambiguous, with
// their candidates) into `out`.
void FillPathRecord(analysis::HostId host, const v1::PathReport& report,
                    const topology::ResolvedPath& resolved, analysis::PathRecord& out);

// Resolves `report`'s hops onto the fabric into `out` (links in order, kUnknown
// where ambiguous). A trace is cut short when it did not reach the
// destination (its last answer is not the destination's own, which the tracer
// may have inferred), or reached it while its answers,
// each agreeing with the inventory, lead elsewhere: then it is continued from
// its last answer (PathResolver::ResolveTruncated), since silent hops at its
// end say nothing of the path's length. kUnresolved: bad addresses, too many
// hops, or answers the graph contradicts (topology::FindDisagreement says
// where). `scratch` is reused between calls.
PathConversion ToPathRecord(analysis::HostId host, const v1::PathReport& report,
                            const topology::PathResolver& resolver, topology::ResolvedPath& scratch,
                            analysis::PathRecord& out);
// The same for a report already parsed (`parsed` is `report`'s).
PathConversion ToPathRecord(analysis::HostId host, const v1::PathReport& report,
                            const ParsedTrace& parsed, const topology::PathResolver& resolver,
                            topology::ResolvedPath& scratch, analysis::PathRecord& out);

// rails[nic id] from a Hello's NIC table; ids the Hello skips keep rail = id.
std::vector<int> RailsFromHello(const v1::AgentHello& hello);

}  // namespace hostmesh::analyzer::app
