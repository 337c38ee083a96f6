#!/usr/bin/env python3
"""deploy/kubernetes, checked offline (no cluster).

- Structure: every document parses; kinds and apiVersions are the stable ones
  (and cert-manager's v1); the analyzer's objects live in namespace hostmesh,
  the agent's in hostmesh-agent; selectors match their pod labels; named
  ports, Service targets, volumes and ConfigMaps refer to what exists; the
  kustomization lists every manifest and `kubectl kustomize` builds it (when
  kubectl is installed).
- Least privilege: only hostmesh-agent is at the privileged Pod Security
  level; hostmesh enforces `restricted` and every pod in it meets that level
  (checked here field by field). The agent runs on the host network with
  exactly NET_RAW and IPC_LOCK added (all else dropped), the RDMA shared
  device plugin's resource, a GPU node selector, its node name from the
  downward API choosing its file of the ConfigMap, no service account token
  (only its certificate containers get one, unprivileged); the analyzer runs
  as non-root with no capability and its store on the StatefulSet's volume.
  NetworkPolicy: namespace hostmesh closed by default, the analyzer open to
  agents on gRPC and Prometheus on HTTP only, no egress.
- Certificates: the analyzer's names what agents dial, its Secret is mounted
  where its config reads it; the agents' script issues a key and a
  certificate naming the node, checked against a stand-in for the Kubernetes
  API and cert-manager (tests/deploy/fake_cert_api.py); probes use /healthz
  and /readyz.
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ctest_unittest  # noqa: E402

SOURCE_DIR = os.environ.get("HOSTMESH_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_DIR = os.environ.get("HOSTMESH_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
K8S = os.path.join(SOURCE_DIR, "deploy", "kubernetes")
MANIFESTS = ("namespace.yaml", "cert-manager.yaml", "networkpolicy.yaml", "analyzer.yaml",
             "agent-cert.yaml", "agent.yaml")
STABLE = {("v1", "Namespace"), ("v1", "ConfigMap"), ("v1", "Service"), ("v1", "ServiceAccount"),
          ("apps/v1", "DaemonSet"), ("apps/v1", "StatefulSet"),
          ("networking.k8s.io/v1", "NetworkPolicy"),
          ("rbac.authorization.k8s.io/v1", "Role"),
          ("rbac.authorization.k8s.io/v1", "RoleBinding"),
          ("cert-manager.io/v1", "Issuer"), ("cert-manager.io/v1", "Certificate")}
ANALYZER_NS = "hostmesh"
AGENT_NS = "hostmesh-agent"
RDMA_RESOURCE = "rdma/hca_shared_devices_a"
# Volume types the `restricted` Pod Security level admits.
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                      "persistentVolumeClaim", "projected", "secret"}


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
    """The workload's hostmesh daemon (beside it: the agent's certificate renewal)."""
    (c,) = [c for c in workload["spec"]["template"]["spec"]["containers"]
            if c["command"][0].startswith("/usr/bin/hostmesh-")]
    return c


def mount_of(workload: dict, volume: str) -> str:
    (m,) = [m for m in container(workload)["volumeMounts"] if m["name"] == volume]
    return m["mountPath"]


def check_config(test: unittest.TestCase, binary: str, path: str, text: str) -> None:
    out = run(binary, "--config", path, "--check-config")
    test.assertEqual(out.returncode, 0, f"{path}: {out.stdout}{out.stderr}")


def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def pod_containers(pod: dict) -> list[dict]:
    return pod.get("initContainers", []) + pod["containers"]


def restricted_violations(pod: dict) -> list[str]:
    """What the `restricted` Pod Security Standard (latest) refuses in a pod spec."""
    bad = []
    psc = pod.get("securityContext", {})
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(key):
            bad.append(key)
    for v in pod.get("volumes", []):
        kinds = set(v) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            bad.append(f"volume {v['name']}: {kinds}")
    if psc.get("runAsUser") == 0:
        bad.append("pod runAsUser 0")
    for c in pod_containers(pod):
        sc = c.get("securityContext", {})
        name = c["name"]
        if sc.get("privileged"):
            bad.append(f"{name}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            bad.append(f"{name}: allowPrivilegeEscalation not false")
        if not sc.get("runAsNonRoot", psc.get("runAsNonRoot")):
            bad.append(f"{name}: runAsNonRoot not true")
        if sc.get("runAsUser", psc.get("runAsUser")) == 0:
            bad.append(f"{name}: runAsUser 0")
        caps = sc.get("capabilities", {})
        if "ALL" not in caps.get("drop", []):
            bad.append(f"{name}: capabilities not dropping ALL")
        if set(caps.get("add", [])) - {"NET_BIND_SERVICE"}:
            bad.append(f"{name}: adds {caps['add']}")
        seccomp = sc.get("seccompProfile", psc.get("seccompProfile", {})).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            bad.append(f"{name}: seccompProfile {seccomp}")
        if any(p.get("hostPort") for p in c.get("ports", [])):
            bad.append(f"{name}: hostPort")
    return bad


class Structure(unittest.TestCase):
    def test_kinds_names_and_namespace(self):
        docs = documents()
        for d in docs:
            self.assertIn((d["apiVersion"], d["kind"]), STABLE, d["metadata"]["name"])
            if d["kind"] != "Namespace":
                self.assertIn(d["metadata"].get("namespace"), (ANALYZER_NS, AGENT_NS),
                              d["metadata"]["name"])
            self.assertEqual(d["metadata"]["labels"]["app.kubernetes.io/part-of"], "hostmesh")
        self.assertEqual(one("StatefulSet", "hostmesh-analyzer")["metadata"]["namespace"],
                         ANALYZER_NS)
        self.assertEqual(one("DaemonSet", "hostmesh-agent")["metadata"]["namespace"], AGENT_NS)
        names = [(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in docs]
        self.assertEqual(len(names), len(set(names)), "a name repeats")
        with open(os.path.join(K8S, "kustomization.yaml")) as f:
            self.assertEqual(yaml.safe_load(f)["resources"], list(MANIFESTS))

    def test_kustomize_builds(self):
        kubectl = shutil.which("kubectl")
        if kubectl is None:
            self.skipTest("kubectl not found (not in Debian 12)")
        out = run(kubectl, "kustomize", K8S)
        self.assertEqual(out.returncode, 0, out.stderr)
        built = [d for d in yaml.safe_load_all(out.stdout) if d]
        self.assertEqual(sorted((d["kind"], d["metadata"]["name"]) for d in built),
                         sorted((d["kind"], d["metadata"]["name"]) for d in documents()))

    def test_selectors_ports_and_references(self):
        configmaps = {(d["metadata"]["namespace"], d["metadata"]["name"])
                      for d in documents() if d["kind"] == "ConfigMap"}
        secrets = {(d["metadata"]["namespace"], d["spec"]["secretName"])
                   for d in documents() if d["kind"] == "Certificate"}
        for kind, name in (("DaemonSet", "hostmesh-agent"), ("StatefulSet", "hostmesh-analyzer")):
            w = one(kind, name)
            ns = w["metadata"]["namespace"]
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
            for each in pod_containers(pod):
                for m in each["volumeMounts"]:
                    self.assertIn(m["name"], set(volumes) | claims, f"{name}: mount {m['name']}")
            for v in volumes.values():
                if "configMap" in v and not v["configMap"].get("optional"):
                    self.assertIn((ns, v["configMap"]["name"]), configmaps, f"{name}: {v['name']}")
                if "secret" in v:
                    self.assertIn((ns, v["secret"]["secretName"]), secrets, f"{name}: {v['name']}")
            if "serviceAccountName" in pod:
                (sa,) = [d for d in documents() if d["kind"] == "ServiceAccount"
                         and d["metadata"]["name"] == pod["serviceAccountName"]]
                self.assertEqual(sa["metadata"]["namespace"], ns)
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
        # The API token reaches the certificate containers only, and they
        # run unprivileged.
        self.assertIs(pod["automountServiceAccountToken"], False)
        self.assertNotIn("kube-api", {m["name"] for m in c["volumeMounts"]})
        others = [o for o in pod_containers(pod) if o is not c]
        self.assertTrue(others)
        for o in others:
            self.assertEqual(restricted_violations({"securityContext": pod["securityContext"],
                                                    "containers": [o]}), [], o["name"])
            self.assertTrue(o["securityContext"]["readOnlyRootFilesystem"], o["name"])
            self.assertEqual(o["env"], c["env"][:1], o["name"])

    def test_agent_rbac_reaches_certificate_requests_only(self):
        (role,) = [d for d in documents() if d["kind"] == "Role"]
        self.assertEqual(role["metadata"]["namespace"], ANALYZER_NS)
        self.assertEqual(role["rules"], [{"apiGroups": ["cert-manager.io"],
                                          "resources": ["certificaterequests"],
                                          "verbs": ["create", "get", "delete"]}])
        (binding,) = [d for d in documents() if d["kind"] == "RoleBinding"]
        self.assertEqual(binding["roleRef"]["name"], role["metadata"]["name"])
        pod = one("DaemonSet", "hostmesh-agent")["spec"]["template"]["spec"]
        self.assertEqual(binding["subjects"], [{"kind": "ServiceAccount",
                                                "name": pod["serviceAccountName"],
                                                "namespace": AGENT_NS}])

    def test_only_the_agent_namespace_is_privileged(self):
        levels = {d["metadata"]["name"]: d["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
                  for d in documents() if d["kind"] == "Namespace"}
        self.assertEqual(levels, {ANALYZER_NS: "restricted", AGENT_NS: "privileged"})
        workloads = [d for d in documents() if d["kind"] in ("StatefulSet", "DaemonSet")]
        for w in workloads:
            if w["metadata"]["namespace"] == ANALYZER_NS:
                pod = w["spec"]["template"]["spec"]
                self.assertEqual(restricted_violations(pod), [], w["metadata"]["name"])
        self.assertTrue(restricted_violations(one("DaemonSet", "hostmesh-agent")
                                              ["spec"]["template"]["spec"]),
                        "the agent needs the privileged level: test the checker")

    def test_analyzer(self):
        analyzer = one("StatefulSet", "hostmesh-analyzer")
        pod = analyzer["spec"]["template"]["spec"]
        sc = container(analyzer)["securityContext"]
        self.assertTrue(pod["securityContext"]["runAsNonRoot"])
        self.assertEqual(sc["capabilities"], {"drop": ["ALL"]})
        self.assertFalse(sc["allowPrivilegeEscalation"])
        self.assertTrue(sc["readOnlyRootFilesystem"])
        self.assertEqual(sc["seccompProfile"], {"type": "RuntimeDefault"})
        self.assertNotIn("hostNetwork", pod)
        self.assertIs(pod["automountServiceAccountToken"], False)
        # Read-only root: it writes only to its store's volume.
        writable = [m["name"] for m in container(analyzer)["volumeMounts"]
                    if not m.get("readOnly")]
        self.assertEqual(writable, ["data"])

    def test_probes_use_health_endpoints(self):
        for kind, name in (("DaemonSet", "hostmesh-agent"), ("StatefulSet", "hostmesh-analyzer")):
            c = container(one(kind, name))
            self.assertEqual(c["livenessProbe"]["httpGet"]["path"], "/healthz", name)
            self.assertEqual(c["readinessProbe"]["httpGet"]["path"], "/readyz", name)
            if "startupProbe" in c:
                self.assertEqual(c["startupProbe"]["httpGet"]["path"], "/healthz", name)


class NetworkPolicies(unittest.TestCase):
    def policies(self) -> dict:
        return {d["metadata"]["name"]: d for d in documents() if d["kind"] == "NetworkPolicy"}

    def test_analyzer_namespace_is_closed_by_default(self):
        deny = self.policies()["default-deny"]
        self.assertEqual(deny["metadata"]["namespace"], ANALYZER_NS)
        self.assertEqual(deny["spec"]["podSelector"], {})
        self.assertEqual(set(deny["spec"]["policyTypes"]), {"Ingress", "Egress"})
        self.assertNotIn("ingress", deny["spec"])
        self.assertNotIn("egress", deny["spec"])

    def test_analyzer_admits_agents_on_grpc_and_prometheus_on_http(self):
        policy = self.policies()["hostmesh-analyzer"]
        analyzer = one("StatefulSet", "hostmesh-analyzer")
        self.assertEqual(policy["metadata"]["namespace"], analyzer["metadata"]["namespace"])
        self.assertEqual(policy["spec"]["podSelector"]["matchLabels"],
                         analyzer["spec"]["selector"]["matchLabels"])
        self.assertEqual(set(policy["spec"]["policyTypes"]), {"Ingress", "Egress"})
        self.assertEqual(policy["spec"].get("egress", []), [])
        ports = {p["name"] for p in container(analyzer)["ports"]}
        rules = policy["spec"]["ingress"]
        self.assertEqual(len(rules), 2)
        by_port = {}
        for rule in rules:
            (port,) = rule["ports"]
            self.assertEqual(port["protocol"], "TCP")
            self.assertIn(port["port"], ports)
            by_port[port["port"]] = rule["from"]
        self.assertEqual(set(by_port), {"grpc", "http"})
        # Agents are on the host network: only an address block names them.
        (agents,) = by_port["grpc"]
        self.assertEqual(set(agents), {"ipBlock"})
        # Prometheus: pods of one namespace, both selectors in one peer (AND).
        (prometheus,) = by_port["http"]
        self.assertEqual(set(prometheus), {"namespaceSelector", "podSelector"})
        self.assertTrue(prometheus["podSelector"]["matchLabels"])


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
        dns = f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc"
        tls_dir = mount_of(one("DaemonSet", "hostmesh-agent"), "tls")
        self.assertTrue(files)
        for name, text in files.items():
            config = yaml.safe_load(text)
            self.assertEqual(name, config["host"] + ".yaml", "file named after the node")
            self.assertEqual(config["analyzer"]["address"], f"{dns}:{grpc}")
            self.assertEqual(config["analyzer"]["tls"],
                             {"ca": f"{tls_dir}/ca.crt", "cert": f"{tls_dir}/tls.crt",
                              "key": f"{tls_dir}/tls.key", "server_name": dns})
            self.assertIs(config["analyzer"]["insecure"], False)
            host, port = config["metrics"]["listen"].rsplit(":", 1)
            self.assertEqual(int(port), metrics_port, name)
            self.assertNotIn(host, ("0.0.0.0", "[::]"), f"{name}: host network, explicit address")
            path = os.path.join(self.tmp, name)
            with open(path, "w") as f:
                f.write(text)
            check_config(self, agent, path, text)

    def test_analyzer_config_checks_and_keeps_its_store_on_the_volume(self):
        analyzer = self.binary("analyzer/main/hostmesh-analyzer")
        text = one("ConfigMap", "hostmesh-analyzer-config")["data"]["analyzer.yaml"]
        path = os.path.join(self.tmp, "analyzer.yaml")
        with open(path, "w") as f:
            f.write(text)
        check_config(self, analyzer, path, text)
        data_dir = yaml.safe_load(text)["data_dir"]
        (mount,) = [m for m in container(one("StatefulSet", "hostmesh-analyzer"))["volumeMounts"]
                    if m["name"] == "data"]
        self.assertEqual(mount["mountPath"], data_dir)


class Certificates(unittest.TestCase):
    def test_analyzer_certificate_names_what_agents_dial(self):
        cert = one("Certificate", "hostmesh-analyzer")
        analyzer = one("StatefulSet", "hostmesh-analyzer")
        self.assertEqual(cert["metadata"]["namespace"], analyzer["metadata"]["namespace"])
        for text in one("ConfigMap", "hostmesh-agent-config")["data"].values():
            agent = yaml.safe_load(text)["analyzer"]
            self.assertIn(agent["address"].rsplit(":", 1)[0], cert["spec"]["dnsNames"])
            self.assertIn(agent["tls"]["server_name"], cert["spec"]["dnsNames"])
        self.assertIn("server auth", cert["spec"]["usages"])
        self.assertEqual(cert["spec"]["issuerRef"]["kind"], "Issuer", "not cluster-wide")
        # Its Secret is mounted where the analyzer's config reads it.
        pod = analyzer["spec"]["template"]["spec"]
        (volume,) = [v for v in pod["volumes"] if "secret" in v]
        self.assertEqual(volume["secret"]["secretName"], cert["spec"]["secretName"])
        tls = yaml.safe_load(one("ConfigMap", "hostmesh-analyzer-config")["data"]
                             ["analyzer.yaml"])["grpc"]
        where = mount_of(analyzer, volume["name"])
        self.assertEqual(tls["tls"], {"cert": f"{where}/tls.crt", "key": f"{where}/tls.key",
                                      "client_ca": f"{where}/ca.crt"})
        self.assertIs(tls["insecure"], False)

    def test_issuers_stay_in_the_analyzer_namespace(self):
        for d in documents():
            if d["apiVersion"].startswith("cert-manager.io/"):
                self.assertEqual(d["metadata"]["namespace"], ANALYZER_NS, d["metadata"]["name"])
        ca = one("Issuer", "hostmesh-ca")
        self.assertEqual(ca["spec"]["ca"]["secretName"],
                         one("Certificate", "hostmesh-ca")["spec"]["secretName"])

    def test_agent_cert_script(self):
        """The script against a stand-in for the API server and the CA Issuer."""
        for tool in ("curl", "jq", "openssl"):
            if shutil.which(tool) is None:
                self.skipTest(f"{tool} not found")
        script = one("ConfigMap", "hostmesh-agent-cert")["data"]["agent-cert.sh"]
        self.assertEqual(run("sh", "-n", "-c", script).returncode, 0)
        sys.path.insert(0, os.path.dirname(__file__))
        import fake_cert_api  # pylint: disable=import-outside-toplevel
        with tempfile.TemporaryDirectory() as tmp, fake_cert_api.FakeCertApi(tmp) as api:
            path = os.path.join(tmp, "agent-cert.sh")
            with open(path, "w") as f:
                f.write(script)
            tls = os.path.join(tmp, "tls")
            os.mkdir(tls)
            env = dict(os.environ, DIR=tls, SA=api.sa_dir, NODE_NAME="h007",
                       KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT=str(api.port))
            out = subprocess.run(["sh", path, "once"], env=env, capture_output=True, text=True,
                                 timeout=60, check=False)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(api.created, 1)
            self.assertEqual(api.live, {}, "the request is deleted once fetched")
            for name in ("ca.crt", "tls.crt", "tls.key"):
                self.assertTrue(os.path.islink(os.path.join(tls, name)), name)
            self.assertEqual(os.stat(os.path.join(tls, "tls.key")).st_mode & 0o777, 0o640)
            api.verify(os.path.join(tls, "tls.crt"), os.path.join(tls, "tls.key"),
                       os.path.join(tls, "ca.crt"), "h007")
            first = os.readlink(os.path.join(tls, "..data"))
            # Fresh: nothing asked again.
            out = subprocess.run(["sh", path, "once"], env=env, capture_output=True, text=True,
                                 timeout=60, check=False)
            self.assertEqual((out.returncode, api.created), (0, 1), out.stderr)
            # Past two thirds of its life (a lifetime of 30 years, of which
            # the 30 days left are less than a third): a new key and
            # certificate replace the old set, which is removed.
            env["LIFETIME_HOURS"] = str(24 * 365 * 30)
            out = subprocess.run(["sh", path, "once"], env=env, capture_output=True, text=True,
                                 timeout=60, check=False)
            self.assertEqual((out.returncode, api.created), (0, 2), out.stderr)
            self.assertNotEqual(os.readlink(os.path.join(tls, "..data")), first)
            self.assertFalse(os.path.exists(os.path.join(tls, first)))
            api.verify(os.path.join(tls, "tls.crt"), os.path.join(tls, "tls.key"),
                       os.path.join(tls, "ca.crt"), "h007")
            # A refused request fails the init container (the pod retries).
            api.deny = True
            env["DIR"] = os.path.join(tmp, "tls-denied")
            os.mkdir(env["DIR"])
            out = subprocess.run(["sh", path, "once"], env=env, capture_output=True, text=True,
                                 timeout=60, check=False)
            self.assertNotEqual(out.returncode, 0)
            self.assertIn("not issued", out.stderr)
            self.assertEqual(api.live, {})
            self.assertEqual(os.listdir(env["DIR"]), [], "no half-made set left")


class Probes(unittest.TestCase):
    def test_liveness_and_readiness_use_the_built_in_routes(self):
        for kind, name in (("DaemonSet", "hostmesh-agent"), ("StatefulSet", "hostmesh-analyzer")):
            c = container(one(kind, name))
            self.assertEqual(c["livenessProbe"]["httpGet"]["path"], "/healthz", name)
            self.assertEqual(c["readinessProbe"]["httpGet"]["path"], "/readyz", name)


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
            self.assertEqual(sd["namespaces"]["names"], [workload["metadata"]["namespace"]])
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
    ctest_unittest.main()
