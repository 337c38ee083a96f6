#!/usr/bin/env bash
# Agent overhead on the emulated fabric (issue 3 benchmark): one agent with the
# UDP transport on a host with 8 NICs, at 10 and at 1000 probes/s per NIC.
#
#   bench/agent_overhead.sh [--no-analyzer] [--no-outage] [--no-trace] [--repeat N]
#                           [--settle S] [SECONDS]
#
# Each rate runs one agent: S s of start-up (default 3; 100 measures an agent
# past the tracer's first pass over its pool, about 90 s, as it runs for
# months after), then N windows of SECONDS (default
# 60) in which the process's CPU time is read from /proc (the run time of all
# its threads, split into user and system as the kernel's ticks split it; as %
# of one core; the median and the range of the N windows are printed), and when
# `perf` is installed one more window sampled by perf for the split below (CPU
# is never read while perf samples: its own cost lands on the sampled process).
# Then the same for the kernel floor: bench/agent_overhead_floor.cc opens the
# agent's sockets and makes its system calls at the same rate, and nothing else.
#
# What the CPU figures include. "cpu" is everything the kernel bills to the
# agent. On this fabric that includes forwarding every probe through the
# emulated switches: a veth transmit queues the packet for the receive softirq,
# which runs on the sending CPU when the send system call re-enables bottom
# halves, so each probe's four hops (rail switch, spine, rail switch, the
# destination NIC's stack) run inside the agent's sendto. On a real host the
# NIC and the switches do that work and the receive softirq runs in NAPI
# context after an interrupt. "own" takes out the share of perf samples under
# net_rx_action (the emulated hops and the final socket delivery); it keeps the
# agent's user code, its system calls, the UDP send path down to the device
# (veth_xmit here, a NIC driver there), timestamping, and the wake-ups.
#
# Compared with the floor: the agent's CPU over it in points of one core, and
# the ratio. Per thread name (hm-tracer, hm-upload, hm-grpc-poll,
# hm-telemetry, gRPC's own as grpc, the probe loop as hostmesh-agent) the CPU
# over all windows. With traceroute, the tracer's rate and probes per trace
# over the windows (the first pass over the pool's 5-tuples included).
#
# Memory at the end of the windows, from smaps_rollup: private anonymous
# pages (heap, stacks, the libraries' relocated data: what the agent alone
# costs, the issue's "private"), beside it every private page (anonymous
# plus file pages no other process maps right now: the binary's own text,
# libraries nothing else on the machine has loaded; this moves with what
# else runs), PSS (its share of the pages it maps, shared library text split
# among the processes mapping it) and RSS (every page, shared ones whole),
# and the peak RSS.
#
# The agent runs with the environment its systemd unit sets
# (systemd/hostmesh-agent.service's Environment=: glibc's per-thread malloc
# caches off), as on a host.
#
# A stand-in analyzer (bench/ingest_sink.cc) in the management namespace
# acknowledges every batch, so the agent runs connected and uploading, as in
# production; then a third run at 1000/s with the analyzer gone (the agent
# buffering into its spool and reconnecting), against the floor of the
# second (--no-outage skips it); --no-analyzer measures every rate buffering;
# --no-trace measures probing alone, without the traceroute thread. Needs root and a built tree
# (HOSTMESH_BUILD_DIR, default build/); the fabric's namespace prefix is
# HOSTMESH_FABRIC_PREFIX (default hmbench-), so several runs can coexist.
set -euo pipefail
cd "$(dirname "$0")/.."
analyzer=1 trace=true repeat=1 outage=1 settle=3
while [ $# -gt 0 ]; do
  case "$1" in
    --no-analyzer) analyzer=0; shift ;;
    --no-outage) outage=0; shift ;;  # skip the third run (analyzer gone at 1000/s)
    --no-trace) trace=false; shift ;;  # probing alone, without the traceroute thread
    --repeat) repeat=$2; shift 2 ;;
    --settle) settle=$2; shift 2 ;;  # seconds from the agent's start to the first window
    *) break ;;
  esac
done
duration=${1:-60}
sink=${HOSTMESH_BUILD_DIR:-build}/bench/hostmesh-ingest-sink
agent=${HOSTMESH_BUILD_DIR:-build}/agent/main/hostmesh-agent
floor=${HOSTMESH_BUILD_DIR:-build}/bench/agent_overhead_floor
fabric=deploy/testbed/fabric
export HOSTMESH_FABRIC_PREFIX=${HOSTMESH_FABRIC_PREFIX:-hmbench-}
[ -x "$agent" ] || { echo "bench: build first ($agent missing)" >&2; exit 1; }
mapfile -t agent_env < <(sed -n 's/^Environment=//p' systemd/hostmesh-agent.service)

