#!/usr/bin/env bash
# Runs every hostmesh test: installs what is missing, builds with warnings as
# errors, then ctest. Tests that need root or namespaces skip with a reason
# when they cannot run. Extra arguments go to ctest (for example: -L unit).
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTMESH_WERROR=ON bash scripts/build.sh
# QEMU and a kernel for the rdma tests; they skip with the reason if this fails.
bash scripts/install-rxe-deps.sh || echo "test: soft-RoCE packages not installed; rdma tests will skip" >&2
build=${HOSTMESH_BUILD_DIR:-build}
rc=0
ctest --test-dir "$build" --output-on-failure -j2 "$@" || rc=$?
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
