#!/usr/bin/env python3
"""deploy/kubernetes, checked offline (no cluster, no kubectl here).

- Structure: every document parses; kinds and apiVersions are the stable ones;
  everything lives in namespace hostmesh; selectors match their pod labels;
  named ports, Service targets, volumes and ConfigMaps refer to what exists;
  the kustomization lists every manifest.
- Least privilege: the agent runs on the host network with exactly NET_RAW and
  IPC_LOCK added (all else dropped), the RDMA shared device plugin's resource,
  a GPU node selector, its node name from the downward API choosing its file
  of the ConfigMap; the analyzer runs as non-root with no capability and its
  store on the StatefulSet's volume.
- Content: every per-node agent config passes `hostmesh-agent --check-config`,
  points at the analyzer Service's gRPC port and serves metrics on the port the
  pod declares, at an explicit address (never 0.0.0.0 on the host network);
  the analyzer config passes `hostmesh-analyzer --check-config` and keeps
  data_dir on the volume; a NetworkPolicy narrows who reaches the analyzer's
  pod-wide listen addresses.
- Probes: liveness on /healthz and readiness on /readyz, never /metrics.
- The Prometheus scrape config: Debian's promtool is built without Kubernetes
  discovery, so promtool checks it with each kubernetes_sd_configs replaced by
  a static target (everything else as shipped), and the discovery part is
  checked here: role pod, namespace hostmesh, keep rules naming the pods'
  labels and port names."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

SOURCE_DIR = os.environ.get("HOSTMESH_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_DIR = os.environ.get("HOSTMESH_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
K8S = os.path.join(SOURCE_DIR, "deploy", "kubernetes")
MANIFESTS = ("namespace.yaml", "analyzer.yaml", "agent.yaml")
STABLE = {("v1", "Namespace"), ("v1", "ConfigMap"), ("v1", "Service"),
          ("apps/v1", "DaemonSet"), ("apps/v1", "StatefulSet"),
          ("networking.k8s.io/v1", "NetworkPolicy")}
RDMA_RESOURCE = "rdma/hca_shared_devices_a"


def documents() -> list[dict]:
    docs = []
    for name in MANIFESTS:
        with open(os.path.join(K8S, name)) as f:
            docs += [d for d in yaml.safe_load_all(f) if d]
    return docs


def one(kind: str, name: str) -> dict:
    (doc,) = [d for d in documents() if d["kind"] == kind and d["metadata"]["name"] == name]
    return doc


def container(workload: dict) -> dict:
    (c,) = workload["spec"]["template"]["spec"]["containers"]
    return c


def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


class Structure(unittest.TestCase):
    def test_kinds_names_and_namespace(self):
        docs = documents()
        for d in docs:
            self.assertIn((d["apiVersion"], d["kind"]), STABLE, d["metadata"]["name"])
            if d["kind"] != "Namespace":
                self.assertEqual(d["metadata"].get("namespace"), "hostmesh", d["metadata"]["name"])
            self.assertEqual(d["metadata"]["labels"]["app.kubernetes.io/part-of"], "hostmesh")
        names = [(d["kind"], d["metadata"]["name"]) for d in docs]
        self.assertEqual(len(names), len(set(names)), "a name repeats")
        with open(os.path.join(K8S, "kustomization.yaml")) as f:
            self.assertEqual(yaml.safe_load(f)["resources"], list(MANIFESTS))

    def test_selectors_ports_and_references(self):
        configmaps = {d["metadata"]["name"]: d for d in documents() if d["kind"] == "ConfigMap"}
        for kind, name in (("DaemonSet", "hostmesh-agent"), ("StatefulSet", "hostmesh-analyzer")):
            w = one(kind, name)
            labels = w["spec"]["template"]["metadata"]["labels"]
            for k, v in w["spec"]["selector"]["matchLabels"].items():
                self.assertEqual(labels.get(k), v, f"{name}: selector {k}")
            pod = w["spec"]["template"]["spec"]
            c = container(w)
            self.assertTrue(c["image"] and c["command"][0].startswith("/usr/bin/hostmesh-"))
            self.assertIn("memory", c["resources"]["limits"], name)
            ports = {p["name"] for p in c["ports"]}
            for probe in ("livenessProbe", "readinessProbe"):
                if probe in c:
                    self.assertIn(c[probe]["httpGet"]["port"], ports, f"{name}: {probe}")
            volumes = {v["name"]: v for v in pod["volumes"]}
            claims = {t["metadata"]["name"] for t in w["spec"].get("volumeClaimTemplates", [])}
            for m in c["volumeMounts"]:
                self.assertIn(m["name"], set(volumes) | claims, f"{name}: mount {m['name']}")
            for v in volumes.values():
                if "configMap" in v and not v["configMap"].get("optional"):
                    self.assertIn(v["configMap"]["name"], configmaps, f"{name}: {v['name']}")
        service = one("Service", "hostmesh-analyzer")
        analyzer = one("StatefulSet", "hostmesh-analyzer")
        self.assertEqual(analyzer["spec"]["serviceName"], service["metadata"]["name"])
        self.assertEqual(service["spec"]["selector"],
                         analyzer["spec"]["selector"]["matchLabels"])
        ports = {p["name"]: p["containerPort"] for p in container(analyzer)["ports"]}
        for p in service["spec"]["ports"]:
            self.assertIn(p["targetPort"], ports)
            self.assertEqual(p["port"], ports[p["targetPort"]])


class LeastPrivilege(unittest.TestCase):
    def test_agent(self):
        agent = one("DaemonSet", "hostmesh-agent")
        pod = agent["spec"]["template"]["spec"]
        c = container(agent)
        self.assertTrue(pod["hostNetwork"])
        self.assertEqual(pod["dnsPolicy"], "ClusterFirstWithHostNet")
        self.assertTrue(pod["nodeSelector"], "no node selector for GPU hosts")
        sc = c["securityContext"]
        self.assertEqual(sc["capabilities"]["drop"], ["ALL"])
        self.assertEqual(sorted(sc["capabilities"]["add"]), ["IPC_LOCK", "NET_RAW"])
        self.assertFalse(sc["allowPrivilegeEscalation"])
        self.assertTrue(sc["readOnlyRootFilesystem"])
        self.assertNotIn("privileged", sc)
        self.assertEqual(c["resources"]["limits"][RDMA_RESOURCE], 1)
        self.assertFalse(any("hostPath" in v for v in pod["volumes"]), "no host paths")
        (env,) = [e for e in c["env"] if e["name"] == "NODE_NAME"]
        self.assertEqual(env["valueFrom"]["fieldRef"]["fieldPath"], "spec.nodeName")
        self.assertIn("/etc/hostmesh/$(NODE_NAME).yaml", c["args"])

    def test_analyzer(self):
        analyzer = one("StatefulSet", "hostmesh-analyzer")
        pod = analyzer["spec"]["template"]["spec"]
        sc = container(analyzer)["securityContext"]
        self.assertTrue(pod["securityContext"]["runAsNonRoot"])
        self.assertEqual(sc["capabilities"], {"drop": ["ALL"]})
        self.assertFalse(sc["allowPrivilegeEscalation"])
        self.assertTrue(sc["readOnlyRootFilesystem"])
        self.assertNotIn("hostNetwork", pod)


class Content(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hostmesh-k8s-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def binary(self, path: str) -> str:
        exe = os.path.join(BUILD_DIR, path)
        if not os.access(exe, os.X_OK):
            self.skipTest(f"{exe} not built")
        return exe

    def test_every_node_config_checks(self):
        agent = self.binary("agent/main/hostmesh-agent")
        files = one("ConfigMap", "hostmesh-agent-config")["data"]
        c = container(one("DaemonSet", "hostmesh-agent"))
        metrics_port = {p["name"]: p["containerPort"] for p in c["ports"]}["metrics"]
        service = one("Service", "hostmesh-analyzer")
        grpc = {p["name"]: p["port"] for p in service["spec"]["ports"]}["grpc"]
        self.assertTrue(files)
        for name, text in files.items():
            config = yaml.safe_load(text)
            self.assertEqual(name, config["host"] + ".yaml", "file named after the node")
            self.assertEqual(config["analyzer"]["address"],
                             f"{service['metadata']['name']}.hostmesh.svc:{grpc}")
            host, port = config["metrics"]["listen"].rsplit(":", 1)
            self.assertEqual(int(port), metrics_port, name)
            self.assertNotIn(host, ("0.0.0.0", "[::]"), f"{name}: host network, explicit address")
            path = os.path.join(self.tmp, name)
            with open(path, "w") as f:
                f.write(text)
            out = run(agent, "--config", path, "--check-config")
            self.assertEqual(out.returncode, 0, f"{name}: {out.stdout}{out.stderr}")

    def test_analyzer_config_checks_and_keeps_its_store_on_the_volume(self):
        analyzer = self.binary("analyzer/main/hostmesh-analyzer")
        text = one("ConfigMap", "hostmesh-analyzer-config")["data"]["analyzer.yaml"]
        path = os.path.join(self.tmp, "analyzer.yaml")
        with open(path, "w") as f:
            f.write(text)
        out = run(analyzer, "--config", path, "--check-config")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        data_dir = yaml.safe_load(text)["data_dir"]
        (mount,) = [m for m in container(one("StatefulSet", "hostmesh-analyzer"))["volumeMounts"]
                    if m["name"] == "data"]
        self.assertEqual(mount["mountPath"], data_dir)


class Probes(unittest.TestCase):
    def test_liveness_and_readiness_use_the_built_in_routes(self):
        for kind, name in (("DaemonSet", "hostmesh-agent"), ("StatefulSet", "hostmesh-analyzer")):
            c = container(one(kind, name))
            self.assertEqual(c["livenessProbe"]["httpGet"]["path"], "/healthz", name)
            self.assertEqual(c["readinessProbe"]["httpGet"]["path"], "/readyz", name)

    def test_network_policy_guards_the_analyzer_ports(self):
        policy = one("NetworkPolicy", "hostmesh-analyzer")
        analyzer = one("StatefulSet", "hostmesh-analyzer")
        self.assertEqual(policy["spec"]["podSelector"]["matchLabels"],
                         analyzer["spec"]["selector"]["matchLabels"])
        self.assertEqual(policy["spec"]["policyTypes"], ["Ingress"])
        ports = {p["name"] for p in container(analyzer)["ports"]}
        allowed = {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]}
        self.assertEqual(allowed, ports)
        for rule in policy["spec"]["ingress"]:
            self.assertTrue(rule["from"], "every rule names its sources")


class ScrapeConfig(unittest.TestCase):
    def load(self) -> dict:
        with open(os.path.join(K8S, "prometheus.yml")) as f:
            return yaml.safe_load(f)

    def test_discovery_keeps_the_hostmesh_pods_and_ports(self):
        jobs = {j["job_name"]: j for j in self.load()["scrape_configs"]}
        self.assertEqual(set(jobs), {"hostmesh-agent", "hostmesh-analyzer"})
        for job, workload, port in (("hostmesh-agent", one("DaemonSet", "hostmesh-agent"),
                                     "metrics"),
                                    ("hostmesh-analyzer",
                                     one("StatefulSet", "hostmesh-analyzer"), "http")):
            (sd,) = jobs[job]["kubernetes_sd_configs"]
            self.assertEqual(sd["role"], "pod")
            self.assertEqual(sd["namespaces"]["names"], ["hostmesh"])
            keeps = {r["source_labels"][0]: r["regex"] for r in jobs[job]["relabel_configs"]
                     if r.get("action") == "keep"}
            label = workload["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"]
            self.assertTrue(re.fullmatch(
                keeps["__meta_kubernetes_pod_label_app_kubernetes_io_name"], label))
            self.assertTrue(re.fullmatch(keeps["__meta_kubernetes_pod_container_port_name"],
                                         port))
            self.assertIn(port, {p["name"] for p in container(workload)["ports"]})
            targets = {r.get("target_label") for r in jobs[job]["relabel_configs"]}
            self.assertIn("cluster", targets)
        self.assertIn("host", {r.get("target_label")
                               for r in jobs["hostmesh-agent"]["relabel_configs"]})

    def test_promtool_accepts_the_rest(self):
        promtool = shutil.which("promtool")
        if promtool is None:
            self.skipTest("promtool not found (Debian package prometheus)")
        config = self.load()
        for job in config["scrape_configs"]:
            del job["kubernetes_sd_configs"]
            job["static_configs"] = [{"targets": ["discovered.invalid:9109"]}]
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(os.path.join(SOURCE_DIR, "deploy", "prometheus", "hostmesh-rules.yml"),
                        tmp)
            path = os.path.join(tmp, "prometheus.yml")
            with open(path, "w") as f:
                yaml.safe_dump(config, f)
            out = run(promtool, "check", "config", path)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)


if __name__ == "__main__":
    unittest.main()
