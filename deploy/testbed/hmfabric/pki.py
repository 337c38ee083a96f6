"""The testbed's certificate authority: every `fabric start` runs its agents and
analyzer over mutual TLS, as a production fleet does (docs/security.md).

`ensure(sdir, hosts)` makes, once per fabric state directory, with the openssl
command line:
  pki/ca.crt, ca.key         a CA for this fabric only (EC P-256, 30 days)
  pki/analyzer.crt, .key     the analyzer's server certificate: DNS SAN
                             hostmesh-analyzer and IP SAN the analyzer's address
  pki/<host>.crt, .key       one client certificate per host, DNS SAN = the host
                             name, which is what the analyzer lets it speak for
and returns the pki directory. Existing files are kept, so certificates survive
`fabric stop`/`start`; hosts added later get theirs on the next call.
"""

import os
import subprocess

from . import layout as L

ANALYZER_DNS = "hostmesh-analyzer"
DAYS = "30"


def _run(*args: str) -> None:
    proc = subprocess.run(["openssl", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args[:2])}: {proc.stderr.strip()}")


def _key(path: str) -> None:
    _run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path)
    os.chmod(path, 0o600)


def _issue(pki: str, name: str, subject_alt: str, usage: str) -> None:
    """<name>.key and <name>.crt signed by the fabric CA."""
    key, crt, csr = (os.path.join(pki, f"{name}.{ext}") for ext in ("key", "crt", "csr"))
    ext = os.path.join(pki, f"{name}.ext")
    _key(key)
    _run("req", "-new", "-key", key, "-subj", f"/CN={name}", "-out", csr)
    with open(ext, "w") as f:
        f.write(f"subjectAltName={subject_alt}\nextendedKeyUsage={usage}\n"
                "keyUsage=critical,digitalSignature\nbasicConstraints=CA:FALSE\n")
    _run("x509", "-req", "-in", csr, "-CA", os.path.join(pki, "ca.crt"), "-CAkey",
         os.path.join(pki, "ca.key"), "-CAcreateserial", "-days", DAYS, "-sha256",
         "-extfile", ext, "-out", crt + ".new")
    os.replace(crt + ".new", crt)  # a half-written certificate is never read
    for leftover in (csr, ext):
        os.remove(leftover)


def ensure(sdir: str, hosts: list[str]) -> str:
    pki = os.path.join(sdir, "pki")
    os.makedirs(pki, mode=0o700, exist_ok=True)
    if not os.path.exists(os.path.join(pki, "ca.crt")):
        _key(os.path.join(pki, "ca.key"))
        _run("req", "-x509", "-new", "-key", os.path.join(pki, "ca.key"), "-subj",
             "/CN=hostmesh testbed CA", "-days", DAYS, "-sha256",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             "-out", os.path.join(pki, "ca.crt"))
    if not os.path.exists(os.path.join(pki, "analyzer.crt")):
        _issue(pki, "analyzer", f"DNS:{ANALYZER_DNS},IP:{L.ANALYZER_IP}", "serverAuth")
    for host in hosts:
        if not os.path.exists(os.path.join(pki, f"{host}.crt")):
            _issue(pki, host, f"DNS:{host}", "clientAuth")
    return pki


def agent_tls(pki: str, host: str) -> dict:
    """The agent config's analyzer.tls block for `host`."""
    return {"ca": os.path.join(pki, "ca.crt"), "cert": os.path.join(pki, f"{host}.crt"),
            "key": os.path.join(pki, f"{host}.key"), "server_name": ANALYZER_DNS}


def analyzer_tls(pki: str) -> dict:
    """The analyzer config's grpc.tls block."""
    return {"cert": os.path.join(pki, "analyzer.crt"), "key": os.path.join(pki, "analyzer.key"),
            "client_ca": os.path.join(pki, "ca.crt")}
