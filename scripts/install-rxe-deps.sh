#!/usr/bin/env bash
# Installs what the soft-RoCE harness (deploy/testbed/rxe) and the rdma tests
# need beyond scripts/install-deps.sh: QEMU (software emulation) and Debian's
# kernel with rdma_rxe for the guests, busybox-static and rdma-core's tools for
# their root, tcpdump to read the wire. About 300 MB, so kept apart; a no-op
# when all are present. scripts/test.sh runs it; the rdma tests skip (with the
# reason) if it could not install them.
set -euo pipefail

packages=(qemu-system-x86 linux-image-amd64 busybox-static rdma-core ibverbs-utils tcpdump kmod binutils)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-rxe-deps: missing packages (${missing[*]}); run as root to install them" >&2
  exit 1
fi
echo "install-rxe-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
