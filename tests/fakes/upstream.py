"""Stand-in upstream APIs for the egress tests (issue 19): a plain-HTTP and an HTTPS server,
both on 127.0.0.1 only, the HTTPS one with a certificate made here for its stand-in name.
Every request is recorded, so a test can say that nothing else reached them."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

LOOPBACK = "127.0.0.1"
# What a request with the right credential is told (never the credential itself, so the
# secret never reaches the sandbox through the answer either).
AUTHORIZED = "authorized"


@dataclass
class Seen:
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # (host, method, path)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_GET(self) -> None:
        with self.server.seen.lock:
            self.server.seen.requests.append((self.headers.get("Host", ""), "GET", self.path))
        if self.path.startswith("/bytes/"):
            body = b"x" * int(self.path.rsplit("/", 1)[1])
        elif self.path == "/secret":
            wanted = self.server.secret_header
            ok = wanted is not None and self.headers.get(wanted[0]) == wanted[1]
            body = (AUTHORIZED if ok else "unauthorized").encode()
        else:
            body = f"hello from {self.headers.get('Host', '?')} {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    seen: Seen
    secret_header: tuple[str, str] | None


@dataclass(frozen=True)
class Upstreams:
    http_port: int
    https_port: int
    ca_pem: bytes  # the HTTPS server's self-signed certificate, for the script to trust
    seen: Seen
    key_pem: bytes = b""  # its key (a benchmark serves the same name inside the sandbox)


@contextmanager
def upstreams(name: str, folder: Path, *, secret_header: tuple[str, str] | None = None
              ) -> Iterator[Upstreams]:
    seen = Seen()
    cert, key = self_signed(name, folder)
    servers = []
    for tls in (False, True):
        server = _Server((LOOPBACK, 0), _Handler)
        server.seen, server.secret_header = seen, secret_header
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    try:
        yield Upstreams(servers[0].server_address[1], servers[1].server_address[1],
                        cert.read_bytes(), seen, key.read_bytes())
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def self_signed(name: str, folder: Path) -> tuple[Path, Path]:
    """A certificate (and its key) valid for `name` and for 127.0.0.1, which the script
    trusts by being given it."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName(name), x509.IPAddress(ipaddress.ip_address(LOOPBACK))]),
                critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "upstream.pem", folder / "upstream.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path
