"""rxevm commands: check, image, boot, exec, stop."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from hmfabric import inventory, pki, state

from . import initramfs, vm

# hmrxe -> rxe -> testbed -> deploy -> the repository
REPO = os.path.realpath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 4))
INIT_SCRIPT = os.path.join(os.path.dirname(os.path.realpath(__file__)), "guest_init.sh")
# rxe's GID table holds RoCEv2 entries only: [0] the MAC-derived fe80::, [1] the NIC's IPv4.
RXE_IPV4_GID_INDEX = 1


GUEST_TLS_DIR = "etc/hostmesh/tls"
# The verbs device tests (build tree paths) the guest carries for tests/rdma,
# which runs them against its rxe devices; the image goes without them when
# the build has no tests.
GUEST_TESTS = ["tests/agent/verbs/agent_verbs_verbs_transport_test",
               "tests/agent/verbs/agent_verbs_device_discovery_test"]


def verbs_agent_config(lay, host: str, transport: str) -> dict:
    """The testbed's agent config with each NIC on its rxe device, uploading over
    mutual TLS with the fabric's certificates, copied into the guest."""
    guest = "/" + GUEST_TLS_DIR
    config = inventory.agent_config(lay, host, tls={
        "ca": f"{guest}/ca.crt", "cert": f"{guest}/{host}.crt", "key": f"{guest}/{host}.key",
        "server_name": pki.ANALYZER_DNS})
    config["transport"] = transport
    # POST /debug/qp-error: the test forces a QP into the error state, which
    # no tool outside the agent's process can do to its QPs. The hooks listen
    # on the guest's loopback (127.0.0.1:9101): `rxevm exec` reaches them.
    config.setdefault("metrics", {})["debug_hooks"] = True
    for r, nic in enumerate(config["nics"]):
        nic.update(rdma_device=f"rxe{r}", gid_index=RXE_IPV4_GID_INDEX)
    return config


def base_image(build_dir: str) -> tuple[str, str]:
    """(kernel, base initramfs), the initramfs rebuilt when the agent changed."""
    kver = initramfs.kernel_version()
    agent = os.path.join(build_dir, "agent", "main", "hostmesh-agent")
    out = os.path.join(state.STATE_ROOT, "rxe-base.cpio")
    tests = [p for p in (os.path.join(build_dir, t) for t in GUEST_TESTS) if os.path.exists(p)]
    inputs = [agent, initramfs.verbs_module(agent), INIT_SCRIPT, initramfs.__file__, *tests]
    stamp = out + ".tests"  # which tests went in: a build that gained them rebuilds it
    stale = not os.path.exists(out) or not os.path.exists(stamp) or \
        os.path.getmtime(out) < max(os.path.getmtime(p) for p in inputs)
    if not stale:
        with open(stamp) as f:
            stale = f.read() != "\n".join(tests)
    if stale:
        os.makedirs(state.STATE_ROOT, exist_ok=True)
        t0 = time.monotonic()
        tmp = f"{out}.{os.getpid()}.new"  # two fabrics may build at once
        info = initramfs.build_base(tmp, agent, INIT_SCRIPT, kver, tests)
        os.replace(tmp, out)
        with open(stamp, "w") as f:
            f.write("\n".join(tests))
        print(f"rxevm: initramfs {out}: {info['bytes'] / 2**20:.1f} MiB, {info['modules']} "
              f"modules, {info['libraries']} libraries, {info['tests']} test binaries, "
              f"{time.monotonic() - t0:.1f}s", file=sys.stderr)
    return f"/boot/vmlinuz-{kver}", out


def cmd_check(args: argparse.Namespace) -> int:
    why = vm.requirements()
    print(why or "ok")
    return 1 if why else 0


def cmd_boot(args: argparse.Namespace) -> int:
    why = vm.requirements()
    if why:
        raise vm.VmError(f"cannot boot: {why}")
    pfx = state.prefix()
    lay = state.current(pfx)[0]
    h = lay.host_index(args.host)
    kernel, base = base_image(args.build)
    files = {"etc/hostmesh/vm.conf": vm.vm_conf(lay, h, agent=args.transport != "none")}
    if args.transport != "none":
        config = verbs_agent_config(lay, args.host, args.transport)
        if args.interval:
            config["probe"]["interval"] = args.interval
        files["etc/hostmesh/agent.yaml"] = inventory.to_yaml(config, [f"rxevm {args.host}"])
        pki_dir = pki.ensure(state.state_dir(pfx), [args.host])
        for name in ("ca.crt", f"{args.host}.crt", f"{args.host}.key"):
            with open(os.path.join(pki_dir, name)) as f:
                files[f"{GUEST_TLS_DIR}/{name}"] = f.read()
    record = vm.boot(lay, h, kernel, base, files, args.mem, args.timeout)
    print(json.dumps(record, indent=1))
    return 0


def cmd_exec(args: argparse.Namespace) -> int:
    lay = state.current(state.prefix())[0]
    print(vm.guest_exec(lay, lay.host_index(args.host), " ".join(args.cmd)), end="")
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    pfx = state.prefix()
    n = vm.stop(pfx, args.host) if args.host else vm.stop_all(pfx)
    print(f"rxevm: stopped {n} VM(s)")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rxevm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="can a VM boot here?").set_defaults(func=cmd_check)
    p = sub.add_parser("boot", help="boot the soft-RoCE VM of a fabric host")
    p.add_argument("host")
    p.add_argument("--build", default=os.path.join(REPO, "build"))
    p.add_argument("--transport", default="verbs", choices=["verbs", "auto", "none"],
                   help="the agent's transport (none: no agent)")
    p.add_argument("--interval", help="probe interval, e.g. 20ms")
    p.add_argument("--mem", type=int, default=512, help="guest memory, MiB")
    p.add_argument("--timeout", type=float, default=180)
    p.set_defaults(func=cmd_boot)
    p = sub.add_parser("exec", help="run a shell command in a guest")
    p.add_argument("host")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_exec)
    p = sub.add_parser("stop", help="stop one VM, or all of the prefix")
    p.add_argument("host", nargs="?")
    p.set_defaults(func=cmd_stop)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (vm.VmError, initramfs.Missing, state.StateError, ValueError) as e:
        print(f"rxevm: {e}", file=sys.stderr)
        return 1
