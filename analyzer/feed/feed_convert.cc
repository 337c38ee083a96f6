#include "analyzer/feed/feed_convert.h"

#include "topology/trace_check.h"

namespace hostmesh::analyzer::app {

analysis::ProbeRecord ToProbeRecord(analysis::HostId host, const v1::ProbeResult& p) {
  analysis::ProbeRecord r;
  r.host = host;
  r.src_nic = p.src_nic();
  r.dst_nic = p.dst_nic();
  r.src_port = static_cast<std::uint16_t>(p.src_port());
  r.dst_port = static_cast<std::uint16_t>(p.dst_port());
  r.sequence = p.sequence();
  r.send_time_ns = p.send_time_ns();
  r.t1_app_send_ns = p.app_send_ns();
  r.t2_nic_send_ns = p.nic_send_ns();
  r.t3_nic_recv_ns = p.nic_recv_ns();
  r.t4_app_recv_ns = p.app_recv_ns();
  r.timeout = p.timeout();
  r.send_failed = p.send_failed();
  return r;
}

bool ParseTrace(const v1::PathReport& report, topology::Ipv4* src, topology::Ipv4* dst,
                topology::Hop* hops, std::size_t* count) {
  const auto s = topology::ParseIpv4(report.src_ip());
  const auto d = topology::ParseIpv4(report.dst_ip());
  if (!s || !d || report.hops_size() > static_cast<int>(topology::PathResolver::kMaxHops)) {
    return false;
  }
  *src = *s;
  *dst = *d;
  std::size_t n = 0;
  for (const v1::Hop& hop : report.hops()) {
    hops[n++] = hop.address().empty() ? std::nullopt : topology::ParseIpv4(hop.address());
  }
  *count = n;
  return true;
}

bool ParseTrace(const v1::PathReport& report, ParsedTrace* out) {
  return ParseTrace(report, &out->src, &out->dst, out->hops, &out->count);
}

void FillPathRecord(analysis::HostId host, const v1::PathReport& report,
                    const topology::ResolvedPath& resolved, analysis::PathRecord& out) {
  out.host = host;
  out.src_nic = report.src_nic();
  out.dst_nic = report.dst_nic();
  out.src_port = static_cast<std::uint16_t>(report.src_port());
  out.dst_port = static_cast<std::uint16_t>(report.dst_port());
  out.time_ns = report.time_ns();
  out.links = resolved.links;  // ambiguous positions are kNone == kUnknown
  out.candidates.clear();
  for (const topology::LinkCandidates& at : resolved.candidates) {
    // A position with more ways than a fabric's ECMP fan-out says nothing.
    if (at.links.size() > kMaxCandidatesPerPosition) continue;
    for (const topology::LinkId l : at.links) {
      out.candidates.push_back({static_cast<std::uint32_t>(at.position), l});
    }
  }
}

PathConversion ToPathRecord(analysis::HostId host, const v1::PathReport& report,
                            const topology::PathResolver& resolver, topology::ResolvedPath& scratch,
                            analysis::PathRecord& out) {
  ParsedTrace parsed;
  if (!ParseTrace(report, &parsed)) return PathConversion::kUnresolved;
  return ToPathRecord(host, report, parsed, resolver, scratch, out);
}

PathConversion ToPathRecord(analysis::HostId host, const v1::PathReport& report,
                            const ParsedTrace& parsed, const topology::PathResolver& resolver,
                            topology::ResolvedPath& scratch, analysis::PathRecord& out) {
  const topology::Ipv4 src = parsed.src, dst = parsed.dst;
  const topology::Hop* hops = parsed.hops;
  const std::size_t n = parsed.count;
  const std::span<const topology::Hop> trace = parsed.trace();
  // As the learner reads a trace: it reached the destination when its last
  // answer is the destination's own (maybe inferred by the tracer).
  std::size_t answered = n;
  while (answered > 0 && !hops[answered - 1]) --answered;
  const bool reached = answered > 0 && hops[answered - 1] == dst;
  resolver.Resolve(src, dst, trace, &scratch);
  const bool whole = scratch.status != topology::PathStatus::kInconsistent;
  if (reached && whole) {
    FillPathRecord(host, report, scratch, out);
    // It reached the destination, so no hop on it is gray: a silent hop is a
    // switch's ICMP rate limit, and listing every way through it would spread
    // the 5-tuple's failures over its siblings.
    out.candidates.clear();
    return PathConversion::kResolved;
  }
  // Only on the rare inconsistent trace: a miscabling is not continued.
  if (!whole && topology::FindDisagreement(resolver.topology(), src, dst, trace)) {
    return PathConversion::kUnresolved;
  }
  if (reached) --answered;
  while (answered > 0 && !hops[answered - 1]) --answered;
  resolver.ResolveTruncated(src, dst, trace.first(answered),
                            topology::PathResolver::kMaxContinuation, &scratch);
  switch (scratch.status) {
    case topology::PathStatus::kOk:
      FillPathRecord(host, report, scratch, out);
      return PathConversion::kContinued;
    case topology::PathStatus::kAmbiguous:
      FillPathRecord(host, report, scratch, out);
      return PathConversion::kCutShort;
    case topology::PathStatus::kInconsistent:
      break;
  }
  return PathConversion::kUnresolved;
}

std::vector<int> RailsFromHello(const v1::AgentHello& hello) {
  std::vector<int> rails;
  for (const v1::Nic& nic : hello.nics()) {
    if (nic.id() >= analysis::kMaxNics) continue;
    for (auto n = rails.size(); n <= nic.id(); ++n) rails.push_back(static_cast<int>(n));
    rails[nic.id()] = static_cast<int>(nic.rail());
  }
  return rails;
}

}  // namespace hostmesh::analyzer::app
