#!/usr/bin/env bash
# Instructions per probe of each part of the agent, and its bandwidth per RNIC
# (issue 25 items 1 and 5), on the emulated fabric: one agent with the UDP
# transport on a host with 8 NICs (`fabric up --hosts 2 --rails 8 --spines 4`),
# traceroute on, uploading over mutual TLS to a real analyzer.
#
#   bench/agent_instructions.sh [--instructions-only | --bandwidth-only] [--out FILE]
#                               [--seconds S] [--scrapes K] [--interval MS] [--bw-seconds S]
#                               [--settle-max S] [--top N] [--keep DIR]
#
# The analyzer is the real hostmesh-analyzer, started by `fabric start` with
# no agent of its own (--no-agent for both hosts) in the management
# namespace: the fabric's own CA, mutual TLS, the fabric's inventory, RocksDB
# in the fabric's state directory. The agent runs in h000 with the config of
# `fabric agent-config --tls h000` (h000's certificate), so it connects,
# uploads and is acknowledged as in production.
#
# Phase 1, instructions (--instructions-only runs it alone). The agent at
# 100 probes/s per NIC (probe.interval 10ms: every NIC sends one probe per
# interval to a random other NIC, so 800 probes/s in all; --interval MS sets
# another, e.g. 100 for the default rate, where the costs that come per
# period rather than per probe weigh 10 times more in each probe) runs under
#   valgrind --tool=callgrind --separate-threads=yes --instr-atstart=no
# Instrumentation is off until the window: the agent starts at the speed of
# valgrind's bare JIT, so start-up and the tracer's first pass (every 5-tuple
# of the pool traced at the budget's 40 probes/s, about 75 s for 896 tuples)
# stay out of the counts. The window opens once the agent's /metrics show the
# first pass done (hostmesh_agent_trace_runs_total >= trace_targets) and 10 s
# more (at most --settle-max, default 300 s): what is measured is the agent as
# it runs for months, probing, uploading, tracing rotated-in ports and
# refreshing old ones. (callgrind's --collect-atstart=no cannot be used with
# callgrind_control: it has no command that turns collection on, and the
# window would count nothing; switching instrumentation on has the same
# effect, counting from that instant.) `callgrind_control -i on` opens the
# window, K scrapes of /metrics (--scrapes, default 6) are spread over it,
# `callgrind_control --dump` closes it after S seconds (--seconds, default 60),
# writing one file per thread. bench/instructions_parts.py reads them with
# callgrind_annotate --inclusive=yes and prints Ir (instructions) per probe
# for each part of each thread, the total of all threads per probe, and the
# metrics server's Ir per scrape (apart: a scrape costs the same whatever the
# probe rate). Probes in the window are the calls to UdpTransport::Send that
# callgrind counted, exactly. Instruction counts do not depend on the
# machine's load as long as the agent keeps up: the probes its /metrics count
# over the window are printed against the rate it should send (800/s at 10 ms).
#
# Phase 2, bandwidth (--bandwidth-only runs it alone). The same agent without
# valgrind at the default rate (probe.interval 100ms, 10 probes/s per NIC),
# traceroute at its defaults, for --bw-seconds (default 60) after the same
# settling. nftables counters in h000's namespace (input and output hooks,
# so IP packets with their IP header, no link header) split the traffic:
#   probe      UDP to port 4791 with TTL > 32 (probes leave with TTL 64)
#   traceroute UDP to port 4791 with TTL <= 32 (the tracer's TTL-limited
#              probes, TTL 1..8, and those that reach the far NIC) and the
#              ICMP they draw (time exceeded from switches)
#   upload     TCP to and from the analyzer's port 50051 on mgmt0 (gRPC over
#              TLS: batches out; acks, HTTP/2 and TCP acks in)
#   other      anything else on the NICs (nothing IP is expected)
# Each class in bytes/s and kbit/s per RNIC (the host's bytes / 8 NICs; upload
# too: one agent serves the 8 RNICs), sent and received, IP bytes and
# Ethernet frames (IP + 14 header + 4 FCS bytes per packet; no preamble or
# gap). TCP hands the veth segments of up to 64 KB (GSO) that a real NIC
# would cut at the MSS: the upload's packets are the TCP segments the
# kernel's own counters give (ss: segs_out/segs_in), each with its IP and
# TCP header (52 bytes with timestamps). The NICs' own counters
# (/sys/class/net/nicN/statistics, Ethernet bytes without FCS, ARP too)
# are printed beside as the check. The first pass (from the agent's start to
# the window) is printed too: a one-off burst of traceroute.
#
# --out FILE gets the figures as key=value lines (instructions_parts.py's
# and this script's). --keep DIR keeps the callgrind files and logs.
# Needs root and a built tree (HOSTMESH_BUILD_DIR, default build/: the agent
# and analyzer); valgrind is installed with apt-get when missing. The fabric's
# namespace prefix is HOSTMESH_FABRIC_PREFIX (default hminst-).
set -euo pipefail
cd "$(dirname "$0")/.."
phases="instructions bandwidth" out="" seconds=60 scrapes=6 bw_seconds=60 settle_max=300
top=15 keep="" interval_ms=10
while [ $# -gt 0 ]; do
  case "$1" in
    --instructions-only) phases=instructions; shift ;;
    --bandwidth-only) phases=bandwidth; shift ;;
    --out) out=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;        # instruction window
    --scrapes) scrapes=$2; shift 2 ;;        # /metrics scrapes in that window
    --interval) interval_ms=$2; shift 2 ;;   # phase 1's probe.interval in ms
    --bw-seconds) bw_seconds=$2; shift 2 ;;  # bandwidth window
    --settle-max) settle_max=$2; shift 2 ;;  # longest wait for the tracer's first pass
    --top) top=$2; shift 2 ;;                # functions listed per thread
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: $0 [--instructions-only|--bandwidth-only] [--out FILE] [--seconds S]" \
            "[--scrapes K] [--interval MS] [--bw-seconds S] [--settle-max S] [--top N]" \
            "[--keep DIR]" >&2
       exit 2 ;;
  esac
