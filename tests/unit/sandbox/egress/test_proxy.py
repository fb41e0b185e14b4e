"""One proxied connection, against a real upstream socket on 127.0.0.1: the script's side
is a queue of bytes standing in for the tunnel."""

from __future__ import annotations

import queue
import socket
import threading
from collections.abc import Iterator

import pytest

from selfcorrect_action.network_rules import NetworkRules
from selfcorrect_action.sandbox.egress.policy import EgressSettings
from selfcorrect_action.sandbox.egress.proxy import Budget, serve
from selfcorrect_action.sandbox.egress.records import ConnectionRecord


class _Side:
    def __init__(self, *chunks: bytes) -> None:
        self.inbox: queue.Queue[bytes] = queue.Queue()
        for chunk in chunks:
            self.inbox.put(chunk)
        self.sent = bytearray()
        self.ended = threading.Event()

    def recv(self, timeout: float) -> bytes | None:
        try:
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None

    def send(self, data: bytes) -> None:
        self.sent += data

    def end(self) -> None:
        self.ended.set()


@pytest.fixture
def upstream() -> Iterator[tuple[int, list[bytes]]]:
    """A one-shot HTTP server on 127.0.0.1 that records what it was sent."""
    server = socket.create_server(("127.0.0.1", 0))
    got: list[bytes] = []

    def answer() -> None:
        try:
            conn, _ = server.accept()
        except OSError:
            return  # a test that never connected: the fixture closed the server
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(4096)
            got.append(data)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield server.getsockname()[1], got
    server.close()


def _serve(side: _Side, rules: NetworkRules | str, environ: dict[str, str] | None = None,
           limit: int = 1_000_000) -> ConnectionRecord:
    settings = EgressSettings(resolve=lambda host, port: ["127.0.0.1"],
                              loopback_names=frozenset({"api.example.com"}),
                              environ=environ or {})
    return serve(side, rules, settings, Budget(limit))  # type: ignore[arg-type]


def _allow(port: int) -> NetworkRules:
    return NetworkRules.model_validate({
        "allow": ["api.example.com"], "ports": [port],
        "credentials": {"api.example.com": {"header": "X-Api-Key",
                                            "secret": "SELFCORRECT_SECRET_KEY"}}})


def test_a_plain_request_is_forwarded_in_origin_form_with_its_credential(
        upstream: tuple[int, list[bytes]]) -> None:
    port, got = upstream
    side = _Side(f"GET http://api.example.com:{port}/v1?q=1 HTTP/1.1\r\nHost: evil.example.com"
                 f"\r\nProxy-Authorization: x\r\nX-Api-Key: forged\r\n\r\n".encode())
    record = _serve(side, _allow(port), {"SELFCORRECT_SECRET_KEY": "real-key",
                                          "SELFCORRECT_SECRET_KEY_HOSTS": "api.example.com"})
    assert record.allowed and record.kind == "http" and record.address == "127.0.0.1"
    head = got[0].decode().lower()
    assert head.startswith("get /v1?q=1 http/1.1\r\n")
    assert "x-api-key: real-key" in head and "forged" not in head
    # The Host is the one that was checked, never the script's own.
    assert f"host: api.example.com:{port}\r\n" in head and "evil" not in head
    assert "proxy-authorization" not in head and "connection: close" in head
    assert side.sent.endswith(b"\r\n\r\nok") and side.ended.is_set()
    assert record.bytes_received == len(side.sent) and record.bytes_sent == len(got[0])


def test_a_connect_tunnel_relays_bytes_both_ways(upstream: tuple[int, list[bytes]]) -> None:
    port, got = upstream
    side = _Side(f"CONNECT api.example.com:{port} HTTP/1.1\r\n"
                 f"Host: api.example.com:{port}\r\n\r\n".encode(),
                 b"GET / HTTP/1.1\r\n\r\n", b"")
    record = _serve(side, _allow(port))
    assert record.kind == "https" and record.allowed
    assert side.sent.startswith(b"HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK")
    assert got == [b"GET / HTTP/1.1\r\n\r\n"]  # the tunnel adds nothing, not even a header


@pytest.mark.parametrize(("head", "said"), [
    (b"CONNECT evil.example.com:443 HTTP/1.1\r\nHost: evil.example.com:443\r\n\r\n",
     "not on the allow list"),
    (b"GET http://evil.example.com/ HTTP/1.1\r\nHost: evil.example.com\r\n\r\n",
     "not on the allow list"),
    (b"CONNECT api.example.com:22 HTTP/1.1\r\nHost: api.example.com:22\r\n\r\n",
     "port 22 is not in ports"),
])
def test_a_refusal_is_a_403_that_names_the_reason(head: bytes, said: str) -> None:
    side = _Side(head)
    record = _serve(side, _allow(443))
    assert not record.allowed and said in str(record.reason)
    assert side.sent.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert b"x-selfcorrect-egress: refused" in side.sent and said.encode() in side.sent


@pytest.mark.parametrize("head", [
    b"hello\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n",  # origin form: not a proxy request
    b"GET https://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
    b"CONNECT api.example.com HTTP/1.1\r\n\r\n",
])
def test_what_is_no_proxy_request_gets_a_400(head: bytes) -> None:
    side = _Side(head)
    record = _serve(side, "open")
    assert record.kind == "malformed" and not record.allowed
    assert side.sent.startswith(b"HTTP/1.1 400 ")


def test_the_byte_cap_ends_the_connection(upstream: tuple[int, list[bytes]]) -> None:
    port, _ = upstream
    side = _Side(f"GET http://api.example.com:{port}/ HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    record = _serve(side, _allow(port), limit=10)
    assert record.reason is not None and "byte cap" in record.reason
