#include "tracer/probe_matcher.h"

#include "tracer/probe_tag.h"

namespace hostmesh::tracer {

Match MatchReply(const IcmpError& reply, const TraceIdentity& trace) {
  const QuotedUdp& q = reply.quoted;
  if (q.tuple != trace.tuple) return {MatchVerdict::kForeign, 0};
  const auto id = DecodeUdpLength(q.udp_length);
  if (!id) return {MatchVerdict::kForeign, 0};
  const auto tag = DecodePayloadTag(q.payload);
  // Quoted far enough to hold a tag, but without one: not a hostmesh probe
  // (traceroute(8) on the same 5-tuple, say).
  if (!tag && q.payload.size() >= kTagBytes) return {MatchVerdict::kForeign, 0};
  if (tag) {
    if (tag->session != trace.session || tag->ttl != id->ttl ||
        tag->generation % kGenerations != id->generation_mod) {
      return {MatchVerdict::kForeign, 0};
    }
    if (tag->generation != trace.generation) return {MatchVerdict::kStale, 0};
  }
  if (id->generation_mod != trace.generation % kGenerations) return {MatchVerdict::kStale, 0};
  return {MatchVerdict::kMatched, id->ttl};
}

}  // namespace hostmesh::tracer
