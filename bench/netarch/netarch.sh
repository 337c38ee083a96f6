#!/usr/bin/env bash
# Builds netarch/FaultLocalization's single-file driver once per localizer and
# runs them on the windows to_netarch.py wrote (bench/netarch/README.md).
#
#   netarch.sh build CHECKOUT BUILD_DIR
#       CHECKOUT: a checkout of netarch/FaultLocalization (GitHub). Copies its
#       localization/c++ into BUILD_DIR and builds analysis/loss_estimator three
#       times, each with one localizer and the settings reproduce_results.cpp
#       published for it: loss_estimator_{flock,007,netbouncer}.
#       Needs g++ >= 8, make, OpenMP and sparsehash (apt-get install libsparsehash-dev).
#   netarch.sh run CONVERTED_DIR BUILD_DIR OUT_DIR [LOCALIZER ...]
#       Runs each localizer (default: flock 007 netbouncer) on every window:
#       OUT_DIR/<localizer>/wNNNN.out is netarch's output, "Output Hypothesis: ..."
#       its verdict. NETARCH_THREADS sets its OpenMP threads (default 2).
set -euo pipefail

# loss_estimator.cpp picks its estimator in source: the lines from
# "Sherlock estimator;" to "INPUT_FLOW_TYPE = ALL_FLOWS;" are replaced with
# one localizer and its published scheme (reproduce_results.cpp:
# SweepParamsBayesianNet "bnet_int", SweepParams007 "007_a2",
# GetParamsNetBouncer "nb_int").
settings() {
  case "$1" in
    flock) echo 'BayesianNet estimator; vector<double> params = {1.0 - 0.003, 0.0002, -15.0};
    PATH_KNOWN = true; INPUT_FLOW_TYPE = ALL_FLOWS;' ;;
    007) echo 'DoubleO7 estimator; vector<double> params = {0.0023};
    PATH_KNOWN = false; TRACEROUTE_BAD_FLOWS = true; INPUT_FLOW_TYPE = PROBLEMATIC_FLOWS;' ;;
    netbouncer) echo 'NetBouncer estimator; vector<double> params = {0.011, 0.002, 0.075};
    PATH_KNOWN = true; INPUT_FLOW_TYPE = ALL_FLOWS;' ;;
    *) echo "unknown localizer: $1 (flock, 007, netbouncer)" >&2; return 2 ;;
  esac
}

build() {
  local checkout=$1 dir=$2 src loc
  src="$checkout/localization/c++"
  [[ -f "$src/analysis/loss_estimator.cpp" ]] || {
    echo "$src/analysis/loss_estimator.cpp: not found (a FaultLocalization checkout?)" >&2
    return 2
  }
  mkdir -p "$dir"
  cp -r "$src/." "$dir/"
  make -C "$dir/utils" -j2 >/dev/null
  make -C "$dir/algorithms" -j2 >/dev/null
  for loc in flock 007 netbouncer; do
    sed "/^    Sherlock estimator;/,/^    INPUT_FLOW_TYPE = ALL_FLOWS;/c\\
    $(settings "$loc" | sed 's/$/\\/')
" "$src/analysis/loss_estimator.cpp" >"$dir/analysis/loss_estimator_$loc.cpp"
    # The upstream lines moved: fail rather than build the wrong localizer.
    if grep -q '^    Sherlock estimator;' "$dir/analysis/loss_estimator_$loc.cpp"; then
      echo "loss_estimator.cpp changed upstream: cannot select $loc" >&2
      return 2
    fi
    (cd "$dir/analysis" && g++ -I../utils -I../algorithms -std=c++17 -O3 -fopenmp -ffast-math \
      -w -o "loss_estimator_$loc" "loss_estimator_$loc.cpp" -L../utils -L../algorithms \
      -lflock -lflockalg)
  done
  echo "built $dir/analysis/loss_estimator_{flock,007,netbouncer}"
}

run() {
  local conv=$1 dir=$2 out=$3 window loc trace name
  shift 3
  local locs=("$@")
  [[ ${#locs[@]} -gt 0 ]] || locs=(flock 007 netbouncer)
  window=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["window_s"])' \
    "$conv/windows.json")
  for loc in "${locs[@]}"; do
    [[ -x "$dir/analysis/loss_estimator_$loc" ]] || {
      echo "$dir/analysis/loss_estimator_$loc: not built (flock, 007, netbouncer)" >&2
      return 2
    }
  done
  for loc in "${locs[@]}"; do
    mkdir -p "$out/$loc"
    for trace in "$conv"/w*.trace; do
      name=$(basename "$trace" .trace)
      # A crash (netarch asserts) leaves no verdict: the scorer counts the window.
      "$dir/analysis/loss_estimator_$loc" "$trace" "$conv/topology.txt" 0 "$window" \
        "${NETARCH_THREADS:-2}" >"$out/$loc/$name.out" 2>&1 || echo "$loc $name: exit $?" >&2
    done
  done
}

usage() {
  echo "usage: $0 build CHECKOUT BUILD_DIR | run CONVERTED_DIR BUILD_DIR OUT_DIR [LOC ...]" >&2
  exit 2
}

case "${1:-}" in
  build) [[ $# -eq 3 ]] || usage; build "$2" "$3" ;;
  run) [[ $# -ge 4 ]] || usage; shift; run "$@" ;;
  *) usage ;;
esac
