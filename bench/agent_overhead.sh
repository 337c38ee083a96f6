#!/usr/bin/env bash
# Agent overhead on the emulated fabric (issue 3 benchmark): one agent with the
# UDP transport on a host with 8 NICs, at 10 and at 1000 probes/s per NIC, each
# for DURATION seconds (default 60). Prints CPU (% of one core, from
# /proc/PID/stat utime+stime over the run) and peak RSS (VmHWM). Needs root and
# a built tree (scripts/build.sh). No analyzer runs: the agent buffers, as it
# does while the analyzer is away, so upload cost is not in these figures.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-60}
agent=${HOSTMESH_BUILD_DIR:-build}/agent/main/hostmesh-agent
fabric=deploy/testbed/fabric
export HOSTMESH_FABRIC_PREFIX=hmbench-
[ -x "$agent" ] || { echo "bench: build first ($agent missing)" >&2; exit 1; }

$fabric down >/dev/null
trap '$fabric down >/dev/null' EXIT
$fabric up --hosts 2 --rails 8 --spines 4 >/dev/null
tck=$(getconf CLK_TCK)

run() {  # $1 = probe interval, $2 = label
  local cfg pid t0 t1 c0 c1
  cfg=$(mktemp /tmp/hostmesh-bench.XXXXXX.yaml)
  $fabric agent-config h000 | sed "s/^  interval: .*/  interval: $1/" >"$cfg"
  $fabric exec h000 -- "$agent" --config "$cfg" --log-level error &
  pid=$!
  sleep 3  # start-up (sockets, first pool) is not steady state
  read -r c0 < <(awk '{print $14 + $15}' "/proc/$pid/stat")
  t0=$(date +%s.%N)
  sleep "$duration"
  read -r c1 < <(awk '{print $14 + $15}' "/proc/$pid/stat")
  t1=$(date +%s.%N)
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  metrics=$($fabric exec h000 -- curl -s "http://$(sed -n 's/^  listen: \(.*\):9100$/\1/p' "$cfg"):9100/metrics")
  sent=$(echo "$metrics" | awk '/^hostmesh_agent_probes_sent_total/ {s += $2} END {print s}')
  lost=$(echo "$metrics" | awk '/^hostmesh_agent_probes_timeouts_total/ {s += $2} END {print s}')
  kill -TERM "$pid"; wait "$pid" || true
  rm -f "$cfg"
  awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v tck="$tck" -v hwm="$hwm" \
      -v label="$2" -v sent="$sent" -v lost="$lost" 'BEGIN {
    cpu = (c1 - c0) / tck / (t1 - t0) * 100
    printf "%-22s cpu %.3f%% of one core   peak RSS %.1f MB   probes sent %d, timed out %d\n",
           label, cpu, hwm / 1024, sent, lost }'
}

echo "agent overhead, 8 NICs, UDP transport, ${duration} s each"
run 100ms "10 probes/s per NIC"
run 1ms "1000 probes/s per NIC"
