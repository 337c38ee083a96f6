#!/usr/bin/env python3
"""Packaging: `cmake --install --prefix /usr` lays binaries, units, configs,
dashboards and rules out in FHS places, and `cpack -G DEB` builds the four
Debian packages from the same rules. Checked in the .deb files themselves
(dpkg-deb): each package's exact file list, its shared-library Depends, the
analyzer's conffile, maintainer scripts that parse; then the binaries
extracted from the packages run (--version, --check-config on the shipped
configs). Nothing is installed on this machine. Skips without dpkg-deb."""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ctest_unittest  # noqa: E402

SOURCE_DIR = os.environ.get("HOSTMESH_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_DIR = os.environ.get("HOSTMESH_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
DOC = "usr/share/doc"
SHARE = "usr/share/hostmesh"
UNITS = "usr/lib/systemd/system"


def run(*argv: str, **kw) -> subprocess.CompletedProcess:
    out = subprocess.run(argv, capture_output=True, text=True, check=False, **kw)
    if out.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {out.returncode}: {out.stdout}{out.stderr}")
    return out


def expected() -> dict[str, set[str]]:
    dashboards = {f"{SHARE}/dashboards/{os.path.basename(p)}"
                  for p in glob.glob(os.path.join(SOURCE_DIR, "dashboards", "*"))
                  if p.endswith((".json", ".yaml"))}
    rules = {f"{SHARE}/prometheus/{n}" for n in ("hostmesh-rules.yml", "hostmesh-rules.test.yml",
                                                 "prometheus.yml", "federation.yml")}
    docs = {f"docs/{os.path.basename(p)}" for p in glob.glob(os.path.join(SOURCE_DIR, "docs", "*.md"))}
    return {
        "hostmesh-agent": {"usr/bin/hostmesh-agent", "usr/lib/hostmesh/hostmesh-agent-verbs.so",
                           f"{UNITS}/hostmesh-agent.service",
                           f"{DOC}/hostmesh-agent/README.md",
                           f"{DOC}/hostmesh-agent/agent.example.yaml"}
                          | {f"{DOC}/hostmesh-agent/{d}" for d in docs},
        "hostmesh-analyzer": {"usr/bin/hostmesh-analyzer", f"{UNITS}/hostmesh-analyzer.service",
                              "etc/hostmesh/analyzer.yaml", f"{DOC}/hostmesh-analyzer/README.md",
                              f"{DOC}/hostmesh-analyzer/analyzer.example.yaml"}
                             | {f"{DOC}/hostmesh-analyzer/{d}" for d in docs},
        "hostmesh-ctl": {"usr/bin/hostmeshctl"},
        "hostmesh-monitoring": dashboards | rules,
    }


def cmake_cache() -> str:
    with open(os.path.join(BUILD_DIR, "CMakeCache.txt")) as f:
        return f.read()


def files_of(deb: str) -> set[str]:
    listing = run("dpkg-deb", "--contents", deb).stdout
    paths = {line.split()[-1].removeprefix("./") for line in listing.splitlines()}
    return {p for p in paths if p and not p.endswith("/")}


class Install(unittest.TestCase):
    def test_install_prefix_usr_is_fhs(self):
        with tempfile.TemporaryDirectory(prefix="hostmesh-install-") as root:
            run("cmake", "--install", BUILD_DIR, "--prefix", "/usr", env=dict(os.environ,
                                                                              DESTDIR=root))
            got = {os.path.relpath(os.path.join(d, f), root)
                   for d, _, files in os.walk(root) for f in files}
            self.assertEqual(got, set().union(*expected().values()))


class DebianPackages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="hostmesh-deb-")
        run("cpack", "-G", "DEB", "-B", cls.out, "--config",
            os.path.join(BUILD_DIR, "CPackConfig.cmake"), cwd=BUILD_DIR)
        cls.debs = {run("dpkg-deb", "--field", p, "Package").stdout.strip(): p
                    for p in glob.glob(os.path.join(cls.out, "*.deb"))}
        cls.root = os.path.join(cls.out, "root")
        for deb in cls.debs.values():
            run("dpkg-deb", "--extract", deb, cls.root)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)

    def field(self, package: str, name: str) -> str:
        return run("dpkg-deb", "--field", self.debs[package], name).stdout.strip()

    def test_each_package_holds_exactly_its_files(self):
        self.assertEqual(set(self.debs), set(expected()))
        for package, files in expected().items():
            self.assertEqual(files_of(self.debs[package]), files, package)
        self.assertEqual(self.field("hostmesh-monitoring", "Architecture"), "all")
        self.assertEqual(self.field("hostmesh-agent", "Version"), "0.1.0")

    def test_binaries_depend_on_their_shared_libraries(self):
        # gRPC, protobuf and Abseil are linked into the agent (cmake/HostmeshStaticGrpc.cmake),
        # OpenSSL is not.
        static_grpc = "HOSTMESH_AGENT_STATIC_GRPC:BOOL=ON" in cmake_cache()
        grpc = () if static_grpc else ("libgrpc++", "libprotobuf")
        for package, libs in (("hostmesh-agent", ("libc6", "libibverbs1", "libssl3") + grpc),
                              ("hostmesh-analyzer", ("libc6", "libgrpc++", "libprotobuf")),
                              ("hostmesh-ctl", ("libc6",))):
            depends = self.field(package, "Depends")
            for lib in libs:
                self.assertIn(lib, depends, f"{package}: {depends}")
        if static_grpc:
            depends = self.field("hostmesh-agent", "Depends")
            self.assertNotRegex(depends, r"libgrpc|libprotobuf|libabsl|libre2|libc-ares", depends)
        self.assertEqual(self.field("hostmesh-monitoring", "Depends"), "")

    def test_conffile_and_maintainer_scripts(self):
        with tempfile.TemporaryDirectory() as control:
            run("dpkg-deb", "--control", self.debs["hostmesh-analyzer"], control)
            with open(os.path.join(control, "conffiles")) as f:
                self.assertEqual(f.read().split(), ["/etc/hostmesh/analyzer.yaml"])
        for daemon in ("agent", "analyzer"):
            with tempfile.TemporaryDirectory() as control:
                run("dpkg-deb", "--control", self.debs[f"hostmesh-{daemon}"], control)
                for script in ("postinst", "prerm", "postrm"):
                    path = os.path.join(control, script)
                    self.assertTrue(os.access(path, os.X_OK), f"{daemon} {script}")
                    run("sh", "-n", path)
                    with open(path) as f:
                        text = f.read()
                    self.assertNotIn("@", text, f"{daemon} {script}: unreplaced placeholder")
                    if script != "postrm":
                        self.assertIn(f"hostmesh-{daemon}.service", text)

    def test_packaged_binaries_run(self):
        binary = lambda name: os.path.join(self.root, "usr", "bin", name)  # noqa: E731
        self.assertIn("0.1.0", run(binary("hostmesh-agent"), "--version").stdout)
        self.assertIn("topology", run(binary("hostmeshctl"), "--help").stdout)
        # Stripped: the packages carry no debug info.
        self.assertLess(os.path.getsize(binary("hostmesh-analyzer")),
                        os.path.getsize(os.path.join(BUILD_DIR, "analyzer/main/hostmesh-analyzer")))
        checked = run(binary("hostmesh-analyzer"), "--config",
                      os.path.join(self.root, "etc/hostmesh/analyzer.yaml"), "--check-config")
        self.assertIn("data_dir /var/lib/hostmesh-analyzer", checked.stdout)
        run(binary("hostmesh-agent"), "--check-config", "--config",
            os.path.join(self.root, DOC, "hostmesh-agent/agent.example.yaml"))
        # libibverbs comes with the verbs module, loaded only when verbs is chosen.
        self.assertNotIn("libibverbs", run("readelf", "-d", binary("hostmesh-agent")).stdout)
        module = os.path.join(self.root, "usr/lib/hostmesh/hostmesh-agent-verbs.so")
        self.assertIn("libibverbs", run("readelf", "-d", module).stdout)

    def test_packaged_rules_load(self):
        promtool = shutil.which("promtool")
        if promtool is None:
            self.skipTest("promtool not found")
        run(promtool, "test", "rules", "hostmesh-rules.test.yml",
            cwd=os.path.join(self.root, SHARE, "prometheus"))


if __name__ == "__main__":
    for tool in ("dpkg-deb", "cpack"):
        if shutil.which(tool) is None:
            print(f"SKIPPED: {tool} not found", file=sys.stderr)
            sys.exit(77)
    ctest_unittest.main()
