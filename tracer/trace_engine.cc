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

namespace {

// One trace under way: the sends, the replies, and the stop rules applied hop
// by hop.
class Tracing {
 public:
  Tracing(const TraceRequest& request, TraceIo& io, const Clock& clock)
      : request_(request),
        io_(io),
        clock_(clock),
        identity_{request.tuple, request.generation, request.session} {
    result_.tuple = request.tuple;
  }

  TraceResult& result() { return result_; }

  // Hop 1 from the request's confirmed first hop, without a probe.
  void TakeFirstHop() {
    result_.hops.push_back(Hop{1, request_.first_hop, HopStatus::kTimeExceeded, {}, 0});
    sent_at_.push_back(MonoTime{});
    result_.first_probed_ttl = 2;
  }

  // Sends TTL `ttl` (the next one) after the pacing gap; false on a send error.
  bool Send(int ttl) {
    if (ttl > result_.first_probed_ttl && request_.min_probe_interval.count() > 0) {
      io_.SleepUntil(last_send_ + request_.min_probe_interval);
    }
    const auto payload = EncodeProbePayload({ttl, request_.generation, request_.session});
    last_send_ = clock_.MonotonicNow();
    if (std::string error = io_.Send(ttl, payload); !error.empty()) {
      result_.error = "ttl " + std::to_string(ttl) + ": " + error;
      result_.end = TraceEnd::kError;
      return false;
    }
    ++result_.probes_sent;
    sent_at_.push_back(last_send_);
    result_.hops.push_back(Hop{ttl, {}, HopStatus::kSilent, {}, 0});
    return true;
  }

  // Takes replies until hops [from, to] have all answered or `deadline`.
  void Receive(int from, int to, MonoTime deadline) {
    MonoTime received_at{};
    while (!AllAnswered(from, to) && io_.Receive(deadline, packet_, received_at)) {
      const ParsedIcmp parsed = ParseIcmpPacket(packet_);
      if (parsed.status != ParseStatus::kOk) {
        ++result_.unparsable_replies;
        continue;
      }
      const Match match = MatchReply(parsed.error, identity_);
      if (match.verdict == MatchVerdict::kForeign) {
        ++result_.foreign_replies;
      } else if (match.verdict == MatchVerdict::kStale ||
                 match.ttl > static_cast<int>(result_.hops.size()) ||
                 match.ttl < result_.first_probed_ttl) {
        // A TTL not sent in this trace can only be an older trace's.
        ++result_.stale_replies;
      } else {
        Record(result_, parsed.error, match.ttl, sent_at_[static_cast<std::size_t>(match.ttl - 1)],
               received_at);
      }
    }
  }

  MonoTime last_send() const { return last_send_; }

  // The stop rules for hop `ttl`, in TTL order: true when the trace ends
  // there (hops past it, sent at once with it, are dropped).
  bool EndsAt(int ttl) {
    const Hop& hop = result_.hops[static_cast<std::size_t>(ttl - 1)];
    if (hop.status == HopStatus::kDestination || hop.status == HopStatus::kUnreachable) {
      result_.hops.resize(static_cast<std::size_t>(ttl));
      result_.reached_destination = hop.status == HopStatus::kDestination;
      result_.end =
          hop.status == HopStatus::kDestination ? TraceEnd::kDestination : TraceEnd::kUnreachable;
      return true;
    }
    if (hop.answered()) {
      silent_run_ = 0;
      return false;
    }
    ++silent_run_;
    const int first_silent = ttl - silent_run_ + 1;
    // A run of silent hops that all lie on the known path (switches there,
    // likely rate-limited) says nothing about where the destination is: only a
    // run that reached the known destination hop may infer it.
    const bool run_passed_known_path = request_.switch_hops == 0 || ttl > request_.switch_hops;
    if (request_.destination_swallows && Answered(result_, first_silent - 1) &&
        (first_silent - 1 == request_.switch_hops ||
         (silent_run_ >= request_.max_silent_run && run_passed_known_path))) {
      InferDestination(result_, first_silent);
      return true;
    }
    if (silent_run_ >= request_.max_silent_run) {
      result_.hops.resize(static_cast<std::size_t>(ttl));
      result_.end = TraceEnd::kSilentLimit;
      return true;
    }
    return false;
  }

  // Every switch of the known path answered from its known address.
  bool KnownPathConfirmed(int switches) const {
    if (static_cast<int>(request_.known_hops.size()) != switches ||
        static_cast<int>(result_.hops.size()) < switches) {
      return false;
    }
    for (int i = 0; i < switches; ++i) {
      const Hop& hop = result_.hops[static_cast<std::size_t>(i)];
      if (hop.status != HopStatus::kTimeExceeded ||
          hop.address != request_.known_hops[static_cast<std::size_t>(i)]) {
        return false;
      }
    }
    return true;
  }

 private:
  bool AllAnswered(int from, int to) const {
    for (int ttl = from; ttl <= to; ++ttl) {
      if (!result_.hops[static_cast<std::size_t>(ttl - 1)].answered()) return false;
    }
    return true;
  }

  const TraceRequest& request_;
  TraceIo& io_;
  const Clock& clock_;
  const TraceIdentity identity_;
  TraceResult result_;
  std::vector<MonoTime> sent_at_;
  std::vector<std::uint8_t> packet_;
  MonoTime last_send_{};
  int silent_run_ = 0;
};

}  // namespace

TraceResult RunTrace(const TraceRequest& request, TraceIo& io, const Clock& clock) {
  Tracing t(request, io, clock);
  TraceResult& result = t.result();
  const int max_ttl = std::clamp(request.max_ttl, 1, kMaxTtl);
  if (std::string error = io.Open(request.tuple, request.netdev); !error.empty()) {
    result.error = std::move(error);
    return std::move(result);
  }
  int ttl = 1;
  if (!request.first_hop.IsZero() && max_ttl > 1) {
    t.TakeFirstHop();
    ttl = 2;
  }
  // A known path length: its switches' TTLs go out at once and their replies
  // are awaited together (one wait, not one per hop), then judged hop by hop
  // as if sent one at a time.
  const int known = std::min(request.switch_hops, max_ttl);
  if (known >= ttl) {
    const int from = ttl;
    for (; ttl <= known; ++ttl) {
      if (!t.Send(ttl)) return std::move(result);
    }
    t.Receive(from, known, t.last_send() + request.probe_timeout);
    // Every switch as before: the swallowing destination is where it was,
    // since a switch added after the last one would need new cabling to the
    // destination NIC. No probe is spent on it.
    if (request.destination_swallows && known < max_ttl && t.KnownPathConfirmed(known)) {
      InferDestination(result, known + 1);
      return std::move(result);
    }
    for (int k = 1; k <= known; ++k) {
      if (t.EndsAt(k)) return std::move(result);
    }
  }
  for (; ttl <= max_ttl; ++ttl) {
    if (!t.Send(ttl)) return std::move(result);
    t.Receive(ttl, ttl, t.last_send() + ReplyWait(request, result, ttl));
    if (t.EndsAt(ttl)) return std::move(result);
  }
  result.end = TraceEnd::kOutOfTtl;
  return std::move(result);
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
  const auto from =
      hops.begin() +
      std::min<std::ptrdiff_t>(first_probed_ttl - 1, static_cast<std::ptrdiff_t>(hops.size()));
  return static_cast<int>(
      std::count_if(from, hops.end(), [](const Hop& h) { return h.answered(); }));
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
