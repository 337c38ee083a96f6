"""End-to-end: on the emulated fabric, whose agents upload over mutual TLS
as a deployed fleet does, agents that are not who they say they are upload
nothing, and the fleet's verdicts stay as they were (issue 24).

From host h000's namespace (a compromised host, or anyone on its network),
three impostor agents claim to be agents of host h001 (ids of their own, so
any upload that got through would show as an agent the fleet does not have):
  - with h000's own certificate: the analyzer refuses its Hello with
    PERMISSION_DENIED and counts it (hostmesh_ingest_hellos_denied_total);
  - with a certificate for h001 from a CA of its own: the handshake fails;
  - in plaintext: the handshake fails.
Nothing of theirs reaches the analyzer: it knows the fleet's agents and no
more, and no window blames h001's NICs or anything else.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time

import e2e
import harness
from hmfabric import inventory, pki, start_cmd, state
from hmfabric import layout as L

IMPOSTOR_HOST = "h000"  # where the impostors run
VICTIM = "h001"  # whom they claim to be
# Ports of their own, so they run beside h000's real agent.
IMPOSTOR_METRICS_PORTS = (9101, 9102, 9103)
IMPOSTOR_SOURCE_PORTS = ((61000, 61099), (61100, 61199), (61200, 61299))
IMPOSTOR_PROBE_PORTS = (4792, 4793, 4794)


def analyzer_counter(name: str) -> float:
    """A counter of the analyzer's /metrics (0 when absent), from the mgmt namespace."""
    proc = e2e.fabric("exec", "mgmt", "--", "curl", "-sf", "-m", "10",
                      f"http://{L.ANALYZER_IP}:{L.ANALYZER_HTTP_PORT}/metrics", check=False)
    if proc.returncode != 0:
        raise AssertionError(f"analyzer /metrics did not answer: {proc.stderr.strip()}")
    match = re.search(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$", proc.stdout, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


class ForgedUpload(e2e.FabricTestCase):
    def impostor_config(self, n: int, tls: dict | None, workdir: str) -> str:
        """An agent config claiming to be an agent of VICTIM, run in
        IMPOSTOR_HOST's namespace with that host's NICs."""
        lay = self.fab.layout
        config = inventory.agent_config(lay, IMPOSTOR_HOST, IMPOSTOR_SOURCE_PORTS[n], tls)
        config["host"] = VICTIM
        config["agent_id"] = f"{VICTIM}-impostor{n}"
        config["metrics"]["listen"] = (f"{L.mgmt_ip(lay.host_index(IMPOSTOR_HOST))}:"
                                       f"{IMPOSTOR_METRICS_PORTS[n]}")
        config["probe"]["dst_port"] = IMPOSTOR_PROBE_PORTS[n]
        config["traceroute"]["enabled"] = False
        path = os.path.join(workdir, f"impostor{n}.yaml")
        with open(path, "w") as f:
            f.write(inventory.to_yaml(config, [f"impostor {n} claiming {VICTIM}"]))
        return path

    def test_impostors_upload_nothing_and_verdicts_stand(self):
        self.wait_healthy_window()
        pki_dir = os.path.join(state.state_dir(harness.PREFIX), "pki")
        real = pki.agent_tls(pki_dir, IMPOSTOR_HOST)
        _, agent_bin = start_cmd.binaries(None)
        denied_before = analyzer_counter("hostmesh_ingest_hellos_denied_total")
        with tempfile.TemporaryDirectory(prefix="hm-impostor-") as workdir:
            # A CA of the attacker's own, with a certificate naming the victim;
            # it trusts the fleet's CA (public) to reach the analyzer.
            foreign = pki.ensure(os.path.join(workdir, "foreign"), [VICTIM])
            foreign_tls = dict(pki.agent_tls(foreign, VICTIM), ca=real["ca"])
            configs = [self.impostor_config(0, real, workdir),
                       self.impostor_config(1, foreign_tls, workdir),
                       self.impostor_config(2, None, workdir)]
            procs, logs = [], []
            try:
                for n, cfg in enumerate(configs):
                    log = open(os.path.join(workdir, f"impostor{n}.log"), "w+")
                    logs.append(log)
                    procs.append(subprocess.Popen(
                        ["ip", "netns", "exec", self.fab.ns(IMPOSTOR_HOST), agent_bin,
                         "--config", cfg], stdout=log, stderr=subprocess.STDOUT))
                start = time.time()
                # Two whole windows of the impostors' results, had they been taken.
                for snap in self.windows_until(self.windows_after(start, 3),
                                               self.deadline_for(self.windows_after(start, 3))):
                    blamed = [r for r in snap.anomalous_rnics() if r.get("host") == VICTIM]
                    self.assertEqual(blamed, [], f"{VICTIM}'s NICs blamed: {snap.describe()}")
                    self.assertEqual(snap.culprits(), [], snap.describe())
                for n, p in enumerate(procs):
                    self.assertIsNone(p.poll(), f"impostor {n} exited: {self.tail(logs[n])}")
            finally:
                for p in procs:
                    p.send_signal(signal.SIGTERM)
                for p in procs:
                    try:
                        p.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()
            texts = [self.tail(log, lines=10_000) for log in logs]
            for log in logs:
                log.close()
        e2e.log("impostor logs (tails):\n" +
                "\n---\n".join("".join(t.splitlines(True)[-15:]) for t in texts))
        # The one with a fleet certificate reached the analyzer and was denied;
        # the other two never completed a handshake.
        self.assertGreaterEqual(
            analyzer_counter("hostmesh_ingest_hellos_denied_total") - denied_before, 1)
        self.assertIn("Hello: PERMISSION_DENIED", texts[0])
        for n in (1, 2):
            self.assertIn("Hello: UNAVAILABLE", texts[n], f"impostor {n} got past the handshake")
        status = e2e.api("status") or {}
        self.assertEqual(status.get("agents_known"), self.HOSTS, status)
        self.assertEqual(status.get("agents_present"), self.HOSTS, status)

    @staticmethod
    def tail(log, lines: int = 15) -> str:
        log.flush()
        log.seek(0)
        return "".join(log.readlines()[-lines:])


if __name__ == "__main__":
    e2e.main()
