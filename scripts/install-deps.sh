#!/usr/bin/env bash
# Installs every Debian 12 package hostmesh needs to build, test and run its
# testbed. A no-op (no apt-get call at all) when they are all present.
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build pkg-config make clang-format
  # libraries
  libibverbs-dev ibverbs-providers
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  librocksdb-dev libboost-graph-dev libspdlog-dev libfmt-dev libyaml-cpp-dev
  libcli11-dev libmicrohttpd-dev libgnutls28-dev libgtest-dev libgmock-dev libbenchmark-dev
  prometheus-cpp-dev nlohmann-json3-dev libcurl4-openssl-dev
  libnetfilter-queue-dev libmnl-dev libjemalloc-dev libarchive-dev
  # testbed and test tools
  python3 python3-yaml iproute2 nftables iptables stress-ng traceroute iputils-ping procps
  prometheus socat jq curl openssl
  # operator-facing checks: systemd-analyze for the units, dpkg-dev for the
  # Debian packages' dependencies, chromium for the on-call page (driven by
  # playwright-core from npm, with the machine's Node.js and npm)
  systemd dpkg-dev chromium
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# Node.js and npm for the browser test: Debian's, unless the machine already
# has both commands (a NodeSource nodejs carries its own npm and conflicts
# with Debian's npm package).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages (${missing[*]}); run as root to install them" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
