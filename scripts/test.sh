#!/usr/bin/env bash
# Runs every hostmesh test: installs what is missing, builds with warnings as
# errors, then ctest. Tests that need root or namespaces skip with a reason
# when they cannot run. Extra arguments go to ctest (for example: -L unit).
# On CI (CI=true) a skip fails the run unless tests/ci-skip-allowlist.txt
# lists it with its reason (scripts/check-skips.py), and so does a failed
# install of the rdma tests' packages.
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTMESH_WERROR=ON bash scripts/build.sh
on_ci=false
if [ "${CI:-}" = true ]; then on_ci=true; fi
# QEMU and a kernel for the rdma tests. Off CI they skip with the reason if
# this fails; on CI the run fails (after ctest), it does not turn into skips.
rxe_deps_failed=false
if ! bash scripts/install-rxe-deps.sh; then
  if $on_ci; then
    rxe_deps_failed=true
    echo "test: soft-RoCE packages not installed (scripts/install-rxe-deps.sh failed); on CI this fails the run" >&2
  else
    echo "test: soft-RoCE packages not installed; rdma tests will skip" >&2
  fi
fi
build=${HOSTMESH_BUILD_DIR:-build}
junit="$(cd "$build" && pwd)/ctest-junit.xml"  # absolute: ctest takes a relative one from --test-dir
rm -f "$junit"
rc=0
# A passed test's output is kept whole (to 1 MiB, not ctest's 1 KiB) in the
# report: the rdma test's guest results are printed from it below.
ctest --test-dir "$build" --output-on-failure --output-junit "$junit" \
  --test-output-size-passed 1048576 -j2 "$@" || rc=$?
# Every skip with its reason; on CI, one not on the allowlist fails the run.
if $on_ci; then
  if ! python3 scripts/check-skips.py "$junit"; then
    echo "test: failing the run: skips outside tests/ci-skip-allowlist.txt, or no report to check (above)" >&2
    rc=1
  fi
else
  python3 scripts/check-skips.py --report-only "$junit" || true
fi
# The verbs device tests' outcomes in the soft-RoCE guest (the rdma test ran
# them there), in the log whether it passed or not.
python3 scripts/guest-test-results.py "$junit" || true
if $rxe_deps_failed; then
  echo "test: failing the run: scripts/install-rxe-deps.sh failed on CI, so the rdma tests could not run" >&2
  rc=1
fi
# The fuzz smoke (fuzz/: a clang build of its own, then every target a few
# seconds over its corpus), after ctest and only for a full run (no ctest
# arguments). Not beside ctest: even at nice 19 it coincided with a false
# latency hotspot in the lasting-fault test's loaded-machine phase.
if [ $# -eq 0 ]; then
  fuzz_log="$build/fuzz-smoke.log"
  if bash scripts/fuzz-smoke.sh >"$fuzz_log" 2>&1; then
    tail -1 "$fuzz_log"
  else
    echo "test: the fuzz smoke failed (log $fuzz_log):" >&2
    tail -40 "$fuzz_log" >&2
    rc=1
  fi
fi
exit "$rc"