$fabric down >/dev/null
$fabric up --hosts 2 --rails 8 --spines 4 >/dev/null
tck=$(getconf CLK_TCK)

# CPU of the process: ticks (user system) from /proc/PID/stat, the sum of its
# threads' run time in ns (schedstat: precise, where ticks are 10 ms) and the
# thread ids it was summed over; and the context switches of all its threads.
ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }
runtime() {
  local t ns=0 tids=""
  for t in /proc/"$1"/task/*; do
    ns=$((ns + $(cut -d' ' -f1 "$t/schedstat"))); tids+="${t##*/},"
  done
  echo "$ns $tids"
}
switches() { cat /proc/"$1"/task/*/status | awk '/ctxt_switches/ {s += $2} END {print s}'; }
# "name=ns ..." per thread name (hm-tracer, hm-upload, ...; gRPC's own threads
# summed as grpc), from schedstat.
thread_ns() {
  local t
  for t in /proc/"$1"/task/*; do
    echo "$(cat "$t/comm") $(cut -d' ' -f1 "$t/schedstat")"
  done | awk '{n = $1; if (n ~ /^(grpc|default-exec|resolver-exec|event_engine|timer_manager)/) n = "grpc"
               ns[n] += $2} END {for (n in ns) printf "%s=%.0f ", n, ns[n]}'  # mawk: %d stops at 2^31
}

# Measures process $1: `repeat` windows of CPU (user, system, wake-ups), then a
# perf window for the fabric's share. Prints "median range user system wakeups
# softirq samples" for summarize.
measure() {
  local pid=$1 windows="" i u0 s0 u1 s1 r0 r1 k0 k1 w0 w1 t0 t1 threads0=""
  for ((i = 0; i < repeat; i++)); do
    read -r u0 s0 < <(ticks "$pid"); read -r r0 k0 < <(runtime "$pid")
    w0=$(switches "$pid"); t0=$(date +%s.%N); [ "$i" -eq 0 ] && threads0=$(thread_ns "$pid")
    sleep "$duration"
    read -r u1 s1 < <(ticks "$pid"); read -r r1 k1 < <(runtime "$pid")
    w1=$(switches "$pid"); t1=$(date +%s.%N)
    # The total from the threads' run time unless a thread came or went (its
    # time would be missed); user and system split it as the ticks do.
    windows+="$(awk -v u0="$u0" -v u1="$u1" -v s0="$s0" -v s1="$s1" -v r0="$r0" -v r1="$r1" \
      -v same="$([ "$k0" = "$k1" ] && echo 1 || echo 0)" -v w0="$w0" -v w1="$w1" \
      -v t0="$t0" -v t1="$t1" -v tck="$tck" 'BEGIN {
        secs = t1 - t0; ticked = (u1 - u0 + s1 - s0) / tck
        total = same ? (r1 - r0) / 1e9 : ticked
        user = ticked > 0 ? total * (u1 - u0) / tck / ticked : 0
        printf "%f %f %f\n", user / secs * 100, (total - user) / secs * 100, (w1 - w0) / secs }')"$'\n'
  done
  # Per thread name over all windows, as % of one core.
  local threads1 secs
  threads1=$(thread_ns "$pid")
  secs=$(awk -v n="$repeat" -v d="$duration" 'BEGIN {print n * d}')
  echo "$threads0 | $threads1" | tr ' ' '\n' | awk -v secs="$secs" -F= '
    $0 == "|" {after = 1; next} NF == 2 {if (after) b[$1] = $2; else a[$1] = $2}
    END {for (n in b) printf "%s %.2f%%, ", n, (b[n] - a[n]) / secs / 1e7}' >"$threads_file"
  local softirq="-" samples="-"
  if command -v perf >/dev/null; then
    local perf_data
    perf_data=$(mktemp /tmp/hostmesh-bench.XXXXXX.perf)
    perf record -q -F 2999 -g -p "$pid" -o "$perf_data" -- sleep "$duration" 2>/dev/null
    softirq=$(perf report -i "$perf_data" --children --sort symbol -g none --stdio 2>/dev/null |
      awk '/\] net_rx_action/ {sub("%", "", $1); print $1; exit}' || true)
    samples=$(perf report -i "$perf_data" --stdio 2>/dev/null | awk '/^# Samples:/ {print $3; exit}' || true)
    rm -f "$perf_data"
  fi
  echo "$windows" | awk -v softirq="${softirq:--}" -v samples="${samples:--}" '
    NF == 3 {n++; cpu[n] = $1 + $2; user += $1; sys += $2; wake += $3}
    END {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && cpu[j] < cpu[j - 1]; j--) {
        t = cpu[j]; cpu[j] = cpu[j - 1]; cpu[j - 1] = t
      }
      median = n % 2 ? cpu[(n + 1) / 2] : (cpu[n / 2] + cpu[n / 2 + 1]) / 2
      print median, cpu[1], cpu[n], user / n, sys / n, wake / n, softirq, samples }'
}

# One line from measure's figures: $1 label, $2 the figures.
summarize() {
  echo "$2" | awk -v label="$1" -v n="$repeat" '{
    range = n > 1 ? sprintf(" (median of %d windows, %.2f..%.2f)", n, $2, $3) : ""
    own = "own n/a (no perf)"
    if ($7 != "-") own = sprintf("own %.2f%% (fabric softirq, %.0f%% of %s samples, taken out)",
                                 $1 * (1 - $7 / 100), $7, $8)
    printf "%-22s cpu %.2f%%%s: user %.2f%%, system %.2f%%; %s\n", label, $1, range, $4, $5, own }'
}

# Trace runs and targets from the agent's /metrics: "runs targets".
trace_metrics() {
  $fabric exec h000 -- curl -s "http://$listen:9100/metrics" | awk '
    /^hostmesh_agent_trace_runs_total/ {r = $2} /^hostmesh_agent_trace_targets/ {t = $2}
    /^hostmesh_agent_probes_sent_total/ {s += $2} /^hostmesh_agent_probes_timeouts_total/ {l += $2}
    /^hostmesh_agent_trace_probes_sent_total/ {p = $2}
    /^hostmesh_agent_error_queue_messages_total/ {e += $2}
    END {printf "%d %d %d %d %d %d\n", r, t, s, l, p, e}'
}

# Private anonymous kB of process $1 once a second until killed, one per
# line: the window's peak (a pool's rotation holds more for a few seconds).
anon_samples() {
  while awk '/^Anonymous:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null; do sleep 1; done
}

# Memory of process $1 now, from smaps_rollup: "rss pss private anonymous"
# in kB (private = clean + dirty pages no other process maps). With
# HOSTMESH_BENCH_SMAPS=DIR, the anonymous kB of each mapping go to
# DIR/smaps-<pid>.txt, largest first: where the memory is.
memory() {
  if [ -n "${HOSTMESH_BENCH_SMAPS:-}" ]; then
    mkdir -p "$HOSTMESH_BENCH_SMAPS"
    # Unnamed mappings apart, with their size: a thread's stack is 8 MB
    # (8192 kB), a malloc arena's heap 64 MB.
    awk '/^[0-9a-f]+-[0-9a-f]+ / {name = (NF >= 6 ? $6 : "[anon]"); n++}
         /^Size:/ && name == "[anon]" {name = "[anon " n ": " $2 " kB]"}
         /^Anonymous:/ && $2 > 0 {a[name] += $2}
         END {for (n in a) print a[n], n}' "/proc/$1/smaps" | sort -rn \
      >"$HOSTMESH_BENCH_SMAPS/smaps-$1.txt"
  fi
  awk '/^Rss:/ {r = $2} /^Pss:/ {p = $2} /^Private_(Clean|Dirty):/ {v += $2} /^Anonymous:/ {a = $2}
       END {print r, p, v, a}' "/proc/$1/smaps_rollup"
}

# $1 probe interval, $2 interval in ns, $3 label, $4 "analyzer" or "none",
# $5 floor figures to compare with (empty: measure the floor after the agent).
# Sets floor_figures to the floor it compared with.
run() {
  local cfg pid figures
  cfg=$(mktemp /tmp/hostmesh-bench.XXXXXX.yaml)
  $fabric agent-config h000 | sed -e "s/^  interval: .*/  interval: $1/" \
    -e "/^traceroute:/,/^[a-z]/ s/^  enabled: .*/  enabled: $trace/" >"$cfg"
  listen=$(sed -n 's/^  listen: \(.*\):9100$/\1/p' "$cfg")
  if [ "$4" = analyzer ] && [ -z "$sink_pid" ]; then
    $fabric exec mgmt -- "$sink" 198.19.128.1:50051 &
    sink_pid=$!
    sleep 0.5
  elif [ "$4" = none ] && [ -n "$sink_pid" ]; then
    kill -TERM "$sink_pid"; wait "$sink_pid" >/dev/null || true
    sink_pid=""
  fi
  $fabric exec h000 -- env "${agent_env[@]}" "$agent" --config "$cfg" --log-level error &
  pid=$!
  sleep "$settle"  # start-up (sockets, first pool, the tracer's first pass) is not steady state
  local runs0 targets sent lost runs1 t0 t1 tprobes0 tprobes1 errq
  read -r runs0 targets _ _ tprobes0 _ < <(trace_metrics); t0=$(date +%s.%N)
  local samples_file sampler anon_peak
  samples_file=$(mktemp /tmp/hostmesh-bench.XXXXXX.anon)
  anon_samples "$pid" >"$samples_file" &
  sampler=$!
  figures=$(measure "$pid")
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  anon_peak=$(sort -n "$samples_file" | tail -1); rm -f "$samples_file"
  read -r runs1 targets sent lost tprobes1 errq < <(trace_metrics); t1=$(date +%s.%N)
  local threads mem hwm
  threads=$(cat "$threads_file")
  mem=$(memory "$pid")
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  local nthreads verbs fds
  nthreads=$(awk '/Threads/ {print $2}' "/proc/$pid/status")
  fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
  verbs=$(grep -qE 'libibverbs|libnl-3' "/proc/$pid/maps" && echo "mapped" || echo "not mapped")
  kill -TERM "$pid"; wait "$pid" || true
  summarize "$3" "$figures"
  echo "$figures $mem" | awk -v threads="$nthreads" -v hwm="$hwm" -v sent="$sent" -v lost="$lost" \
    -v anon_peak="${anon_peak:-0}" '{
    printf "%-22s %d threads, %.1f wake-ups/s; private anonymous %.2f MB (at most %.2f MB in the window; all private %.1f MB), PSS %.1f MB, RSS %.1f MB (peak %.1f MB); sent %d, timed out %d\n",
           "", threads, $6, $12 / 1024, anon_peak / 1024, $11 / 1024, $10 / 1024, $9 / 1024, hwm / 1024, sent, lost }'
  printf "%-22s by thread: %s; libibverbs/libnl %s\n" "" "${threads%, }" "$verbs"
  # ICMP errors for probes (and other error-queue messages) since the start,
  # and the open descriptors: what grows with uptime, if anything.
  printf "%-22s error-queue messages %d since start; %d open descriptors\n" "" "$errq" "$fds"
  if [ "$trace" = true ]; then
    # The windows start S s in: with the default 3, the first pass over the
    # pool (as fast as the budget allows) is in them, then rotated-in ports
    # and refreshes as they fall due; so this is the average demand, not the
    # budget's capacity.
    awk -v r0="$runs0" -v r1="$runs1" -v n="$targets" -v t0="$t0" -v t1="$t1" \
      -v p0="$tprobes0" -v p1="$tprobes1" 'BEGIN {
      rate = (r1 - r0) / (t1 - t0)
      per = r1 > r0 ? (p1 - p0) / (r1 - r0) : 0
      printf "%-22s tracer: %.2f traces/s, %.2f probes each, over %d 5-tuples\n",
             "", rate, per, n }'
  fi
  floor_figures=$5
  if [ -z "$floor_figures" ] && [ -x "$floor" ]; then
    # The same NICs, rate and rounds with nothing but the system calls.
    local nics
    nics=$(awk '/^  - name:/ {ip = ""; dev = ""} /^    ip:/ {ip = $2} /^    netdev:/ {dev = $2}
                ip != "" && dev != "" {printf "%s=%s ", dev, ip; ip = ""; dev = ""}' "$cfg")
    # shellcheck disable=SC2086  # one argument per NIC
    $fabric exec h000 -- "$floor" "$2" $nics &
    pid=$!
    sleep 3
    floor_figures=$(measure "$pid")
    kill -TERM "$pid"; wait "$pid" || true
    summarize "  kernel floor" "$floor_figures"
  fi
  if [ -n "$floor_figures" ]; then
    echo "$figures|$floor_figures" | awk -F'|' '{
      split($1, a, " "); split($2, f, " ")
      printf "%-22s over the floor: %+.2f points of one core, %.2f times the floor (%.2f%% against %.2f%%)\n",
             "", a[1] - f[1], (f[1] > 0 ? a[1] / f[1] : 0), a[1], f[1] }'
  fi
  rm -f "$cfg"
}

threads_file=$(mktemp /tmp/hostmesh-bench.XXXXXX.threads)
sink_pid=""
cleanup() {
  [ -n "$sink_pid" ] && kill -TERM "$sink_pid" 2>/dev/null
  rm -f "$threads_file"
  $fabric down >/dev/null
}
trap cleanup EXIT
mode=$([ "$analyzer" -eq 1 ] && echo "uploading to a stand-in analyzer" || echo "no analyzer")
connected=$([ "$analyzer" -eq 1 ] && echo analyzer || echo none)
echo "agent overhead, 8 NICs, UDP transport, $mode, traceroute $trace, ${repeat} x ${duration} s per rate after ${settle} s"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
run 100ms 100000000 "10 probes/s per NIC" "$connected" ""
run 1ms 1000000 "1000 probes/s per NIC" "$connected" ""
if [ "$analyzer" -eq 1 ] && [ "$outage" -eq 1 ]; then
  # The same agent with its analyzer gone (buffering into the spool), against
  # the floor just measured: an outage must not raise its cost.
  run 1ms 1000000 "1000/s, no analyzer" none "$floor_figures"
fi
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
