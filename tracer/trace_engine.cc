#include "tracer/trace_engine.h"

#include <algorithm>
#include <random>

#include "tracer/icmp_packet.h"
#include "tracer/kernel_trace_io.h"
#include "tracer/probe_matcher.h"
#include "tracer/probe_tag.h"

namespace hostmesh::tracer {
namespace {

// Fills hop `ttl` (already sent) from a matched reply.
void Record(TraceResult& result, const IcmpError& reply, int ttl, MonoTime sent_at,
            MonoTime received_at) {
  Hop& hop = result.hops[static_cast<std::size_t>(ttl - 1)];
  if (hop.answered()) return;  // a duplicate: the first answer stands
  hop.address = reply.responder;
  hop.rtt = received_at - sent_at;
  hop.icmp_code = reply.code;
  switch (reply.kind) {
    case IcmpKind::kTimeExceeded:
      hop.status = HopStatus::kTimeExceeded;
      break;
    case IcmpKind::kPortUnreachable:
      hop.status =
          reply.responder == result.tuple.dst ? HopStatus::kDestination : HopStatus::kUnreachable;
      break;
    case IcmpKind::kOtherUnreachable:
      hop.status = HopStatus::kUnreachable;
      break;
  }
}

bool Answered(const TraceResult& r, int ttl) {
  return ttl >= 1 && ttl <= static_cast<int>(r.hops.size()) &&
         r.hops[static_cast<std::size_t>(ttl - 1)].status == HopStatus::kTimeExceeded;
}

void InferDestination(TraceResult& r, int ttl) {
  r.hops.resize(static_cast<std::size_t>(ttl));
  Hop& hop = r.hops.back();
  hop.address = r.tuple.dst;
  hop.status = HopStatus::kInferredDestination;
  r.reached_destination = true;
  r.end = TraceEnd::kInferredDestination;
}

// How long to wait for the reply to TTL `ttl`. The probe that reaches a
// swallowing destination of known distance gets no reply by design; only a
// path grown by a switch would answer, and that switch's Time Exceeded comes
// about as fast as the previous hop's: waiting the full probe_timeout would
// cap a tracer thread at a few traces per second for nothing.
std::chrono::nanoseconds ReplyWait(const TraceRequest& request, const TraceResult& result,
                                   int ttl) {
  if (!request.destination_swallows || request.switch_hops <= 0 || ttl != request.switch_hops + 1 ||
      !Answered(result, ttl - 1)) {
    return request.probe_timeout;
  }
  std::chrono::nanoseconds slowest{0};
  for (const Hop& hop : result.hops) slowest = std::max(slowest, hop.rtt);
  return std::min(request.probe_timeout,
                  slowest * request.swallowed_wait_factor + request.swallowed_wait_slack);
}

}  // namespace

TraceResult RunTrace(const TraceRequest& request, TraceIo& io, const Clock& clock) {
  TraceResult result;
  result.tuple = request.tuple;
  const int max_ttl = std::clamp(request.max_ttl, 1, kMaxTtl);
  if (std::string error = io.Open(request.tuple, request.netdev); !error.empty()) {
    result.error = std::move(error);
    return result;
  }
  const TraceIdentity identity{request.tuple, request.generation, request.session};
  std::vector<MonoTime> sent_at;
  std::vector<std::uint8_t> packet;
  MonoTime last_send{};
  int silent_run = 0;
  for (int ttl = 1; ttl <= max_ttl; ++ttl) {
    if (ttl > 1 && request.min_probe_interval.count() > 0) {
      io.SleepUntil(last_send + request.min_probe_interval);
    }
    const auto payload = EncodeProbePayload({ttl, request.generation, request.session});
    last_send = clock.MonotonicNow();
    if (std::string error = io.Send(ttl, payload); !error.empty()) {
      result.error = "ttl " + std::to_string(ttl) + ": " + error;
      result.end = TraceEnd::kError;
      return result;
    }
    ++result.probes_sent;
    sent_at.push_back(last_send);
    result.hops.push_back(Hop{ttl, {}, HopStatus::kSilent, {}, 0});
    const MonoTime deadline = last_send + ReplyWait(request, result, ttl);
    MonoTime received_at{};
    while (!result.hops.back().answered() && io.Receive(deadline, packet, received_at)) {
      const ParsedIcmp parsed = ParseIcmpPacket(packet);
      if (parsed.status != ParseStatus::kOk) {
        ++result.unparsable_replies;
        continue;
      }
      const Match match = MatchReply(parsed.error, identity);
      if (match.verdict == MatchVerdict::kForeign) {
        ++result.foreign_replies;
      } else if (match.verdict == MatchVerdict::kStale || match.ttl > ttl) {
        // A TTL not sent yet in this trace can only be an older trace's.
        ++result.stale_replies;
      } else {
        Record(result, parsed.error, match.ttl, sent_at[static_cast<std::size_t>(match.ttl - 1)],
               received_at);
      }
    }
    const Hop& hop = result.hops.back();
    if (hop.status == HopStatus::kDestination) {
      result.reached_destination = true;
      result.end = TraceEnd::kDestination;
      return result;
    }
    if (hop.status == HopStatus::kUnreachable) {
      result.end = TraceEnd::kUnreachable;
      return result;
    }
    if (hop.answered()) {
      silent_run = 0;
      continue;
    }
    ++silent_run;
    const int first_silent = ttl - silent_run + 1;
    // A run of silent hops that all lie on the known path (switches there,
    // likely rate-limited) says nothing about where the destination is: only a
    // run that reached the known destination hop may infer it.
    const bool run_passed_known_path = request.switch_hops == 0 || ttl > request.switch_hops;
    if (request.destination_swallows && Answered(result, first_silent - 1) &&
        (first_silent - 1 == request.switch_hops ||
         (silent_run >= request.max_silent_run && run_passed_known_path))) {
      InferDestination(result, first_silent);
      return result;
    }
    if (silent_run >= request.max_silent_run) {
      result.end = TraceEnd::kSilentLimit;
      return result;
    }
  }
  result.end = TraceEnd::kOutOfTtl;
  return result;
}

TraceResult TraceOnce(TraceRequest request, std::uint8_t tos) {
  if (request.session == 0)
    request.session = static_cast<std::uint32_t>(std::random_device{}()) | 1u;
  SystemClock clock;
  std::string error;
  auto io = KernelTraceIo::Create(clock, tos, error);
  if (!io) {
    TraceResult result;
    result.tuple = request.tuple;
    result.error = std::move(error);
    return result;
  }
  return RunTrace(request, *io, clock);
}

const char* ToString(TraceEnd end) {
  switch (end) {
    case TraceEnd::kDestination:
      return "destination";
    case TraceEnd::kInferredDestination:
      return "inferred destination";
    case TraceEnd::kUnreachable:
      return "unreachable";
    case TraceEnd::kSilentLimit:
      return "silent limit";
    case TraceEnd::kOutOfTtl:
      return "max ttl";
    case TraceEnd::kError:
      return "error";
  }
  return "?";
}

int TraceResult::answered_hops() const {
  return static_cast<int>(
      std::count_if(hops.begin(), hops.end(), [](const Hop& h) { return h.answered(); }));
}

int TraceResult::silent_hops() const {
  return static_cast<int>(std::count_if(
      hops.begin(), hops.end(), [](const Hop& h) { return h.status == HopStatus::kSilent; }));
}

std::vector<Ipv4> TraceResult::SwitchHops() const {
  std::vector<Ipv4> out;
  for (const Hop& h : hops) {
    if (h.status == HopStatus::kDestination || h.status == HopStatus::kInferredDestination) break;
    out.push_back(h.address);
  }
  return out;
}

}  // namespace hostmesh::tracer
