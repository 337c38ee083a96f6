#!/usr/bin/env bash
# Certificates for bench/ingest_bench --tls: a CA of the benchmark's own, the
# analyzer's server certificate (DNS hostmesh-analyzer, IP 127.0.0.1) and one
# client certificate per stream, each naming its agent as the fleet's do
# (DNS SAN bench-<i>, hostile-<i>; docs/security.md). The clients share one
# key, so 10,000 certificates take a minute, not an hour of key generation;
# the analyzer checks a certificate's names, not that keys differ.
# Usage: bench/make_bench_pki.sh DIR STREAMS [HOSTILE]   (existing files are kept)
set -euo pipefail
dir=${1:?usage: make_bench_pki.sh DIR STREAMS [HOSTILE]}
streams=${2:?usage: make_bench_pki.sh DIR STREAMS [HOSTILE]}
hostile=${3:-0}
mkdir -p "$dir"
cd "$dir"
ec() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
[ -f ca.key ] || ec ca.key
[ -f ca.crt ] || openssl req -x509 -new -key ca.key -subj "/CN=hostmesh bench CA" -days 30 \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign -out ca.crt
[ -f server.key ] || ec server.key
[ -f server.crt ] || openssl req -x509 -new -CA ca.crt -CAkey ca.key -key server.key \
  -subj /CN=hostmesh-analyzer -days 30 -addext "subjectAltName=DNS:hostmesh-analyzer,IP:127.0.0.1" \
  -addext extendedKeyUsage=serverAuth -addext basicConstraints=CA:FALSE -out server.crt 2>/dev/null
[ -f client.key ] || ec client.key
issue() {
  [ -f "$1.crt" ] && return 0
  openssl req -x509 -new -CA ca.crt -CAkey ca.key -key client.key -subj "/CN=$1" -days 30 \
    -addext "subjectAltName=DNS:$1" -addext extendedKeyUsage=clientAuth \
    -addext basicConstraints=CA:FALSE -out "$1.crt.new" 2>/dev/null
  mv "$1.crt.new" "$1.crt"
}
for ((i = 0; i < streams; i++)); do issue "bench-$i"; done
for ((i = 0; i < hostile; i++)); do issue "hostile-$i"; done
echo "make_bench_pki: $dir holds a CA, the analyzer's certificate, $streams agents' and $hostile hostile ones"
