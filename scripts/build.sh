#!/usr/bin/env bash
# Installs what is missing (apt-get) and builds hostmesh into $HOSTMESH_BUILD_DIR
# (default: build/). Incremental: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
build=${HOSTMESH_BUILD_DIR:-build}
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S . -B "$build" -G Ninja -DHOSTMESH_WERROR="${HOSTMESH_WERROR:-$werror}" >/dev/null
ninja -C "$build"
