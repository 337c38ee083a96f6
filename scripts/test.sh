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
ctest --test-dir "$build" --output-on-failure -j2 "$@"