done
build=$(realpath -m "${HOSTMESH_BUILD_DIR:-build}")
agent=$build/agent/main/hostmesh-agent
analyzer=$build/analyzer/main/hostmesh-analyzer
fabric=deploy/testbed/fabric
export HOSTMESH_FABRIC_PREFIX=${HOSTMESH_FABRIC_PREFIX:-hminst-}
nics=8
[ "$(id -u)" -eq 0 ] || { echo "agent_instructions: needs root (network namespaces)" >&2; exit 1; }
for b in "$agent" "$analyzer"; do
  [ -x "$b" ] || { echo "agent_instructions: build first ($b missing)" >&2; exit 1; }
done
if [[ $phases == *instructions* ]] &&
   ! { command -v valgrind && command -v callgrind_annotate && command -v callgrind_control; } \
     >/dev/null; then
  echo "agent_instructions: installing valgrind"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
fi
if [ -n "$out" ]; then : >"$out"; fi
work=$(mktemp -d /tmp/hminst.XXXXXX)
agent_pid=""

stop_agent() {
  [ -n "$agent_pid" ] || return 0
  kill -TERM "$agent_pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 120 && $(kill -0 "$agent_pid" 2>/dev/null && echo 1 || echo 0); i++)); do
    sleep 0.5
  done
  kill -KILL "$agent_pid" 2>/dev/null || true
  wait "$agent_pid" 2>/dev/null || true
  agent_pid=""
}
cleanup() {
  stop_agent
  $fabric down >/dev/null 2>&1 || true
  if [ -n "$keep" ]; then
    mkdir -p "$keep" && cp -r "$work"/. "$keep"/ && echo "agent_instructions: files kept in $keep"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

note() { echo "$(date +%T) $*" >&2; }
now() { date +%s.%N; }
sleep_until() { sleep "$(awk -v t="$1" -v n="$(now)" 'BEGIN {d = t - n; print (d > 0 ? d : 0)}')"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
emit() { [ -z "$out" ] || echo "$1=$2" >>"$out"; }

echo "agent $agent (commit $(cat "$build/COMMIT" 2>/dev/null || git rev-parse --short HEAD))"
echo "fabric ${HOSTMESH_FABRIC_PREFIX}: host h000 with $nics NICs, real analyzer on mutual TLS;" \
     "machine $(nproc) CPUs, load average $(load) at start"
$fabric down >/dev/null
$fabric up --hosts 2 --rails 8 --spines 4 >/dev/null
$fabric start --no-agent h000 --no-agent h001 --build "$build" --log-level warn >/dev/null
$fabric agent-config --tls h000 >"$work/agent-default.yaml"
# The fabric of this tree may write keys newer than the agent measured (a
# baseline build): a top-level block the agent calls unknown is dropped, and
# said so.
for ((i = 0; i < 8; i++)); do
  why=$("$agent" --config "$work/agent-default.yaml" --check-config 2>&1 >/dev/null) && break
  key=$(sed -n 's/^.*:[0-9]*:1: \([a-z_]*\): unknown key$/\1/p' <<<"$why" | head -1)
  [ -n "$key" ] || { echo "agent_instructions: the agent refuses the fabric's config: $why" >&2; exit 1; }
  echo "note: this agent does not know the fabric config's \`$key:' block; measuring without it"
  sed -i "/^$key:/,/^[a-z]/{/^$key:/d;/^[a-z]/!d}" "$work/agent-default.yaml"
done
# Self-protection would lower the rate under valgrind's weight and change
# what is measured: off, where the agent has it.
if grep -q '^protect:' "$work/agent-default.yaml"; then
  sed -i '/^protect:/,/^[a-z]/{/^protect:/d;/^[a-z]/!d}' "$work/agent-default.yaml"
  printf 'protect:\n  enabled: false\n' >>"$work/agent-default.yaml"
fi
listen=$(sed -n 's/^  listen: \(.*\):9100$/\1/p' "$work/agent-default.yaml")

# The agent's counters: "sent received timeouts late trace_runs trace_targets
# trace_probes batches_acked" (sums over NIC pairs).
agent_metrics() {
  $fabric exec mgmt -- curl -s -m 60 "http://$listen:9100/metrics" | awk '
    /^hostmesh_agent_probes_sent_total/ {s += $2} /^hostmesh_agent_probes_received_total/ {r += $2}
    /^hostmesh_agent_probes_timeouts_total/ {t += $2} /^hostmesh_agent_probes_late_total/ {l += $2}
    /^hostmesh_agent_trace_runs_total/ {tr = $2} /^hostmesh_agent_trace_targets/ {tt = $2}
    /^hostmesh_agent_trace_probes_sent_total/ {tp = $2}
    /^hostmesh_agent_upload_batches_acknowledged_total/ {ack = $2}
    END {printf "%d %d %d %d %d %d %d %d\n", s, r, t, l, tr, tt, tp, ack}'
}
# Results the analyzer took (from every agent: there is only ours).
analyzer_results() {
  $fabric exec mgmt -- curl -s -m 10 "http://198.19.128.1:8080/metrics" |
    awk '/^hostmesh_ingest_results_accepted_total/ {s += $2} END {printf "%d\n", s}'
}

# Starts the agent in h000 with config $1, log $2, the rest of the arguments
# before it (valgrind); waits for its /metrics.
start_agent() {
  local cfg=$1 log=$2 i
  shift 2
  $fabric exec h000 -- "$@" "$agent" --config "$cfg" --log-level warn >"$log" 2>&1 &
  agent_pid=$!
  for ((i = 0; i < 240; i++)); do
    kill -0 "$agent_pid" 2>/dev/null || { echo "agent exited at start:" >&2; tail "$log" >&2; exit 1; }
    $fabric exec mgmt -- curl -sf -m 5 -o /dev/null "http://$listen:9100/metrics" && return 0
    sleep 0.5
  done
  echo "agent_instructions: the agent's /metrics do not answer" >&2
  exit 1
}

# Waits for the tracer's first pass over the pool (runs >= targets), then 10 s
# more; at most settle_max seconds from $1 (the agent's start). Prints how long.
settle() {
  local started=$1 runs targets
  while :; do
    read -r _ _ _ _ runs targets _ _ < <(agent_metrics)
    if [ "$targets" -gt 0 ] && [ "$runs" -ge "$targets" ]; then break; fi
    if awk -v s="$started" -v n="$(now)" -v m="$settle_max" 'BEGIN {exit !(n - s >= m)}'; then
      note "tracer's first pass not done after $settle_max s ($runs of $targets traces): measuring anyway"
      break
    fi
    sleep 5
  done
  sleep 10
  awk -v s="$started" -v n="$(now)" 'BEGIN {printf "%.0f\n", n - s}'
}

instructions() {
  local cfg=$work/agent-instructions.yaml cg=$work/callgrind
  mkdir -p "$cg"
  sed -e "s/^  interval: .*/  interval: ${interval_ms}ms/" "$work/agent-default.yaml" >"$cfg"
  echo
  echo "== instructions: $nics NICs x $((1000 / interval_ms)) probes/s under callgrind," \
       "traceroute on, ${seconds} s window, $scrapes scrapes"
  local started settled
  started=$(now)
  start_agent "$cfg" "$work/agent-callgrind.log" valgrind --tool=callgrind --separate-threads=yes --fair-sched=yes \
    --instr-atstart=no --callgrind-out-file="$cg/callgrind.out.%p"
  settled=$(settle "$started")
  local threads
  threads=$(for t in /proc/"$agent_pid"/task/*; do cat "$t/comm"; done | sort | uniq -c |
            awk '{printf "%s%s%s", sep, $2, ($1 > 1 ? " x" $1 : ""); sep = ", "}')
  echo "settled ${settled} s (tracer's first pass done); threads: $threads; load average $(load)"
  emit instr.load_start "$(cut -d' ' -f1 /proc/loadavg)"

  local m0 m1 a0 a1 t0 ton tdump t1 i
  m0=$(agent_metrics); a0=$(analyzer_results); t0=$(now)
  callgrind_control -i on "$agent_pid" >/dev/null 2>&1 ||
    { echo "agent_instructions: callgrind_control -i on failed" >&2; exit 1; }
  ton=$(now)
  for ((i = 0; i < scrapes; i++)); do
    sleep_until "$(awk -v t="$ton" -v i="$i" -v k="$scrapes" -v s="$seconds" \
                   'BEGIN {printf "%.3f", t + (i + 0.5) * s / k}')"
    $fabric exec mgmt -- curl -s -m 60 -o /dev/null "http://$listen:9100/metrics" ||
      note "scrape $((i + 1)) failed"
  done
  sleep_until "$(awk -v t="$ton" -v s="$seconds" 'BEGIN {printf "%.3f", t + s}')"
  tdump=$(now)
  callgrind_control --dump=window "$agent_pid" >/dev/null 2>&1 ||
    { echo "agent_instructions: callgrind_control --dump failed" >&2; exit 1; }
  m1=$(agent_metrics); a1=$(analyzer_results); t1=$(now)
  local load_end
  load_end=$(load)
  stop_agent

  # Does the agent keep up under valgrind? Its own count of probes sent over
  # [t0, t1] (reads of /metrics just outside the window) against the rate.
  echo "$m0 $a0 $t0 | $m1 $a1 $t1 | $ton $tdump" | awk -v nics="$nics" -v iv="$interval_ms" -v kv="$work/kv" '{
    split($0, p, "\\|"); split(p[1], a, " "); split(p[2], b, " "); split(p[3], w, " ")
    secs = b[10] - a[10]; sent = b[1] - a[1]; expect = nics * secs * 1000 / iv
    printf "keep-up: %d probes sent in %.1f s by the agent'"'"'s /metrics, %.0f/s against %.0f/s expected (%.1f%%); %d received, %d timed out, %d late; %d results accepted by the analyzer, %d batches acknowledged; %d traces\n",
           sent, secs, sent / secs, expect / secs, 100 * sent / expect, b[2] - a[2], b[3] - a[3],
           b[4] - a[4], b[9] - a[9], b[8] - a[8], b[5] - a[5]
    printf "instr.keepup_sent=%d\ninstr.keepup_expected=%.0f\ninstr.keepup_ratio=%.4f\ninstr.analyzer_results=%d\ninstr.timeouts=%d\ninstr.window_seconds=%.2f\n",
           sent, expect, sent / expect, b[9] - a[9], b[3] - a[3], w[2] - w[1] > kv }'
  [ -z "$out" ] || cat "$work/kv" >>"$out"
  echo "load average $load_end at the window's end"
  emit instr.load_end "${load_end%% *}"
  local window
  window=$(awk -v a="$ton" -v b="$tdump" 'BEGIN {printf "%.2f", b - a}')
  python3 bench/instructions_parts.py --dir "$cg" --dump 1 --scrapes "$scrapes" \
    --seconds "$window" --top "$top" ${out:+--out "$out"}
  if grep -q '\[warn\]\|\[error\]' "$work/agent-callgrind.log"; then
    echo "agent warnings:"; grep '\[warn\]\|\[error\]' "$work/agent-callgrind.log" | head -5
  fi
}

# nftables counters in h000's namespace, by class (see the header).
counters_up() {
  $fabric exec h000 -- nft -f - <<'EOF'
table inet hminst_bw {
  counter probe_tx {}
  counter probe_rx {}
  counter trace_tx {}
  counter trace_rx {}
  counter icmp_tx {}
  counter icmp_rx {}
  counter nic_other_tx {}
  counter nic_other_rx {}
  counter upload_tx {}
  counter upload_rx {}
  counter mgmt_other_tx {}
  counter mgmt_other_rx {}
  chain out {
    type filter hook output priority 0; policy accept;
    oifname "nic*" udp dport 4791 ip ttl > 32 counter name probe_tx accept
    oifname "nic*" udp dport 4791 counter name trace_tx accept
    oifname "nic*" meta l4proto icmp counter name icmp_tx accept
    oifname "nic*" counter name nic_other_tx accept
    oifname "mgmt0" tcp dport 50051 counter name upload_tx accept
    oifname "mgmt0" counter name mgmt_other_tx accept
  }
  chain in {
    type filter hook input priority 0; policy accept;
    iifname "nic*" udp dport 4791 ip ttl > 32 counter name probe_rx accept
    iifname "nic*" udp dport 4791 counter name trace_rx accept
    iifname "nic*" meta l4proto icmp counter name icmp_rx accept
    iifname "nic*" counter name nic_other_rx accept
    iifname "mgmt0" tcp sport 50051 counter name upload_rx accept
    iifname "mgmt0" counter name mgmt_other_rx accept
  }
}
EOF
}
# One line of "name packets bytes" triples: the nft counters, the NICs'
# Ethernet counters (nic_eth_tx/rx, summed over the NICs), the upload
# connection's TCP segments (ss: upload_segs_out/in, as packets).
snapshot() {
  {
    $fabric exec h000 -- nft list counters table inet hminst_bw |
      awk '/counter / {n = $2} /packets/ {print n, $2, $4}'
    # shellcheck disable=SC2016  # expanded by the shell in the namespace
    $fabric exec h000 -- sh -c 'for d in /sys/class/net/nic*; do
        echo "$(cat $d/statistics/tx_packets) $(cat $d/statistics/tx_bytes)" \
             "$(cat $d/statistics/rx_packets) $(cat $d/statistics/rx_bytes)"; done' |
      awk '{tp += $1; tb += $2; rp += $3; rb += $4}
           END {print "nic_eth_tx", tp, tb; print "nic_eth_rx", rp, rb}'
    $fabric exec h000 -- ss -tinH dst 198.19.128.1:50051 | tr -s ' \t' '\n' | awk -F: '
      $1 == "segs_out" {o += $2} $1 == "segs_in" {i += $2}
      END {print "upload_segs_out", o + 0, 0; print "upload_segs_in", i + 0, 0}'
  } | tr '\n' ' '
  echo
}

bandwidth() {
  echo
  echo "== bandwidth: $nics NICs at the default rate (probe.interval 100ms, 10 probes/s per NIC)," \
       "traceroute defaults, no valgrind, ${bw_seconds} s window; load average $(load)"
  $fabric exec h000 -- nft delete table inet hminst_bw 2>/dev/null || true
  counters_up
  local started settled s_start s0 s1 m0 m1 t_start t0 t1
  s_start=$(snapshot); t_start=$(now); started=$t_start
  start_agent "$work/agent-default.yaml" "$work/agent-bandwidth.log"
  settled=$(settle "$started")
  s0=$(snapshot); m0=$(agent_metrics); t0=$(now)
  sleep "$bw_seconds"
  s1=$(snapshot); m1=$(agent_metrics); t1=$(now)
  stop_agent
  echo "settled ${settled} s (tracer's first pass done); load average $(load) at the end"
  echo "$m0 $t0 | $m1 $t1" | awk -v nics="$nics" '{
    split($0, p, "\\|"); split(p[1], a, " "); split(p[2], b, " "); secs = b[9] - a[9]
    printf "agent: %.2f probes/s per NIC sent, %.2f traceroute probes/s in all, %.2f traces/s, %d batches acknowledged\n",
           (b[1] - a[1]) / secs / nics, (b[7] - a[7]) / secs, (b[5] - a[5]) / secs, b[8] - a[8] }'
  table() {  # $1 label, $2 snapshot before, $3 after, $4 seconds, $5 key prefix
    echo "$2 | $3" | awk -v label="$1" -v secs="$4" -v nics="$nics" -v key="$5" -v kv="$work/kv" '
      function val(side, name, field) { return side == 0 ? a[name, field] : b[name, field] }
      function d(name, field) { return b[name, field] - a[name, field] }
      {
        split($0, p, "\\|")
        n = split(p[1], x, " "); for (i = 1; i + 2 <= n; i += 3) { a[x[i], "p"] = x[i + 1]; a[x[i], "b"] = x[i + 2] }
        n = split(p[2], x, " "); for (i = 1; i + 2 <= n; i += 3) { b[x[i], "p"] = x[i + 1]; b[x[i], "b"] = x[i + 2] }
        # The upload: IP bytes as nftables counted them, plus one IP and TCP
        # header (52 bytes) for each segment a NIC would send beyond the
        # (GSO) packets the veth took.
        up_tx_p = d("upload_segs_out", "p"); up_rx_p = d("upload_segs_in", "p")
        if (up_tx_p < d("upload_tx", "p")) up_tx_p = d("upload_tx", "p")
        if (up_rx_p < d("upload_rx", "p")) up_rx_p = d("upload_rx", "p")
        cls[1] = "probe";      tb[1] = d("probe_tx", "b"); tp[1] = d("probe_tx", "p"); rb[1] = d("probe_rx", "b"); rp[1] = d("probe_rx", "p")
        cls[2] = "traceroute"; tb[2] = d("trace_tx", "b") + d("icmp_tx", "b"); tp[2] = d("trace_tx", "p") + d("icmp_tx", "p")
                               rb[2] = d("trace_rx", "b") + d("icmp_rx", "b"); rp[2] = d("trace_rx", "p") + d("icmp_rx", "p")
        cls[3] = "upload";     tb[3] = d("upload_tx", "b") + 52 * (up_tx_p - d("upload_tx", "p")); tp[3] = up_tx_p
                               rb[3] = d("upload_rx", "b") + 52 * (up_rx_p - d("upload_rx", "p")); rp[3] = up_rx_p
        cls[4] = "other (NICs)"; tb[4] = d("nic_other_tx", "b"); tp[4] = d("nic_other_tx", "p"); rb[4] = d("nic_other_rx", "b"); rp[4] = d("nic_other_rx", "p")
        printf "%s: %.1f s, per RNIC (host total / %d)\n", label, secs, nics
        printf "  %-13s %10s %10s %10s %9s %11s %11s\n", "class", "sent B/s", "recv B/s", "both B/s", "kbit/s", "sent kbit/s", "eth kbit/s"
        for (c = 1; c <= 4; c++) {
          s = tb[c] / secs / nics; r = rb[c] / secs / nics
          eth = (tb[c] + rb[c] + 18 * (tp[c] + rp[c])) / secs / nics
          printf "  %-13s %10.1f %10.1f %10.1f %9.2f %11.2f %11.2f\n", cls[c], s, r, s + r, (s + r) * 8 / 1000, s * 8 / 1000, eth * 8 / 1000
          ts += s; tr += r; te += eth
          k = cls[c]; sub(/ .*/, "", k)
          printf "%s.%s.sent_Bps=%.1f\n%s.%s.recv_Bps=%.1f\n%s.%s.kbps=%.3f\n%s.%s.eth_kbps=%.3f\n",
                 key, k, s, key, k, r, key, k, (s + r) * 8 / 1000, key, k, eth * 8 / 1000 > kv
        }
        printf "  %-13s %10.1f %10.1f %10.1f %9.2f %11.2f %11.2f   (paper: under 20 kbit/s per RNIC)\n",
               "all", ts, tr, ts + tr, (ts + tr) * 8 / 1000, ts * 8 / 1000, te * 8 / 1000
        printf "%s.all.kbps=%.3f\n%s.all.eth_kbps=%.3f\n%s.seconds=%.1f\n", key, (ts + tr) * 8 / 1000, key, te * 8 / 1000, key, secs > kv
        # The check: the NICs own Ethernet counters (no FCS; ARP included)
        # against the classes on the NICs with their 14-byte headers.
        eth_tx = d("nic_eth_tx", "b"); eth_rx = d("nic_eth_rx", "b")
        cl_tx = tb[1] + tb[2] + tb[4] + 14 * (tp[1] + tp[2] + tp[4])
        cl_rx = rb[1] + rb[2] + rb[4] + 14 * (rp[1] + rp[2] + rp[4])
        printf "  check: the NICs counters %.1f B/s sent, %.1f received per RNIC; the classes on them with Ethernet headers %.1f and %.1f\n",
               eth_tx / secs / nics, eth_rx / secs / nics, cl_tx / secs / nics, cl_rx / secs / nics
        printf "  upload: %d TCP segments sent, %d received (%d and %d packets through the veth)\n",
               up_tx_p, up_rx_p, d("upload_tx", "p"), d("upload_rx", "p")
      }'
    [ -z "$out" ] || cat "$work/kv" >>"$out"
  }
  table "first pass (start to window)" "$s_start" "$s0" \
    "$(awk -v a="$t_start" -v b="$t0" 'BEGIN {print b - a}')" bw_first_pass
  table "steady state (the window)" "$s0" "$s1" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" bw
}

for phase in $phases; do "$phase"; done
echo
echo "load average $(load) at the end"
