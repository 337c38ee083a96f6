"""e2e 8: the analyzer killed with SIGKILL mid-run and started again. Agents
keep probing, reconnect and resend what the dead analyzer had not
acknowledged. Afterwards every result the agents produced is in the store
exactly once: per agent and source NIC the stored probe sequences run without
a gap from the first to the last, none stored twice (audited with
`hostmesh-analyzer --audit-store` once `fabric stop` has let the agents flush
and stopped the analyzer), no agent dropped a batch, and the restarted
analyzer judges windows again with every agent present."""

from __future__ import annotations

import json
import os
import subprocess
import time

import e2e
from hmfabric import layout, state  # noqa: E402  (on sys.path through e2e's harness)


def agent_counter(host_index: int, name: str) -> float:
    """Sum of an agent's counter samples (all label sets) from its /metrics."""
    mgmt_ip = layout.mgmt_ip(host_index)
    proc = e2e.fabric("exec", "mgmt", "--", "curl", "-sf", "-m", "5",
                      f"http://{mgmt_ip}:{layout.AGENT_METRICS_PORT}/metrics", check=False)
    if proc.returncode != 0:
        raise AssertionError(f"agent {host_index} /metrics did not answer")
    total = 0.0
    for line in proc.stdout.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


class AnalyzerRestart(e2e.FabricTestCase):
    def test_sigkill_restart_loses_and_duplicates_no_acknowledged_result(self):
        self.wait_healthy_window()
        killed_at = time.time()
        out = e2e.fabric("restart-analyzer", "--kill")
        e2e.log(out.stdout.strip())

        # The restarted analyzer judges windows again, every agent present.
        until = self.windows_after(killed_at, 2)
        last = None
        for snap in self.windows_until(until, self.deadline_for(until) + 30):
            last = snap
        status = e2e.api("status") or {}
        self.assertEqual(status.get("agents_present"), self.HOSTS, status)
        self.assertFalse(last.culprits(), last.describe())
        self.assertFalse(last.anomalous_rnics(), last.describe())

        for h in range(self.HOSTS):
            self.assertEqual(agent_counter(h, "hostmesh_agent_upload_batches_dropped_total"), 0)
            self.assertEqual(agent_counter(h, "hostmesh_agent_upload_results_dropped_total"), 0)

        # Agents first (their last batches reach the live analyzer), then it.
        e2e.fabric("stop")
        sdir = state.state_dir(e2e.harness.PREFIX)
        with open(os.path.join(sdir, "analyzer.log"), errors="replace") as f:
            log = f.read()
        self.assertIn("restored:", log)
        build = os.environ.get("HOSTMESH_BUILD_DIR") or os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "..", "..", "build")
        audit = subprocess.run(
            [os.path.join(build, "analyzer", "main", "hostmesh-analyzer"), "--config",
             os.path.join(sdir, "analyzer.yaml"), "--audit-store"],
            capture_output=True, text=True, check=False, timeout=120)
        self.assertIn(audit.returncode, (0, 1), audit.stderr)
        rows = [json.loads(line) for line in audit.stdout.splitlines() if line.strip()]
        e2e.log(f"audit: {len(rows)} (agent, boot, nic) rows, "
                f"{sum(r['stored'] for r in rows)} results stored")
        self.assertEqual(len({r["agent_id"] for r in rows}), self.HOSTS, rows)
        self.assertEqual(len(rows), self.HOSTS * self.RAILS, rows)  # one boot per agent
        for r in rows:
            self.assertEqual(r["duplicates"], 0, r)
            self.assertEqual(r["missing"], 0, r)
            self.assertLessEqual(r["first_seq"], 1, r)
            self.assertGreater(r["distinct"], 100, r)
        self.assertEqual(audit.returncode, 0, audit.stdout)


if __name__ == "__main__":
    e2e.main()
