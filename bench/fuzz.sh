#!/usr/bin/env bash
# Long fuzzing runs of the libFuzzer targets (fuzz/): each target runs until
# it has executed --runs inputs or --seconds have passed, whichever comes
# first, over a corpus kept in the build dir (seeded from fuzz/corpus/, grown
# by every run). Prints per target: executions, coverage (libFuzzer's cov:
# edges and ft: features), corpus size, and crashes (with the input saved).
# Not run in CI; scripts/fuzz-smoke.sh is the short run. Build dir:
# HOSTMESH_FUZZ_BUILD_DIR (default build-fuzz-bench, at -O1).
#
# Usage: bench/fuzz.sh [--targets a,b,...] [--runs N] [--seconds S] [--jobs J]
#   --targets  names as in fuzz/corpus/ (probe_codec, analyzer_ingest, ...); default all
#   --runs     executions per target (default 1000000)
#   --seconds  time per target (default 600)
#   --jobs     targets run at once (default 1; each takes one core)
set -euo pipefail
cd "$(dirname "$0")/.."

targets=""
runs=1000000
seconds=600
jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --targets) targets=${2//,/ }; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "bench/fuzz.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$targets" ] || targets=$(ls fuzz/corpus)

# Its own build dir, at -O1 (the smoke run's is at -O0, quicker to build).
build=${HOSTMESH_FUZZ_BUILD_DIR:-build-fuzz-bench}
HOSTMESH_FUZZ_BUILD_DIR=$build HOSTMESH_FUZZ_OPT=${HOSTMESH_FUZZ_OPT:--O1} \
  bash scripts/fuzz-smoke.sh --build-only >/dev/null
out="$build/fuzz-bench"
mkdir -p "$out"

run_one() {
  local target=$1
  echo "bench/fuzz.sh: $target (up to $runs runs or ${seconds}s)..." >&2
  local corpus="$out/corpus/$target"
  mkdir -p "$corpus"
  rm -f "$out/$target-"crash-* "$out/$target-"leak-* "$out/$target-"timeout-* "$out/$target-"oom-*
  local start=$SECONDS
  "$build/fuzz/${target}_fuzz" -runs="$runs" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$out/$target-" \
    "$corpus" "fuzz/corpus/$target" >"$out/$target.log" 2>&1 || true
  echo $((SECONDS - start)) >"$out/$target.seconds"
}

# shellcheck source=scripts/lib/fuzz-targets.sh
source scripts/lib/fuzz-targets.sh
# shellcheck disable=SC2086 # $targets is a word list
fuzz_run_targets "$build" "$jobs" run_one $targets

printf '%-22s %12s %8s %8s %8s %10s %8s %8s\n' target executions exec/s cov ft corpus seconds crashes
for target in $targets; do
  log="$out/$target.log"
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -1)
  rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+[[:space:]]' "$log" | grep -E 'cov: ' | tail -1 || true)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  corp=$(sed -nE 's/.* corp: ([0-9]+\/[0-9]+[a-zA-Z]*).*/\1/p' <<<"$last")
  crashes=$(find "$out" -maxdepth 1 -name "$target-*" -type f | wc -l)
  # A run cut short by a crash still has its #N lines; the final stats may be missing.
  [ -n "$execs" ] || execs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$last")
  printf '%-22s %12s %8s %8s %8s %10s %8s %8s\n' "$target" "${execs:-?}" "${rate:-?}" \
    "${cov:-?}" "${ft:-?}" "${corp:-?}" "$(cat "$out/$target.seconds")" "$crashes"
  if [ "$crashes" -gt 0 ]; then
    find "$out" -maxdepth 1 -name "$target-*" -type f -printf '  input: %p\n'
    grep -m3 -E 'ERROR|FUZZ_CHECK|runtime error' "$log" | sed 's/^/  /' || true
  fi
done
