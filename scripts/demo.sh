#!/usr/bin/env bash
# The main job: install what is missing, build, bring up an emulated
# rail-optimized fabric in network namespaces with the analyzer and one agent
# per host, inject a fault and print what the analyzer concluded.
set -euo pipefail
cd "$(dirname "$0")/.."

hosts=8 rails=4 spines=4 pods=1 keep=0 fault=gray window=10
usage() {
  cat <<USAGE
usage: scripts/demo.sh [--hosts N] [--rails N] [--spines N] [--pods N]
                       [--fault gray|nic-down|loss|delay|cpu] [--window SECONDS] [--keep]
  Builds hostmesh, brings up a hosts x rails x spines fabric (default 8x4x4),
  starts the analyzer (management namespace) and one agent per host
  (deploy/testbed/fabric start), waits for a healthy judged window, injects
  the fault, waits up to 3 windows and prints the analyzer's verdict: ranked
  suspicious links, RNIC states, incidents, and the address of its API.
    gray      100% drop on the rail-to-spine link p0r0-s00 (default)
    nic-down  h003's nic1 down
    loss      5% loss on p0r1-s01
    delay     2 ms added on p0r0-s01
    cpu       h002's agent starved: it and stress-ng in a cgroup of 0.1 CPU
              (with wire-delay: 0.2 ms at every spine, so replies reach the
              agents while they sleep, as on hardware)
  --window    the analyzer's window in seconds (default 10; grace is half)
  --keep      leaves fabric, fault, analyzer and agents running
              (deploy/testbed/fabric down removes everything).
USAGE
}
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --rails) rails=$2; shift 2 ;;
    --spines) spines=$2; shift 2 ;;
    --pods) pods=$2; shift 2 ;;
    --fault) fault=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "demo: unknown flag $1" >&2; usage >&2; exit 2 ;;
  esac
done
case "$fault" in
  gray) fault_args=(gray --link p0r0-s00); expect="link p0r0-s00 ranked first, no RNIC anomalous" ;;
  nic-down) fault_args=(nic-down --host h003 --nic nic1); expect="RNIC h003 nic1 anomalous, no link blamed" ;;
  loss) fault_args=(loss --link p0r1-s01 --percent 5); expect="link p0r1-s01 ranked first" ;;
  delay) fault_args=(delay --link p0r0-s01 --ms 2); expect="a latency hotspot on p0r0-s01" ;;
  cpu) fault_args=(cpu --host h002); expect="a processing-delay incident for h002" ;;
  *) echo "demo: --fault must be gray, nic-down, loss, delay or cpu" >&2; exit 2 ;;
esac
[[ "$window" =~ ^[0-9]+$ && "$window" -ge 2 ]] || { echo "demo: --window takes whole seconds >= 2" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "demo: run as root (it builds network namespaces)" >&2; exit 1; }

bash scripts/build.sh
fabric=deploy/testbed/fabric
api=http://198.19.128.1:8080/api/v1
get() { $fabric exec mgmt -- curl -sf -m 5 "$api/$1"; }
# Prints the verdict from the JSON of links, rnics, incidents and sla (argv).
report_py=$(cat <<'PY'
import json, sys
links, rnics, incidents, sla = (json.loads(a) if a else {} for a in sys.argv[1:5])
print("suspicious links (%s):" % links.get("method", "?"))
for l in links.get("links", [])[:5]:
    ends = " - ".join("%s:%s %s" % (e["device"], e["port"], e["ip"]) for e in l["ends"] or [])
    print("  #%d %s %s  loss %.2f  failed %d ok %d  paper votes %d" % (
        l["rank"], "CULPRIT" if l["culprit"] else "       ", ends, l["loss"], l["failures"],
        l["good"], l["votes"]))
if not links.get("links"):
    print("  none")
rs = rnics.get("rnics", [])
print("RNICs: %d judged, %d anomalous (the paper's rule alone would flag %d)" % (
    len(rs), sum(r["anomalous"] for r in rs), sum(r["paper_anomalous"] for r in rs)))
for r in rs:
    if r["anomalous"] or r["state"] != "ok":
        print("  %s %s %s rail %d: %s, anomalous %s, loss %.2f, %d/%d probes to it timed out" % (
            r["host"], r["nic_name"], r["ip"], r["rail"], r["state"], r["anomalous"], r["loss"],
            r["timeouts_to"], r["probes_to"]))
print("incidents: %d open, %d resolved" % (len(incidents.get("open", [])),
                                          len(incidents.get("resolved", []))))
for i in incidents.get("open", []):
    s, e = i["suspect"], i["evidence"]
    who = s.get("name") or " ".join(str(s[k]) for k in ("host", "nic_name") if k in s) or str(s)
    print("  %s: %s  confidence %.2f, %d window(s), %d failed / %d ok probes, loss %.2f" % (
        i["kind"], who, i["confidence"], i["windows"], e["failures"], e["good"], e["loss"]))
c = sla.get("cluster") or {}
if c:
    lat = c["latency_ns"]
    print("SLA (cluster, last window): %d probes, network drop rate %.4f, RNIC drop rate %.4f, "
          "latency p50 %.0f us, p99 %.0f us" % (c["probes"], c["network_drop_rate"],
                                                 c["rnic_drop_rate"], lat["p50"] / 1e3,
                                                 lat["p99"] / 1e3))
hosts = sorted(sla.get("hosts", []), key=lambda h: -h["processing_ns"]["p99"])[:3]
if hosts:
    print("highest processing delay p99 (host: us): " + ", ".join(
        "%s %.0f" % (h["host"], h["processing_ns"]["p99"] / 1e3) for h in hosts))
PY
)
$fabric down >/dev/null
[ "$keep" -eq 1 ] || trap '$fabric down >/dev/null' EXIT
t0=$(date +%s)

