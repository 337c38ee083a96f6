#!/usr/bin/env bash
# Agent overhead on the emulated fabric (issue 3 benchmark): one agent with the
# UDP transport on a host with 8 NICs, at 10 and at 1000 probes/s per NIC, each
# for DURATION seconds (default 60). Prints CPU (% of one core over the run, from
# /proc/PID/stat: user, system, total), peak RSS (VmHWM) and private memory
# (RssAnon; the rest of RSS is shared library pages). Needs root and a built
# tree (scripts/build.sh). A stand-in analyzer (bench/ingest_sink.cc) in the
# management namespace acknowledges every batch, so the agent runs connected
# and uploading, as in production; --no-analyzer measures it buffering instead.
# Caveat: veth forwarding through the emulated switches runs in the sender's
# system calls, so "system" includes work a real NIC and fabric would do. When
# `perf` is installed the run is also sampled and the share spent in receive
# softirq (net_rx_action: every emulated hop and the final delivery, which a
# real host runs in NAPI context, not in the agent) is taken out: "own" CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
analyzer=1 trace=true
while [ $# -gt 0 ]; do
  case "$1" in
    --no-analyzer) analyzer=0; shift ;;
    --no-trace) trace=false; shift ;;  # probing alone, without the traceroute thread
    *) break ;;
  esac
done
duration=${1:-60}
sink=${HOSTMESH_BUILD_DIR:-build}/bench/hostmesh-ingest-sink
agent=${HOSTMESH_BUILD_DIR:-build}/agent/main/hostmesh-agent
fabric=deploy/testbed/fabric
export HOSTMESH_FABRIC_PREFIX=hmbench-
[ -x "$agent" ] || { echo "bench: build first ($agent missing)" >&2; exit 1; }

$fabric down >/dev/null
trap '$fabric down >/dev/null' EXIT
$fabric up --hosts 2 --rails 8 --spines 4 >/dev/null
if [ "$analyzer" -eq 1 ]; then
  $fabric exec mgmt -- "$sink" 198.19.128.1:50051 &
  sleep 0.5
fi
tck=$(getconf CLK_TCK)

run() {  # $1 = probe interval, $2 = label
  local cfg pid t0 t1 c0 c1
  cfg=$(mktemp /tmp/hostmesh-bench.XXXXXX.yaml)
  $fabric agent-config h000 | sed -e "s/^  interval: .*/  interval: $1/" \
    -e "/^traceroute:/,/^[a-z]/ s/^  enabled: .*/  enabled: $trace/" >"$cfg"
  $fabric exec h000 -- "$agent" --config "$cfg" --log-level error &
  pid=$!
  sleep 3  # start-up (sockets, first pool) is not steady state
  read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
  t0=$(date +%s.%N)
  local perf_data="" softirq=""
  if command -v perf >/dev/null; then
    perf_data=$(mktemp /tmp/hostmesh-bench.XXXXXX.perf)
    perf record -q -F 499 -g -p "$pid" -o "$perf_data" -- sleep "$duration" 2>/dev/null
    softirq=$(perf report -i "$perf_data" --children --sort symbol -g none --stdio 2>/dev/null |
      awk '/\] net_rx_action/ {sub("%", "", $1); print $1; exit}' || true)
    rm -f "$perf_data"
  else
    sleep "$duration"
  fi
  read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
  t1=$(date +%s.%N)
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  anon=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status")
  metrics=$($fabric exec h000 -- curl -s "http://$(sed -n 's/^  listen: \(.*\):9100$/\1/p' "$cfg"):9100/metrics")
  sent=$(echo "$metrics" | awk '/^hostmesh_agent_probes_sent_total/ {s += $2} END {print s}')
  lost=$(echo "$metrics" | awk '/^hostmesh_agent_probes_timeouts_total/ {s += $2} END {print s}')
  kill -TERM "$pid"; wait "$pid" || true
  rm -f "$cfg"
  awk -v u0="$u0" -v u1="$u1" -v s0="$s0" -v s1="$s1" -v t0="$t0" -v t1="$t1" -v tck="$tck" \
      -v hwm="$hwm" -v anon="$anon" -v label="$2" -v sent="$sent" -v lost="$lost" \
      -v softirq="${softirq:-}" 'BEGIN {
    secs = (t1 - t0) * tck / 100
    user = (u1 - u0) / secs; sys = (s1 - s0) / secs
    own = softirq == "" ? "n/a (no perf)" : sprintf("%.2f%%", (user + sys) * (1 - softirq / 100))
    printf "%-22s cpu %.2f%% (user %.2f%%, system %.2f%%), own %s  peak RSS %.1f MB, private %.1f MB  sent %d, timed out %d\n",
           label, user + sys, user, sys, own, hwm / 1024, anon / 1024, sent, lost }'
}

mode=$([ "$analyzer" -eq 1 ] && echo "uploading to a stand-in analyzer" || echo "no analyzer")
echo "agent overhead, 8 NICs, UDP transport, $mode, traceroute $trace, ${duration} s each"
run 100ms "10 probes/s per NIC"
run 1ms "1000 probes/s per NIC"
