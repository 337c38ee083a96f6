#include "sim/host_agent.h"

#include <algorithm>

#include "agent/upload/wire_messages.h"
#include "agent/wiring/options_from_config.h"
#include "common/config/value_parsers.h"
#include "tracer/trace_engine.h"

namespace hostmesh::sim {
namespace {

std::uint64_t Mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  agent::Rng rng(seed ^ (a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL));
  rng.Next();
  return rng.Next() | 1;
}

// Receives ready within this long after the first one are read in one turn,
// as the agent drains a socket (recvmmsg) or a CQ: the tracker only uses the
// turn's time for deadlines, and the timestamps are the packets' own.
constexpr std::int64_t kReceiveCoalesceNs = 1'000'000;

}  // namespace

HostAgent::HostAgent(std::uint32_t host, const PacketModel& model, const AgentSettings& settings,
                     IcmpModel icmp, std::int64_t wall_offset_ns, std::uint64_t seed)
    : host_(host),
      model_(model),
      settings_(settings),
      icmp_(icmp),
      wall_offset_ns_(wall_offset_ns),
      seed_(seed),
      clock_(wall_offset_ns) {
  const std::vector<Fault>& faults = model_.faults().faults();
  if (std::any_of(faults.begin(), faults.end(),
                  [](const Fault& f) { return HasLossLimit(f.kind); })) {
    exposure_.resize(faults.size());
  }
  const FleetHost& h = model_.fleet().hosts()[host_];
  const topology::Topology& topo = model_.fleet().topology();
  config_.host = h.name;
  config_.agent_id = h.name;
  config_.probe = settings_.probe;
  config_.ports = settings_.ports;
  config_.traceroute = settings_.traceroute;
  for (std::size_t i = 0; i < h.nic_ips.size(); ++i) {
    agent::NicConfig nic;
    const topology::Link& link = topo.link(h.nic_links[i]);
    nic.name = topo.interface(link.lower).name;
    nic.netdev = nic.name;
    nic.rail = h.rails[i];
    nic.ip = *config::ParseIpAddress(h.nic_ips[i].ToString());
    config_.nics.push_back(std::move(nic));
  }
}

void HostAgent::Stop() {
  prober_.reset();
  transport_.reset();
  tracker_.reset();
  scheduler_.reset();
  tracer_.reset();
  trace_io_.reset();
  trace_clock_.reset();
  in_flight_.reset();
}

void HostAgent::Start(std::int64_t at_ns) {
  Stop();
  ++boots_;
  boot_id_ = Mix(seed_, host_, boots_);
  clock_.Set(AtNs(std::max(at_ns, clock_.ns())));
  const MonoTime now = clock_.MonotonicNow();
  const agent::wiring::CoreOptions core = agent::wiring::CoreOptionsFrom(config_);
  scheduler_ =
      std::make_unique<agent::Scheduler>(core.scheduler, now, Mix(seed_, host_, boots_ + 1));
  tracker_ = std::make_unique<agent::Tracker>(core.tracker, [this](const agent::ProbeResult& r) {
    if (out_ != nullptr) out_->results.push_back(r);
    // As the agent's OnResult: a lost probe brings its 5-tuple's trace forward.
    if (!tracer_) return;
    const auto tuple = trace_feed_.RetraceFor(r);
    if (tuple && tracer_->RetraceSoon(*tuple)) {
      tracer_wake_ = std::min(tracer_wake_, clock_.MonotonicNow());
    }
  });
  transport_ = std::make_unique<SimTransport>(host_, model_, clock_, wall_offset_ns_,
                                              Mix(seed_, host_, boots_ + 2), &exposure_);
  agent::upload::HelloInputs hello;
  hello.boot_id = boot_id_;
  hello.transport = agent::Transport::kUdp;
  hello.agent_version = "hostmesh-sim";
  hello.start_time_ns = clock_.RealtimeNow().time_since_epoch().count();
  hello.traceroute = config_.traceroute.enabled;
  for (agent::NicId nic = 0; nic < config_.nics.size(); ++nic) {
    hello.capabilities.push_back(transport_->OpenNic(nic).capabilities);
  }
  hello_ = agent::upload::BuildHello(config_, hello);
  agent::ProberOptions options;
  options.payload_bytes = config_.probe.payload_bytes;
  options.boot_id = boot_id_;
  prober_ = std::make_unique<agent::Prober>(*scheduler_, *tracker_, *transport_, clock_, options);
  prober_wake_ = now;
  trace_feed_.Reset();

  if (config_.traceroute.enabled) {
    trace_clock_ = std::make_unique<VirtualClock>(now, clock_.RealtimeNow());
    trace_io_ = std::make_unique<SimTraceIo>(host_, model_, icmp_, *trace_clock_,
                                             Mix(seed_, host_, boots_ + 3));
    tracer::ContinuousConfig tracing =
        agent::wiring::ContinuousConfigFrom(config_, static_cast<std::uint32_t>(boot_id_));
    // The simulated host runs one trace at a time, each when it falls due:
    // the agent's gathering saves wake-ups, which the simulation does not
    // count, and would only move its traces by up to a second.
    tracing.gather = std::chrono::nanoseconds{0};
    tracing.max_in_flight = 1;
    tracer_ = std::make_unique<tracer::ContinuousTracer>(std::move(tracing), clock_);
    hints_ = {};
    tracer_wake_ = now;
  }
  RefreshTraceTargets();
}

