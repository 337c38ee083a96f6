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
  hop.ttl = ttl;  // a hop never probed (a confirmed known path) is new here
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

// One trace under way, as a state machine the runner steps: the probes it
// still has to send (paced), the hops whose replies it awaits and until when,
// and the stop rules applied hop by hop once the wait is over.
class TraceRunner::Run {
 public:
  Run(const TraceRequest& request, TraceIo& io, const Clock& clock)
      : request_(request),
        io_(io),
        clock_(clock),
        identity_{request.tuple, request.generation, request.session},
        max_ttl_(std::clamp(request.max_ttl, 1, kMaxTtl)) {
    result_.tuple = request.tuple;
  }

  const FiveTuple& tuple() const { return request_.tuple; }
  const TraceIdentity& identity() const { return identity_; }
  bool done() const { return done_; }
  TraceResult& result() { return result_; }

  // Opens the 5-tuple and queues the first probes: the known switches' TTLs
  // all at once, else TTL 1 (or 2 past a known first hop).
  void Begin(MonoTime now) {
    if (std::string error = io_.Open(request_.tuple, request_.netdev); !error.empty()) {
      result_.error = std::move(error);
      done_ = true;
      return;
    }
    if (!request_.first_hop.IsZero() && max_ttl_ > 1) {
      result_.hops.push_back(Hop{1, request_.first_hop, HopStatus::kTimeExceeded, {}, 0});
      sent_at_.push_back(MonoTime{});
      result_.first_probed_ttl = 2;
      ttl_ = 2;
    }
    known_ = std::min(request_.switch_hops, max_ttl_);
    if (known_ >= ttl_) {
      batch_ = true;
      Queue(ttl_, known_, request_.probe_timeout);
      ttl_ = known_;
    } else {
      Queue(ttl_, ttl_, ReplyWait(request_, result_, ttl_));
    }
    Pump(now);
  }

  // When the run next needs the runner: a paced send or the end of its wait.
  MonoTime deadline() const {
    if (next_send_ <= wait_to_) return next_send_at_;
    return wait_deadline_;
  }

  // Sends what is due and ends the wait when it is over (`force`: as if its
  // deadline had come, for an I/O layer that stopped waiting early).
  void Pump(MonoTime now, bool force = false) {
    while (!done_) {
      if (next_send_ <= wait_to_) {
        if (!force && now < next_send_at_) return;
        force = false;
        if (!Send(next_send_)) return;
        ++next_send_;
        if (next_send_ <= wait_to_) {
          next_send_at_ = request_.min_probe_interval.count() > 0
                              ? last_send_ + request_.min_probe_interval
                              : last_send_;
        } else {
          wait_deadline_ = last_send_ + wait_;
        }
        continue;
      }
      if (!force && now < wait_deadline_ && !AllAnswered(wait_from_, wait_to_)) return;
      force = false;
      Advance();
    }
  }

