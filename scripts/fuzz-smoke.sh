#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang in their own build dir and
# runs each briefly over its seed corpus: a crash, a sanitizer report or a
# broken check fails the script. About 5 minutes from a fresh machine on 2
# cores (clang install, instrumented build, 13 targets x 5 s); under a minute
# when nothing changed.
#
# Environment: HOSTMESH_FUZZ_BUILD_DIR (default build-fuzz), HOSTMESH_FUZZ_OPT
# (default -O0: the quickest build), FUZZ_SMOKE_SECONDS per target (default
# 5), FUZZ_SMOKE_TARGETS (space-separated names such as "probe_codec
# store_keys"; default all), HOSTMESH_JOBS (default 2: also how many targets
# run at once).
# `--build-only` configures and builds, and runs nothing (bench/fuzz.sh uses it);
# `--install-only` installs the toolchain and stops.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${HOSTMESH_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SMOKE_SECONDS:-5}
jobs=${HOSTMESH_JOBS:-2}
build_only=false
install_only=false
[ "${1:-}" = "--build-only" ] && build_only=true
[ "${1:-}" = "--install-only" ] && install_only=true

# Debian 12's clang 14 and its runtimes (libFuzzer, ASan, UBSan).
toolchain=(clang libclang-rt-14-dev)
missing=()
for p in "${toolchain[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz-smoke: installing ${missing[*]}" >&2
  if ! { [ "$(id -u)" -eq 0 ] && apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
    if [ "${CI:-}" = "true" ]; then
      echo "fuzz-smoke: cannot install ${missing[*]}" >&2
      exit 1
    fi
    echo "fuzz-smoke: skipped: ${missing[*]} not installed (run as root to install)" >&2
    exit 0
  fi
fi
$install_only && exit 0
bash scripts/install-deps.sh

werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DHOSTMESH_FUZZ=ON \
  -DHOSTMESH_WERROR="${HOSTMESH_WERROR:-$werror}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHOSTMESH_FUZZ_OPT="${HOSTMESH_FUZZ_OPT:--O0}" \
  "${launcher[@]}" >/dev/null
ninja -C "$build" -j "$jobs" fuzz_all
$build_only && exit 0

targets=${FUZZ_SMOKE_TARGETS:-$(ls fuzz/corpus)}
artifacts="$build/fuzz-artifacts"
rm -rf "$artifacts"
mkdir -p "$artifacts"

# One target: its log and its verdict (ok or FAILED) in $artifacts.
run_target() {
  local target=$1
  local binary="$build/fuzz/${target}_fuzz"
  # New inputs go to a scratch corpus, never into the committed seeds.
  local scratch
  scratch=$(mktemp -d)
  if "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$target-" "$scratch" "fuzz/corpus/$target" \
    >"$artifacts/$target.log" 2>&1; then
    echo ok >"$artifacts/$target.verdict"
  else
    echo FAILED >"$artifacts/$target.verdict"
  fi
  rm -rf "$scratch"
}

# shellcheck source=scripts/lib/fuzz-targets.sh
source scripts/lib/fuzz-targets.sh
# shellcheck disable=SC2086 # $targets is a word list
fuzz_run_targets "$build" "$jobs" run_target $targets

failed=()
for target in $targets; do
  log="$artifacts/$target.log"
  if [ "$(cat "$artifacts/$target.verdict")" = ok ]; then
    stats=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|INITED)' "$log" | tail -1 | tr -s ' \t' ' ' || true)
    echo "fuzz-smoke: $target ok: $stats"
  else
    echo "fuzz-smoke: $target FAILED (log $log):" >&2
    grep -E 'ERROR|FUZZ_CHECK|runtime error|Test unit written' "$log" | head -5 >&2 || tail -20 "$log" >&2
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz-smoke: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz-smoke: $(echo $targets | wc -w) targets ran ${seconds}s each without a crash"
