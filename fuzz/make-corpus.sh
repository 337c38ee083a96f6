#!/usr/bin/env bash
# Regenerates the seed corpora in fuzz/corpus/<target>/: binary seeds from the
# project's own encoders (fuzz_seed_corpus, built in build-fuzz), text seeds
# from the example configs, a generated inventory and a few queries. Run after
# a change of a format; commit what changed.
# Usage: fuzz/make-corpus.sh [build dir, default build-fuzz]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-fuzz}
corpus=fuzz/corpus

ninja -C "$build" fuzz_seed_corpus >/dev/null
for target in probe_codec tracer_icmp_reply tracer_trace_engine analyzer_ingest store_keys \
  store_chunks store_result_codec state_codec state_learned_fabric packed_results; do
  rm -rf "${corpus:?}/$target"
done
"$build/fuzz/fuzz_seed_corpus" "$corpus"

# YAML: the shipped examples, and small files that reach the checks past the schema.
rm -rf "$corpus/agent_config" "$corpus/analyzer_config" "$corpus/topology_inventory" "$corpus/http_query" "$corpus/ctl_evidence"
mkdir -p "$corpus/agent_config" "$corpus/analyzer_config" "$corpus/topology_inventory" "$corpus/http_query" "$corpus/ctl_evidence"
cp deploy/agent.example.yaml "$corpus/agent_config/example.yaml"
cat >"$corpus/agent_config/udp_two_nics.yaml" <<'YAML'
host: h1
transport: udp
analyzer: {address: 10.0.0.1:50051}
nics:
  - {name: eth1, rail: 0, ip: 10.1.0.2, netdev: eth1}
  - {name: eth2, rail: 1, ip: 10.1.1.2, netdev: eth2}
YAML
cat >"$corpus/agent_config/verbs_errors.yaml" <<'YAML'
host: "h 1"
transport: verbs
probe: {interval: 0ms, payload_bytes: 39}
ports: {min: 60000, max: 50000, pool_size: 8}
nics:
  - name: mlx5_0
    rail: 300
    ip: 10.1.0.300
    rdma_device: mlx5_0
    gid_index: 3
  - {name: mlx5_0, rail: 1, ip: "fe80::1", rdma_device: mlx5_1, unknown_key: 1}
YAML
cp deploy/analyzer.example.yaml "$corpus/analyzer_config/example.yaml"
cat >"$corpus/analyzer_config/small.yaml" <<'YAML'
grpc: {listen: 127.0.0.1:50051}
http: {listen: 127.0.0.1:8080}
data_dir: /var/lib/hostmesh
window: 20s
grace: 30s
thresholds:
  rnic_timeout_fraction: 1.5
  confidence:
    loss: [{raw: 0.5, p: 0.2}, {raw: 0.1, p: 0.9}]
YAML
"$build/fuzz/fuzz_seed_corpus" --inventory "$corpus/topology_inventory"
printf 'from\nfrom=1700000000&to=1700003600&limit=10' >"$corpus/http_query/history"
printf 'agent\n/api/v1/status\nagent=h%%20003&nic=mlx5_0&x' >"$corpus/http_query/escapes"
printf 'kind\nsuspicious&kind=latency+x&%%41=%%4' >"$corpus/http_query/bad_escape"
printf '/debug/qp\nnic=a%%2Bb&qp=17' >"$corpus/http_query/post_path"
# An incident path and bodies as the analyzer serves them (docs/analyzer.md, "Evidence").
cat >"$corpus/ctl_evidence/evidence" <<'JSON'
12/evidence
{"version":1,"kind":"link_loss","summary":"link a","capture":{"from_ns":1,"to_ns":2,"probes_kept":1},"groups":[{"role":"suspect","kind":"link","name":"a"}],"tuples":[{"group":0,"agent_id":"h1","path":[{"link":1,"name":"a"},null]}],"probes":{"rows":[[0,1,true,0,0]]},"verdicts":[{"start_ns":1,"rivals":[{"name":"b","loss":0.1}]}],"counters":[{"agent_id":"h1","nic":0,"deltas":{"x":1}}],"flight_records":[{"agent_id":"h1","events":[{"kind":"log","text":"t"}]}]}
JSON
cat >"$corpus/ctl_evidence/incident" <<'JSON'
7
{"id":7,"kind":"rnic_down","open":true,"diagnosis":{"type":"x"}}
JSON
du -sh "$corpus"/* | sort -k2
