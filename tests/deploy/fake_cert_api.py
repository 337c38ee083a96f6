"""A stand-in for the Kubernetes API server and cert-manager's CA Issuer, as
much as deploy/kubernetes/agent-cert.yaml's script uses: CertificateRequests
in namespace hostmesh (create, get, delete), over HTTPS with a bearer token.
A request is signed at once with a CA made here (openssl), or refused with a
Denied condition when `deny` is set."""

import base64
import http.server
import json
import os
import ssl
import subprocess
import threading

PREFIX = "/apis/cert-manager.io/v1/namespaces/hostmesh/certificaterequests"


def openssl(*args: str) -> str:
    out = subprocess.run(["openssl", *args], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise AssertionError(f"openssl {' '.join(args)}: {out.stderr}")
    return out.stdout


class FakeCertApi:
    def __init__(self, tmp: str):
        self.dir = os.path.join(tmp, "api")
        os.mkdir(self.dir)
        self.sa_dir = os.path.join(self.dir, "sa")
        os.mkdir(self.sa_dir)
        self.token = "token-of-the-agents-service-account"
        self.live: dict[str, dict] = {}  # name -> CertificateRequest
        self.created = 0
        self.deny = False
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._make_keys()

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def _make_keys(self) -> None:
        # The hostmesh CA (what the Issuer signs with) and the cluster's CA
        # with the API server's certificate for 127.0.0.1.
        for ca in ("hostmesh-ca", "cluster-ca"):
            openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", self.path(f"{ca}.key"), "-out", self.path(f"{ca}.crt"),
                    "-subj", f"/CN={ca}", "-days", "2")
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", self.path("server.key"), "-out", self.path("server.csr"),
                "-subj", "/CN=kube-apiserver", "-addext", "subjectAltName=IP:127.0.0.1")
        openssl("x509", "-req", "-in", self.path("server.csr"), "-CA", self.path("cluster-ca.crt"),
                "-CAkey", self.path("cluster-ca.key"), "-days", "2", "-copy_extensions", "copy",
                "-out", self.path("server.crt"))
        with open(os.path.join(self.sa_dir, "token"), "w") as f:
            f.write(self.token)
        with open(self.path("cluster-ca.crt")) as src, \
                open(os.path.join(self.sa_dir, "ca.crt"), "w") as dst:
            dst.write(src.read())

    def sign(self, name: str, request: dict) -> dict:
        spec = request.get("spec", {})
        issuer = spec.get("issuerRef", {})
        problems = []
        if request.get("apiVersion") != "cert-manager.io/v1" or \
                request.get("kind") != "CertificateRequest":
            problems.append("not a cert-manager.io/v1 CertificateRequest")
        if issuer != {"group": "cert-manager.io", "kind": "Issuer", "name": "hostmesh-ca"}:
            problems.append(f"issuerRef {issuer}")
        if "client auth" not in spec.get("usages", []):
            problems.append(f"usages {spec.get('usages')}")
        if problems:
            self.errors += problems
            return {"conditions": [{"type": "InvalidRequest", "status": "True",
                                    "message": "; ".join(problems)}]}
        if self.deny:
            return {"conditions": [{"type": "Denied", "status": "True",
                                    "message": "denied by policy"}]}
        csr = self.path(f"{name}.csr")
        with open(csr, "wb") as f:
            f.write(base64.b64decode(spec["request"]))
        hours = int(spec.get("duration", "720h").rstrip("h"))
        cert = self.path(f"{name}.crt")
        openssl("x509", "-req", "-in", csr, "-CA", self.path("hostmesh-ca.crt"),
                "-CAkey", self.path("hostmesh-ca.key"), "-days", str(max(1, hours // 24)),
                "-copy_extensions", "copy", "-out", cert)
        with open(cert, "rb") as f, open(self.path("hostmesh-ca.crt"), "rb") as ca:
            return {"certificate": base64.b64encode(f.read()).decode(),
                    "ca": base64.b64encode(ca.read()).decode(),
                    "conditions": [{"type": "Ready", "status": "True"}]}

    def verify(self, cert: str, key: str, ca: str, dns_name: str) -> None:
        """The certificate chains to the hostmesh CA, names `dns_name`, and
        goes with `key`."""
        with open(ca) as f, open(self.path("hostmesh-ca.crt")) as want:
            assert f.read() == want.read(), "ca.crt is not the hostmesh CA"
        openssl("verify", "-CAfile", ca, cert)
        sans = openssl("x509", "-noout", "-ext", "subjectAltName", "-in", cert)
        assert f"DNS:{dns_name}" in sans, sans
        assert openssl("x509", "-noout", "-pubkey", "-in", cert) == \
            openssl("pkey", "-pubout", "-in", key), "key and certificate differ"

    def __enter__(self):
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def reply(self, code: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def authorized(self) -> bool:
                if self.headers.get("Authorization") == f"Bearer {api.token}":
                    return True
                self.reply(401, {"kind": "Status", "code": 401})
                return False

            def do_POST(self):
                if not self.authorized():
                    return
                if self.path != PREFIX:
                    self.reply(404, {"code": 404})
                    return
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                name = request["metadata"]["name"]
                with api._lock:
                    if name in api.live:
                        self.reply(409, {"code": 409})
                        return
                    request["status"] = api.sign(name, request)
                    api.live[name] = request
                    api.created += 1
                self.reply(201, request)

            def named(self):
                name = self.path[len(PREFIX) + 1:] if self.path.startswith(PREFIX + "/") else ""
                return name if name in api.live else None

            def do_GET(self):
                if not self.authorized():
                    return
                name = self.named()
                if name is None:
                    self.reply(404, {"code": 404})
                else:
                    self.reply(200, api.live[name])

            def do_DELETE(self):
                if not self.authorized():
                    return
                name = self.named()
                if name is None:
                    self.reply(404, {"code": 404})
                    return
                with api._lock:
                    del api.live[name]
                self.reply(200, {"kind": "Status", "status": "Success"})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.path("server.crt"), self.path("server.key"))
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
        assert not self.errors, self.errors
