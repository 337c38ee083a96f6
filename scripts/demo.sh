#!/usr/bin/env bash
# The main job: install what is missing, build, bring up an emulated
# rail-optimized fabric in network namespaces and show probes crossing it.
set -euo pipefail
cd "$(dirname "$0")/.."

hosts=4 rails=4 spines=4 pods=1 keep=0
usage() {
  cat <<USAGE
usage: scripts/demo.sh [--hosts N] [--rails N] [--spines N] [--pods N] [--keep]
  Builds hostmesh, brings up a hosts x rails x spines fabric (default 4x4x4),
  sends probes between NICs of host h000 over 32 source ports and prints the
  path each took. --keep leaves the fabric up (deploy/testbed/fabric down removes it).
USAGE
}
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --rails) rails=$2; shift 2 ;;
    --spines) spines=$2; shift 2 ;;
    --pods) pods=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "demo: unknown flag $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "demo: run as root (it builds network namespaces)" >&2; exit 1; }

bash scripts/build.sh
fabric=deploy/testbed/fabric
$fabric down >/dev/null
[ "$keep" -eq 1 ] || trap '$fabric down >/dev/null' EXIT

echo "== fabric up: $hosts hosts x $rails rails x $spines spines, $pods pod(s)"
time $fabric up --hosts "$hosts" --rails "$rails" --spines "$spines" --pods "$pods"
$fabric status

last=$((rails - 1))
echo; echo "== probes h000 nic0 -> nic$last, one per source port (path from each switch's FIB)"
$fabric probe h000 --src-nic 0 --dst-nic "$last" --ports 32

echo; echo "== traceroute-visible hops of one 5-tuple (ingress interface addresses)"
src=$($fabric topology --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["hosts"][0]["nics"][0]["ip"])')
dst=$($fabric topology --json | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['hosts'][0]['nics'][$last]['ip'])")
$fabric truth-path "$src" "$dst" 49152

echo; echo "== the real agent on h000 for 5 s (UDP transport, no analyzer yet: it probes anyway)"
cfg=$(mktemp /tmp/hostmesh-demo-agent.XXXXXX.yaml)
$fabric agent-config h000 > "$cfg"
mgmt_ip=$(sed -n 's/^  listen: \(.*\):9100$/\1/p' "$cfg")
$fabric exec h000 -- build/agent/main/hostmesh-agent --config "$cfg" --log-level warn &
agent=$!
sleep 5
$fabric exec h000 -- curl -s "http://$mgmt_ip:9100/metrics" |
  grep -E '^hostmesh_agent_probes_(sent|received|timeouts)_total' | sort -t'"' -k2,2 -k4,4 | head -24
kill -TERM "$agent"; wait "$agent" || true
rm -f "$cfg"

if [ "$keep" -eq 1 ]; then
  echo; echo "fabric left up: try '$fabric topology', '$fabric exec h000 -- ip rule', '$fabric down'"
fi
