#!/usr/bin/env python3
"""Instructions per probe of each part of the agent, from callgrind's per-thread files.

    bench/instructions_parts.py --dir DIR [--dump N] [--scrapes K] [--seconds S]
                                [--top T] [--out FILE]

Reads the files `callgrind.out.PID.N-TT` of dump N (default 1) that
bench/agent_instructions.sh made with --separate-threads=yes (one per thread),
runs `callgrind_annotate --inclusive=yes --threshold=100` on each (and once
without --inclusive, for the self costs), and prints instructions (Ir) per
probe for each part of the agent, the total over all threads, and the
metrics server's cost per scrape.

How it counts:
- A thread is named by the loop function it runs (valgrind's thread numbers
  are not the kernel's and are reused): AgentApp::Run is the probe loop (the
  main thread), Uploader::Run hm-upload, PathTracer::Run hm-tracer,
  TelemetryThread::Run hm-telemetry, GrpcUploadChannel::Poll hm-grpc-poll,
  http::Server::Impl::Housekeep the metrics server's housekeeper, code of
  libmicrohttpd the metrics server's MHD thread (it serves the scrapes);
  threads running only gRPC's libraries (executor, timer, event engine,
  certificate watcher) are gRPC's own.
- A function's inclusive cost is the largest of the entries callgrind_annotate
  prints for that name: code inlined from headers shows as extra entries of
  the same function with another file, nested inside the one that holds the
  function's entry (the one with the [object] suffix).
- Probes: the calls to UdpTransport::Send in the window, results: the calls
  to AgentApp::OnResult, counted exactly from the `calls=` lines of the raw
  files (the agent's /metrics count the same over a slightly longer span).
- A part that calls into another part is counted once: the tracker's cost is
  without the result sink it calls (AgentApp::OnResult, the result path), the
  prober's "other" is Prober::RunOnce less every part listed under it.

The key=value summary (--out) has one line per figure: parts as
ir_per_probe.<part>, totals as ir_per_probe.total and ir.total, the scrape as
ir_per_scrape.metrics_server, and the counts (probes, results, batches,
scrapes, seconds).
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
from collections import defaultdict

COST_LINE = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$")
OBJECT_SUFFIX = re.compile(r"^(.*) \[(/[^\]]*)\]$")


class Profile:
    """One thread's costs: total, inclusive and self per function name."""

    def __init__(self, path: str):
        self.path = path
        self.total = 0
        self.incl: dict[str, int] = {}
        self.self_cost: dict[str, int] = defaultdict(int)
        self.objects: dict[str, str] = {}
        self.calls: dict[str, int] = defaultdict(int)
        self._read_annotate(inclusive=True)
        self._read_annotate(inclusive=False)
        self._read_calls()

    def _annotate_lines(self, inclusive: bool):
        args = ["callgrind_annotate", "--threshold=100", "--auto=no"]
        if inclusive:
            args.append("--inclusive=yes")
        out = subprocess.run(args + [self.path], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            m = COST_LINE.match(line)
            if m:
                yield int(m.group(1).replace(",", "")), m.group(2)

    def _read_annotate(self, inclusive: bool) -> None:
        for cost, what in self._annotate_lines(inclusive):
            if what.startswith("PROGRAM TOTALS"):
                self.total = cost
                continue
            obj = ""
            m = OBJECT_SUFFIX.match(what)
            if m:
                what, obj = m.group(1), m.group(2)
            # file:function; file names have no ':', C++ names do.
            _, _, fn = what.partition(":")
            fn = re.sub(r"'\d+$", "", fn)  # callgrind's recursion-depth suffix
            if inclusive:
                if cost > self.incl.get(fn, -1):
                    self.incl[fn] = cost
                if obj:
                    self.objects.setdefault(fn, obj)
            else:
                self.self_cost[fn] += cost

    def _read_calls(self) -> None:
        """Call counts per callee from the raw file (`cfn=` then `calls=`)."""
        names: dict[str, str] = {}
        target = None
        with open(self.path, errors="replace") as f:
            for line in f:
                if line.startswith(("fn=", "cfn=")):
                    key, _, rest = line.rstrip("\n").partition("=")
                    m = re.match(r"\((\d+)\)(?: (.*))?$", rest)
                    if m:
                        if m.group(2) is not None:
                            names[m.group(1)] = m.group(2)
                        name = names.get(m.group(1), "?" + m.group(1))
                    else:
                        name = rest
                    if key == "cfn":
                        target = name
                elif line.startswith("calls=") and target is not None:
                    self.calls[target] += int(line[6:].split()[0])
                    target = None

    def has(self, prefix: str) -> bool:
        return any(fn.startswith(prefix) for fn in self.incl)

    def inc(self, *prefixes: str) -> int:
        """Sum of inclusive costs of the functions whose names start with one
        of the prefixes (each name counted once)."""
        return sum(c for fn, c in self.incl.items() if fn.startswith(prefixes))

    def ncalls(self, *prefixes: str) -> int:
        return sum(n for fn, n in self.calls.items() if fn.startswith(prefixes))

    def uses_object(self, *needles: str) -> bool:
        return any(any(n in obj for n in needles) for obj in self.objects.values())


NS = "hostmesh::agent::"
THREAD_LOOPS = [
    ("probe loop", NS + "app::AgentApp::Run("),
    ("hm-upload", NS + "upload::Uploader::Run("),
    ("hm-tracer", NS + "app::PathTracer::Run("),
    ("hm-telemetry", NS + "app::TelemetryThread::Run("),
    ("hm-grpc-poll", NS + "upload::GrpcUploadChannel::Poll("),
    ("metrics housekeeper", "hostmesh::http::Server::Impl::Housekeep("),
    ("metrics server", "hostmesh::http::Server::Impl::OnRequest("),
]


def classify(p: Profile) -> str:
    for name, loop in THREAD_LOOPS:
        if p.has(loop):
            return name
    if p.uses_object("libmicrohttpd"):
        return "metrics server"
    if p.total == 0:
        return "idle"
    if p.uses_object("libgrpc", "libgpr", "libabsl") or p.has("grpc"):
        return "grpc own"
    return "other"


def probe_loop_parts(p: Profile) -> list[tuple[str, int, int]]:
    """(label, depth, Ir) of the probe loop's parts, without double counting."""
    inc = p.inc
    run_once = inc(NS + "Prober::RunOnce(")
    sched = inc(NS + "Scheduler::PopDue(", NS + "Scheduler::NextDue(")
    encode = inc(NS + "EncodeProbe(")
    send = inc(NS + "udp::UdpTransport::Send(")
    receive = inc(NS + "udp::UdpTransport::Poll(", NS + "udp::UdpTransport::Reclaim(")
    decode = inc(NS + "DecodeProbe(")
    tracker_gross = inc(*(NS + "Tracker::" + f + "(" for f in
                          ("OnSend", "OnReceive", "OnSendTimestamp", "OnSendFailed", "Poll",
                           "NextDeadline")))
    sink = inc(NS + "app::AgentApp::OnResult(")
    tracker = tracker_gross - sink
    prober_other = run_once - sched - encode - send - receive - decode - tracker_gross
    metrics = inc(NS + "app::AgentMetrics::ObserveResult(")
    # A loop turn's results go to the recorder and the uploader at once
    # (AgentApp::UploadResults, inlined into Run), one lock each.
    recorder = inc(NS + "recorder::FlightRecorder::RecordProbes(",
                   NS + "recorder::FlightRecorder::RecordProbe(")
    retrace = inc(NS + "wiring::TraceFeed::RetraceFor(")
    batch = inc(NS + "upload::Uploader::AppendResults(")
    publish = inc(NS + "app::AgentApp::Publish(")
    ports = inc(NS + "app::AgentApp::PrepareSourcePorts(")
    targets = inc(NS + "app::AgentApp::HandTraceTargets(")
    loop_other = p.total - run_once - batch - recorder - publish - ports - targets
    return [
        ("probe loop (main thread), all", 0, p.total),
        ("probing: Prober::RunOnce less the result sink", 1, run_once - sink),
        ("scheduler (Scheduler::PopDue, NextDue)", 2, sched),
        ("encode (EncodeProbe)", 2, encode),
        ("send (UdpTransport::Send: sendto)", 2, send),
        ("receive (UdpTransport::Poll: epoll, recvmmsg, error queue)", 2, receive),
        ("decode (DecodeProbe)", 2, decode),
        ("tracker (Tracker::On*, Poll, NextDeadline)", 2, tracker),
        ("prober's own (dispatch, clock, loop)", 2, prober_other),
        ("result path", 1, sink + recorder + batch),
        ("sink AgentApp::OnResult", 2, sink),
        ("result metrics (AgentMetrics::ObserveResult)", 3, metrics),
        ("retrace check (TraceFeed::RetraceFor)", 3, retrace),
        ("rest of OnResult (results_ vector)", 3, sink - metrics - retrace),
        ("flight recorder (FlightRecorder::RecordProbes)", 2, recorder),
        ("batch append (Uploader::AppendResults: packed records)", 2, batch),
        ("loop upkeep", 1, publish + ports + targets + loop_other),
        ("Publish (metrics snapshot)", 2, publish),
        ("PrepareSourcePorts + HandTraceTargets", 2, ports + targets),
        ("ppoll, clock, rest of Run", 2, loop_other),
    ]


def uploader_parts(p: Profile) -> list[tuple[str, int, int]]:
    inc = p.inc
    write = inc(NS + "upload::GrpcUploadChannel::Write(")
    serialize = inc("grpc::Status grpc::GenericSerialize<")
    tls = inc("tsi_frame_protector_protect(", "tsi_frame_protector_protect_flush(")
    engine = inc(NS + "upload::UploadEngine::Poll(", NS + "upload::UploadEngine::Handle(")
    spool = inc(NS + "upload::Spool::MemoryBytes(")
    bytesize = inc("hostmesh::v1::UploadBatch::ByteSizeLong(")
    return [
        ("uploader (hm-upload), all", 0, p.total),
        ("GrpcUploadChannel::Write", 1, write),
        ("serialization (GenericSerialize: 2x ByteSizeLong, serialize, copy)", 2,
         serialize),
        ("gRPC call and transport (Write less serialization)", 2, write - serialize),
        ("of which TLS encryption (tsi_frame_protector_protect*)", 3, tls),
        ("UploadEngine::Poll/Handle (batching, spool)", 1, engine),
        ("of which Spool::MemoryBytes (arena size, no walk)", 2, spool),
        ("rest (inbox, locks, waits)", 1, p.total - write - engine),
        ("UploadBatch::ByteSizeLong, all calls (inside the above)", 1, bytesize),
    ]


def tracer_parts(p: Profile) -> list[tuple[str, int, int]]:
    inc = p.inc
    sink = inc("std::_Function_handler<void (hostmesh::tracer::PathReport const&)")
    to_proto = inc(NS + "upload::ToProto(hostmesh::tracer::PathReport const&)")
    append = inc(NS + "upload::Uploader::Append(hostmesh::v1::PathReport const&)")
    record = inc(NS + "recorder::FlightRecorder::RecordPath(")
    next_trace = inc("hostmesh::tracer::ContinuousTracer::NextTrace(")
    run = inc("hostmesh::tracer::TraceRunner::RunUntil(", "hostmesh::tracer::TraceRunner::Start(")
    done = inc("hostmesh::tracer::ContinuousTracer::OnTraceDone(")
    return [
        ("tracer (hm-tracer), all", 0, p.total),
        ("scheduling (ContinuousTracer::NextTrace)", 1, next_trace),
        ("tracing (TraceRunner::Start, RunUntil: send, ICMP receive)", 1, run),
        ("trace done (ContinuousTracer::OnTraceDone)", 1, done),
        ("report sink (to the uploader and the recorder)", 1, sink),
        ("ToProto(PathReport)", 2, to_proto),
        ("Uploader::Append(PathReport) (batch copy)", 2, append),
        ("FlightRecorder::RecordPath", 2, record),
        ("rest", 1, p.total - next_trace - run - done - sink),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--dump", type=int, default=1, help="callgrind dump number (1)")
    ap.add_argument("--scrapes", type=int, default=0, help="/metrics scrapes in the window")
    ap.add_argument("--seconds", type=float, default=0.0, help="window length, for rates")
    ap.add_argument("--top", type=int, default=12, help="top functions listed per thread")
    ap.add_argument("--out", help="key=value summary file")
    args = ap.parse_args()

    files = sorted(glob.glob(os.path.join(args.dir, f"callgrind.out.*.{args.dump}-*")))
    if not files:
        print(f"instructions_parts: no callgrind.out.*.{args.dump}-* in {args.dir}",
              file=sys.stderr)
        return 1
    threads: dict[str, list[Profile]] = defaultdict(list)
    for path in files:
        p = Profile(path)
        threads[classify(p)].append(p)

    mains = threads.get("probe loop", [])
    if len(mains) != 1:
        print(f"instructions_parts: {len(mains)} probe loop threads found", file=sys.stderr)
        return 1
    main_p = mains[0]
    probes = main_p.ncalls(NS + "udp::UdpTransport::Send(")
    results = main_p.ncalls(NS + "app::AgentApp::OnResult(")
    if probes == 0:
        print("instructions_parts: no probe sent in the window", file=sys.stderr)
        return 1
    up = threads.get("hm-upload", [])
    batches = sum(p.ncalls(NS + "upload::GrpcUploadChannel::Write(") for p in up)
    tr = threads.get("hm-tracer", [])
    reports = sum(p.ncalls("std::_Function_handler<void (hostmesh::tracer::PathReport const&)")
                  for p in tr)

    summary: list[tuple[str, float]] = [
        ("probes", probes), ("results", results), ("batches", batches),
        ("trace_reports", reports), ("scrapes", args.scrapes), ("seconds", args.seconds)]
    width = 74

    def row(label: str, depth: int, ir: float, per: float, unit: str = "/probe") -> None:
        text = "  " * depth + label
        rate = f", {ir / args.seconds:,.0f} Ir/s" if args.seconds else ""
        print(f"{text:<{width}} {ir / per:>10,.0f} {unit}  ({ir:,.0f} Ir{rate})")

    def section(title: str, parts: list[tuple[str, int, int]], key: str) -> None:
        print(title)
        for label, depth, ir in parts:
            row(label, depth + 1, ir, probes)
        for label, depth, ir in parts:
            slug = re.sub(r"[^a-z0-9]+", "_", label.split(" (")[0].lower()).strip("_")
            summary.append((f"ir_per_probe.{key}.{slug}", ir / probes))

    rate = f", {probes / args.seconds:,.0f}/s" if args.seconds else ""
    print(f"window: {probes:,} probes sent{rate}, {results:,} results, {batches:,} batches "
          f"uploaded, {reports:,} path reports, {args.scrapes} scrapes of /metrics")
    print(f"{'part':<{width}} {'Ir':>10} per probe  (Ir in the window, per second)")
    section("probe loop", probe_loop_parts(main_p), "loop")
    for p in up:
        section("uploader", uploader_parts(p), "upload")
    for p in tr:
        section("tracer", tracer_parts(p), "tracer")

    def thread_sum(name: str) -> int:
        return sum(p.total for p in threads.get(name, []))

    print("other threads")
    for name, label in [("hm-grpc-poll", "gRPC poller (hm-grpc-poll: acks, TLS decrypt, flow control)"),
                        ("grpc own", "gRPC's own threads (executor, timers, event engine, "
                                     "certificate watcher)"),
                        ("hm-telemetry", "telemetry sampler (hm-telemetry)"),
                        ("metrics housekeeper", "metrics server housekeeper"),
                        ("other", "other threads")]:
        ir = thread_sum(name)
        row(label, 1, ir, probes)
        summary.append((f"ir_per_probe.thread.{name.replace(' ', '_').replace('-', '_')}",
                        ir / probes))
    server = thread_sum("metrics server")
    total = sum(p.total for ps in threads.values() for p in ps)
    row("TOTAL, all threads, scrapes excluded", 0, total - server, probes)
    row(f"TOTAL, all threads, with the window's {args.scrapes} scrapes", 0, total, probes)
    if args.scrapes:
        ms = threads.get("metrics server", [])
        trim = sum(p.inc("malloc_trim") for p in ms)
        print(f"{'metrics server (MHD thread) per scrape of /metrics':<{width}} "
              f"{server / args.scrapes:>10,.0f} /scrape  (of which malloc_trim "
              f"{trim / args.scrapes:,.0f})")
        summary.append(("ir_per_scrape.metrics_server", server / args.scrapes))
        summary.append(("ir_per_scrape.malloc_trim", trim / args.scrapes))
    summary.append(("ir_per_probe.total", (total - server) / probes))
    summary.append(("ir_per_probe.total_with_scrapes", total / probes))
    summary.append(("ir.total", total - server))
    summary.append(("ir.metrics_server", server))
    per_thread = ", ".join(f"{name} {len(ps)}" for name, ps in sorted(threads.items()))
    print(f"threads: {per_thread}")

    if args.top:
        print(f"\ntop {args.top} functions per thread (Ir per probe; inclusive, then self)")
        for name, ps in sorted(threads.items()):
            for p in ps:
                if p.total == 0:
                    continue
                per = probes if name != "metrics server" or not args.scrapes else args.scrapes
                unit = "/probe" if per == probes else "/scrape"
                print(f"-- {name} ({os.path.basename(p.path)}): {p.total / per:,.0f} {unit}")
                incl = sorted(p.incl.items(), key=lambda kv: -kv[1])
                for fn, ir in incl[:args.top]:
                    print(f"   incl {ir / per:>10,.1f}  {fn[:150]}")
                for fn, ir in sorted(p.self_cost.items(), key=lambda kv: -kv[1])[:args.top]:
                    print(f"   self {ir / per:>10,.1f}  {fn[:150]}")

    if args.out:
        with open(args.out, "a") as f:
            for key, value in summary:
                f.write(f"{key}={value:.1f}\n" if isinstance(value, float) else f"{key}={value}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