  // A reply quoting this trace's 5-tuple: fills its hop, or is counted.
  void Take(const ParsedIcmp& parsed, MonoTime received_at) {
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

 private:
  // TTLs [from, to] to send, then await together for `wait` after the last.
  void Queue(int from, int to, std::chrono::nanoseconds wait) {
    next_send_ = wait_from_ = from;
    wait_to_ = to;
    wait_ = wait;
    next_send_at_ = request_.min_probe_interval.count() > 0 && from > result_.first_probed_ttl
                        ? last_send_ + request_.min_probe_interval
                        : MonoTime{};
  }

  bool Send(int ttl) {
    const auto payload = EncodeProbePayload({ttl, request_.generation, request_.session});
    last_send_ = clock_.MonotonicNow();
    if (std::string error = io_.Send(request_.tuple, ttl, payload); !error.empty()) {
      result_.error = "ttl " + std::to_string(ttl) + ": " + error;
      result_.end = TraceEnd::kError;
      done_ = true;
      return false;
    }
    ++result_.probes_sent;
    sent_at_.push_back(last_send_);
    result_.hops.push_back(Hop{ttl, {}, HopStatus::kSilent, {}, 0});
    return true;
  }

  // The wait is over: judge the hops it covered and queue the next probe.
  void Advance() {
    if (batch_) {
      batch_ = false;
      // Every switch as before: the swallowing destination is where it was,
      // since a switch added after the last one would need new cabling to the
      // destination NIC. No probe is spent on it.
      if (request_.destination_swallows && known_ < max_ttl_ && KnownPathConfirmed(known_)) {
        InferDestination(result_, known_ + 1);
        done_ = true;
        return;
      }
      for (int k = 1; k <= known_; ++k) {
        if (EndsAt(k)) {
          done_ = true;
          return;
        }
      }
    } else if (EndsAt(ttl_)) {
      done_ = true;
      return;
    }
    if (++ttl_ > max_ttl_) {
      result_.end = TraceEnd::kOutOfTtl;
      done_ = true;
      return;
    }
    Queue(ttl_, ttl_, ReplyWait(request_, result_, ttl_));
  }

  bool AllAnswered(int from, int to) const {
    for (int ttl = from; ttl <= to; ++ttl) {
      if (!result_.hops[static_cast<std::size_t>(ttl - 1)].answered()) return false;
    }
    return true;
  }

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

  const TraceRequest request_;
  TraceIo& io_;
  const Clock& clock_;
  const TraceIdentity identity_;
  const int max_ttl_;
  TraceResult result_;
  std::vector<MonoTime> sent_at_;
  int ttl_ = 1;    // the hop being probed (the last of a batch)
  int known_ = 0;  // switch hops sent as one batch
  bool batch_ = false;
  bool done_ = false;
  int silent_run_ = 0;
  // The TTLs of the current wait: next_send_..wait_to_ still to send.
  int next_send_ = 1;
  int wait_from_ = 1;
  int wait_to_ = 0;
  std::chrono::nanoseconds wait_{0};
  MonoTime next_send_at_{};
  MonoTime wait_deadline_{};
  MonoTime last_send_{};
};

TraceRunner::TraceRunner(TraceIo& io, const Clock& clock) : io_(io), clock_(clock) {}

TraceRunner::~TraceRunner() = default;

std::size_t TraceRunner::active() const {
  return runs_.size();
}

void TraceRunner::Start(const TraceRequest& request) {
  auto run = std::make_unique<Run>(request, io_, clock_);
  run->Begin(clock_.MonotonicNow());
  runs_.push_back(std::move(run));
}

MonoTime TraceRunner::NextDeadline() const {
  MonoTime next = MonoTime::max();
  for (const auto& run : runs_) next = std::min(next, run->deadline());
  return next;
}

void TraceRunner::Collect(std::vector<TraceResult>& done) {
  for (auto it = runs_.begin(); it != runs_.end();) {
    if ((*it)->done()) {
      done.push_back(std::move((*it)->result()));
      it = runs_.erase(it);
    } else {
      ++it;
    }
  }
}

void TraceRunner::Dispatch(MonoTime received_at) {
  const ParsedIcmp parsed = ParseIcmpPacket(packet_);
  if (parsed.status != ParseStatus::kOk) {
    for (const auto& run : runs_) ++run->result().unparsable_replies;
    return;
  }
  // At most one trace per 5-tuple is under way (the tracer hands a 5-tuple
  // out again only after its result), so the quoted 5-tuple picks the trace.
  for (const auto& run : runs_) {
    if (run->tuple() == parsed.error.quoted.tuple) {
      run->Take(parsed, received_at);
      return;
    }
  }
  // Seen while every trace under way waited: each counts it, as one trace alone would.
  for (const auto& run : runs_) ++run->result().foreign_replies;
}

void TraceRunner::RunUntil(MonoTime until, std::vector<TraceResult>& done) {
  const std::size_t ended_before = done.size();
  MonoTime received_at{};
  for (;;) {
    const MonoTime now = clock_.MonotonicNow();
    for (const auto& run : runs_) run->Pump(now);
    Collect(done);
    if (done.size() > ended_before || runs_.empty() || now >= until) return;
    const MonoTime deadline = std::min(until, NextDeadline());
    if (io_.Receive(deadline, packet_, received_at)) {
      Dispatch(received_at);
      continue;
    }
    // The wait ran out (or the I/O layer stopped waiting): the runs whose
    // deadline it was go on as if it had passed.
    for (const auto& run : runs_) {
      if (run->deadline() <= deadline) run->Pump(clock_.MonotonicNow(), true);
    }
    if (deadline >= until && clock_.MonotonicNow() < until) {
      Collect(done);
      return;
    }
  }
}

TraceResult RunTrace(const TraceRequest& request, TraceIo& io, const Clock& clock) {
  TraceRunner runner(io, clock);
  runner.Start(request);
  std::vector<TraceResult> done;
  while (done.empty()) runner.RunUntil(MonoTime::max(), done);
  return std::move(done.front());
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
