#!/bin/sh
# PID 1 of a soft-RoCE guest. /etc/hostmesh/vm.conf (the per-VM archive) sets
# NICS="mac ip/31 gateway ..." (one triple per rail, in rail order), MGMT="mac ip/prefix",
# and AGENT=1 to run the agent on /etc/hostmesh/agent.yaml.
export PATH=/bin:/usr/bin:/sbin:/usr/sbin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu
# busybox runs its own applets first: iproute2's ip (policy rules) must be asked for.
ip() { /usr/bin/ip "$@"; }
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
echo "hm-guest: init at $(cat /proc/uptime)"
for m in /lib/modules/*.ko; do insmod "$m" || echo "hm-guest: insmod $m failed"; done
. /etc/hostmesh/vm.conf

# The fabric is IPv4 only; NIC-to-NIC probes leave through the sending NIC and
# come back from a local source address (DESIGN 4.3), exactly as in a host namespace.
sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
sysctl -qw net.ipv4.conf.all.accept_local=1 net.ipv4.conf.default.accept_local=1
ip link set lo up

ifname_of() {  # the interface with MAC $1
  for d in /sys/class/net/*; do
    [ "$(cat "$d/address")" = "$1" ] && { basename "$d"; return; }
  done
}

r=0
set -- $NICS
while [ $# -ge 3 ]; do
  dev=$(ifname_of "$1"); ip=${2%/*}; gw=$3; table=$((100 + r))
  ip link set "$dev" name "nic$r"; dev=nic$r
  ip link set "$dev" up
  ip addr add "$2" dev "$dev"
  # The kernel drops a NIC's routes when its link goes down: /run/nic<r>.routes
  # puts them back after `ip link set nic<r> up` (the rdma test bounces a NIC).
  printf '/usr/bin/ip route replace %s dev %s src %s table %s\n/usr/bin/ip route replace default via %s dev %s table %s\n' \
    "$gw/31" "$dev" "$ip" $table "$gw" "$dev" $table > /run/$dev.routes
  sh /run/$dev.routes
  ip rule add from "$ip" iif lo lookup $table pref $((100 + r))
  ip rule add oif "$dev" lookup $table pref $((200 + r))
  rdma link add "rxe$r" type rxe netdev "$dev" || echo "hm-guest: rdma link add rxe$r failed"
  r=$((r + 1)); shift 3
done
ip rule add lookup local pref 1000
ip rule del pref 0 lookup local
set -- $MGMT
dev=$(ifname_of "$1"); ip link set "$dev" name mgmt0; ip link set mgmt0 up; ip addr add "$2" dev mgmt0

for d in /sys/class/infiniband/*; do
  n=$(basename "$d")
  for g in 0 1 2 3; do
    gid=$(cat "$d/ports/1/gids/$g" 2>/dev/null); typ=$(cat "$d/ports/1/gid_attrs/types/$g" 2>/dev/null)
    [ -n "$typ" ] && echo "hm-guest: $n gid[$g] $gid $typ"
  done
done
echo "hm-guest: ready at $(cat /proc/uptime) mem: $(grep -E 'MemTotal|MemAvailable' /proc/meminfo | tr -s ' ' | tr '\n' ' ')"

if [ "${AGENT:-0}" = 1 ]; then
  hostmesh-agent --config /etc/hostmesh/agent.yaml >/dev/console 2>&1 &
fi
# A root shell on the management port for tests (the fabric is a private sandbox).
nc -ll -p 2323 -e /bin/sh 2>/dev/null &
while true; do
  sleep 5
  [ -e /tmp/poweroff ] && poweroff -f
done