void HostAgent::RefreshTraceTargets() {
  if (!tracer_) return;
  std::optional<std::vector<tracer::TraceTarget>> targets =
      trace_feed_.TargetsIfRotated(*scheduler_);
  if (!targets) return;
  tracer_->SetTargets(std::move(*targets));
  // As the agent's tracer thread, woken by new targets: the ports rotated in
  // are due now, not when the tracer last planned to wake (a refresh minutes
  // away), or they would go untraced until then.
  tracer_wake_ = std::min(tracer_wake_, clock_.MonotonicNow());
}

void HostAgent::RunUntil(std::int64_t end_ns, HostOutput& out) {
  if (hello_) {
    out.hello = std::move(hello_);
    hello_.reset();
  }
  out.boot_id = boot_id_;
  if (!prober_) return;
  out_ = &out;
  const MonoTime end = AtNs(end_ns);
  for (;;) {
    MonoTime next = prober_wake_;
    const MonoTime event = transport_->NextEventTime();
    if (event != MonoTime::max()) {
      next = std::min(next, event + std::chrono::nanoseconds{kReceiveCoalesceNs});
    }
    if (tracer_) next = std::min(next, in_flight_ ? in_flight_done_ : tracer_wake_);
    if (next >= end) break;
    next = std::max(next, clock_.MonotonicNow());
    clock_.Set(next);

    if (in_flight_ && in_flight_done_ <= next) {
      if (auto report = tracer_->OnTraceDone(*in_flight_)) {
        agent::upload::ToProto(*report, out.wire_paths.Add());
        if (out.keep_paths) out.paths.push_back(std::move(*report));
      }
      in_flight_.reset();
      tracer_wake_ = next;
    }
    if (tracer_ && !in_flight_ && tracer_wake_ <= next) {
      MonoTime wake = MonoTime::max();
      std::optional<tracer::TraceRequest> request = tracer_->NextTrace(wake);
      if (request) {
        if (request->switch_hops == 0) request->switch_hops = hints_.For(request->tuple);
        if (trace_clock_->MonotonicNow() < next) trace_clock_->AdvanceTo(next);
        tracer::TraceResult result = tracer::RunTrace(*request, *trace_io_, *trace_clock_);
        hints_.Learn(result);
        in_flight_ = std::move(result);
        in_flight_done_ =
            std::max(trace_clock_->MonotonicNow(), next + std::chrono::nanoseconds{1});
      } else {
        tracer_wake_ =
            std::max(wake, next + std::chrono::nanoseconds{agent::wiring::kTracerMinWait});
      }
    }
    if (prober_wake_ <= next || transport_->NextEventTime() <= next) {
      prober_wake_ = std::max(prober_->RunOnce(), next);
      RefreshTraceTargets();
    }
  }
  clock_.Set(std::max(clock_.MonotonicNow(), end - std::chrono::nanoseconds{1}));
  out_ = nullptr;
}

std::size_t HostAgent::MemoryBytes() const {
  return tracker_ ? tracker_->MemoryBytes() : 0;
}

}  // namespace hostmesh::sim
