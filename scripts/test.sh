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
# The fuzz smoke (fuzz/: a clang build of its own, then every target a few
# seconds over its corpus) runs beside ctest at the lowest CPU priority: it
# takes the CPU the fabric tests leave idle, and barely any they want. Only
# for a full run (no ctest arguments).
fuzz_pid=
if [ $# -eq 0 ]; then
  bash scripts/fuzz-smoke.sh --install-only
  fuzz_log="$build/fuzz-smoke.log"
  nice -n 19 bash scripts/fuzz-smoke.sh >"$fuzz_log" 2>&1 &
  fuzz_pid=$!
fi
rc=0
ctest --test-dir "$build" --output-on-failure -j2 "$@" || rc=$?
if [ -n "$fuzz_pid" ]; then
  if wait "$fuzz_pid"; then
    tail -1 "$fuzz_log"
  else
    echo "test: the fuzz smoke failed (log $fuzz_log):" >&2
    tail -40 "$fuzz_log" >&2
    rc=1
  fi
fi
exit "$rc"
