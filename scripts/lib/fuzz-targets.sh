# Sourced by scripts/fuzz-smoke.sh and bench/fuzz.sh: what both do with the
# libFuzzer targets built in a build dir.

# fuzz_run_targets BUILD JOBS FN TARGET...: runs `FN TARGET` in the background
# for each target, at most JOBS at once, and waits for all of them. Returns 2,
# naming it, at the first target whose binary BUILD/fuzz/TARGET_fuzz is missing.
fuzz_run_targets() {
  local build=$1 jobs=$2 fn=$3
  shift 3
  local running=0 target
  for target in "$@"; do
    if [ ! -x "$build/fuzz/${target}_fuzz" ]; then
      echo "$(basename "$0"): no fuzz target $target in $build/fuzz" >&2
      return 2
    fi
    "$fn" "$target" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
      wait -n
      running=$((running - 1))
    fi
  done
  wait
}