echo "== fabric up: $hosts hosts x $rails rails x $spines spines, $pods pod(s)"
$fabric up --hosts "$hosts" --rails "$rails" --spines "$spines" --pods "$pods"

echo; echo "== fabric start: analyzer in the mgmt namespace, one agent per host (window ${window}s)"
$fabric start --window "${window}s" --grace "$((window / 2))s"
if [ "$fault" = cpu ]; then
  # On bare veths a reply arrives inside the agent's own send call, so a
  # starved agent never waits for it: make the fabric deliver like hardware.
  $fabric fault add wire-delay --ms 0.2 >/dev/null
fi

# Prints the end (Unix seconds) of the latest judged window, or 0.
judged() {
  get status 2>/dev/null | python3 -c '
import json, sys
w = json.load(sys.stdin).get("window")
print(w["end_ns"] // 10**9 if w else 0)' 2>/dev/null || echo 0
}
# Exit 0 when the current window shows the verdict $1 looks for: "healthy"
# (every agent present, no culprit link, no anomalous RNIC), "link" (a
# culprit link), "rnic" (an anomalous RNIC).
verdict() {
  python3 -c '
import json, sys
want, status, links, rnics = sys.argv[1], *(json.loads(a or "{}") for a in sys.argv[2:5])
culprit = any(l["culprit"] for l in links.get("links", []))
anomalous = any(r["anomalous"] for r in rnics.get("rnics", []))
ok = {"healthy": status.get("agents_present") == status.get("agents_known") and status.get("window")
         and not culprit and not anomalous,
      "link": culprit, "rnic": anomalous}.get(want, False)
sys.exit(0 if ok else 1)' "$1" "$(get status 2>/dev/null)" "$(get links 2>/dev/null)" \
    "$(get rnics 2>/dev/null)" 2>/dev/null
}
echo; echo "== waiting for a healthy judged window (up to $((3 * window + 30)) s)"
deadline=$(( $(date +%s) + 3 * window + 30 ))
until verdict healthy; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "demo: no healthy window in time (going on anyway)" >&2; break
  fi
  sleep 1
done
get status | python3 -c '
import json, sys
s = json.load(sys.stdin)
print("  %d/%d agents present, %d probe results in the window, %d open incidents" % (
    s["agents_present"], s["agents_known"], (s["window"] or {}).get("results", 0),
    s["open_incidents"]))'

echo; echo "== fault: ${fault_args[*]}   (expected: $expect)"
injected=$(date +%s)
$fabric fault add "${fault_args[@]}"
# The analyzer has up to 3 full windows after the injection, plus its grace;
# gray, loss and nic-down stop early once a window that began after the
# injection shows their verdict.
until_end=$(( (injected + window - 1) / window * window + 3 * window ))
deadline=$(( until_end + window / 2 + window + 30 ))
case "$fault" in gray|loss) early=link ;; nic-down) early=rnic ;; *) early=none ;; esac
echo "   waiting until the window ending $(date -d "@$until_end" +%T) is judged (or the verdict shows)"
while :; do
  end=$(judged)
  [ "$end" -ge "$until_end" ] && break
  # a window that began after the injection: the fault for all of it
  [ "$((end - window))" -ge "$injected" ] && verdict "$early" && break
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "demo: the analyzer fell behind (no window judged in time)" >&2; break
  fi
  sleep 1
done

echo; echo "== what the analyzer concluded (window ending $(date -d "@$(judged)" +%T), fault injected at $(date -d "@$injected" +%T))"
python3 -c "$report_py" "$(get links)" "$(get rnics)" "$(get incidents)" "$(get sla)"
echo; echo "analyzer API: $api/{status,rnics,links,incidents,sla} in namespace ${HOSTMESH_FABRIC_PREFIX:-hm-}mgmt"
echo "  $fabric exec mgmt -- curl -s $api/links"
echo "  from a browser: $fabric forward, then http://127.0.0.1:8080/api/v1/status"
echo "demo took $(( $(date +%s) - t0 )) s after the build"
if [ "$keep" -eq 1 ]; then
  echo "left running (fault included): '$fabric fault clear', '$fabric stop', '$fabric down'"
fi
