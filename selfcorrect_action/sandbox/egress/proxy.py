"""One proxied connection: the script's HTTP proxy request, parsed by h11, judged by the
policy, then a CONNECT tunnel (HTTPS, bytes relayed as they are) or one plain-HTTP request
forwarded in origin form (where a credential header can be added) with its answer relayed.

h11 (python-hyper's sans-I/O HTTP/1.1 parser, the one under httpx and uvicorn) reads the
hostile side: strict about framing, bounded in what it buffers, and no I/O of its own, so
the proxy's threads and the tunnel's frames stay ours. One request per connection: after
the first, the connection ends, so a second request can never reuse an approved upstream
for another host.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol
from urllib.parse import urlsplit

import h11

from selfcorrect_action.network_rules import NetworkMode, NetworkRules, normal_host
from selfcorrect_action.sandbox.egress.policy import EgressSettings, credential_header, decide
from selfcorrect_action.sandbox.egress.records import ConnectionRecord

HEAD_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 10.0
MAX_HEAD_BYTES = 16 * 1024
CHUNK = 65536
REFUSED_HEADER = b"x-selfcorrect-egress"
# Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own: never forwarded upstream.
_HOP_BY_HOP = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"te",
                         b"trailer", b"upgrade", b"proxy-authorization",
                         b"proxy-authenticate"})


class SandboxEnd(Protocol):
    """The script's side of one connection, as the relay hands it over."""

    def recv(self, timeout: float) -> bytes | None:
        """Bytes from the script; b"" once it has finished sending; None on timeout."""
        ...

    def send(self, data: bytes) -> None: ...

    def end(self) -> None:
        """No more bytes for the script: its connection closes once they are delivered."""
        ...


class Budget:
    """The run's bytes, both ways, against its cap (shared by every connection)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()
        self.exceeded = threading.Event()

    def take(self, size: int) -> bool:
        with self._lock:
            self.used += size
            if self.used > self.limit:
                self.exceeded.set()
        return not self.exceeded.is_set()


Connect = Callable[[tuple[str, int], float], socket.socket]


def _connect(address: tuple[str, int], timeout: float) -> socket.socket:
    return socket.create_connection(address, timeout=timeout)


@dataclass
class _Traffic:
    sent: int = 0
    received: int = 0
    note: str | None = None


def serve(side: SandboxEnd, network: NetworkMode | NetworkRules, settings: EgressSettings,
          budget: Budget, connect: Connect = _connect) -> ConnectionRecord:
    """Handle one connection from its first byte to its end; the record says what it was."""
    server = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
    request = _request_head(side, server)
    if request is None:
        _respond(side, server, 400, "selfcorrect egress: expected an HTTP proxy request")
        return ConnectionRecord(host="", kind="malformed", allowed=False,
                                reason="not an HTTP proxy request (a client that ignores "
                                "HTTP_PROXY and talks to the proxy port directly?)")
    kind, host, port, path = _target(request)
    if kind is None:
        _respond(side, server, 400, f"selfcorrect egress: {path}")
        return ConnectionRecord(host=host, port=port, kind="malformed", allowed=False,
                                reason=path)
    decision = decide(network, host, port, settings)
    base = ConnectionRecord(host=normal_host(host), port=port, kind=kind,
                            allowed=decision.allowed, reason=decision.reason,
                            address=decision.address)
    if not decision.allowed or decision.address is None:
        _respond(side, server, 403, f"selfcorrect egress: {decision.reason}", refused=True)
        return base
    try:
        upstream = connect((decision.address, port), CONNECT_TIMEOUT_S)
    except OSError as exc:
        _respond(side, server, 502, f"selfcorrect egress: cannot connect to {host}:{port}")
        return base.model_copy(update={"reason": f"could not connect: {exc}"[:200]})
    with upstream:
        traffic = (_tunnel(side, server, upstream, budget) if kind == "https" else
                   _forward(side, server, upstream, request, (host, port, path),
                            credential_header(network, host, settings.environ), budget))
    return base.model_copy(update={"bytes_sent": traffic.sent,
                                   "bytes_received": traffic.received,
                                   "reason": traffic.note})


def _request_head(side: SandboxEnd, server: h11.Connection) -> h11.Request | None:
    while True:
        try:
            event = server.next_event()
        except h11.RemoteProtocolError:
            return None
        if isinstance(event, h11.Request):
            return event
        if event is not h11.NEED_DATA:
            return None
        data = side.recv(HEAD_TIMEOUT_S)
        if not data:
            return None
        server.receive_data(data)


Kind = Literal["https", "http"]


def _target(request: h11.Request) -> tuple[Kind | None, str, int, str]:
    """(kind, host, port, origin-form path); kind None with the problem in place of path."""
    target = request.target.decode("ascii", "replace")
    if request.method == b"CONNECT":
        host, _, digits = target.rpartition(":")
        host = host.strip("[]")
        if not host or not digits.isdigit():
            return None, host, 0, f"CONNECT needs host:port, got {target[:100]!r}"
        return "https", host, int(digits), ""
    parts = urlsplit(target)
    if parts.scheme != "http" or not parts.hostname:
        return None, parts.hostname or "", 0, (
            "an HTTPS URL needs CONNECT (set HTTPS_PROXY)" if parts.scheme == "https" else
            f"a proxy request names an absolute http:// URL, got {target[:100]!r}")
    try:
        port = parts.port or 80
    except ValueError:
        return None, parts.hostname, 0, f"bad port in {target[:100]!r}"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return "http", parts.hostname, port, path


def _respond(side: SandboxEnd, server: h11.Connection, status: int, text: str, *,
             refused: bool = False) -> None:
    body = (text + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"),
               (b"content-length", str(len(body)).encode()), (b"connection", b"close")]
    if refused:
        headers.append((REFUSED_HEADER, b"refused"))
    with contextlib.suppress(h11.LocalProtocolError):
        side.send(server.send(h11.Response(status_code=status, headers=headers,
                                           reason=b"Forbidden" if status == 403 else b"")))
        side.send(server.send(h11.Data(data=body)))
        side.send(server.send(h11.EndOfMessage()))
    side.end()


def _tunnel(side: SandboxEnd, server: h11.Connection, upstream: socket.socket,
            budget: Budget) -> _Traffic:
    traffic = _Traffic()
    side.send(b"HTTP/1.1 200 Connection established\r\n\r\n")
    early = server.trailing_data[0]
    if early:
        _upload(upstream, early, traffic, budget)
    return _both_ways(side, upstream, traffic, budget)


def _forward(side: SandboxEnd, server: h11.Connection, upstream: socket.socket,
             request: h11.Request, target: tuple[str, int, str],
             credential: tuple[str, str] | None, budget: Budget) -> _Traffic:
    """The request in origin form (Host set to the host that was checked, hop-by-hop headers
    dropped, the credential put in, Connection: close), its body as h11 frames it, then the
    answer relayed as is. A Host header of the script's own would ask a server that hosts
    many names for one that was never allowed."""
    traffic = _Traffic()
    client = h11.Connection(h11.CLIENT)
    host, port, path = target
    dropped = _HOP_BY_HOP | {b"host"} | (
        {credential[0].lower().encode()} if credential else set())
    authority = f"[{host}]" if ":" in host else host
    headers = [(b"host", (authority if port == 80 else f"{authority}:{port}").encode())]
    headers += [(name, value) for name, value in request.headers if name not in dropped]
    if credential is not None:
        headers.append((credential[0].encode(), credential[1].encode()))
    headers.append((b"connection", b"close"))
    try:
        _upload(upstream, client.send(h11.Request(method=request.method, target=path,
                                                  headers=headers)), traffic, budget)
        while True:
            event = server.next_event()
            if event is h11.NEED_DATA:
                data = side.recv(HEAD_TIMEOUT_S)
                if not data:
                    break
                server.receive_data(data)
                continue
            if isinstance(event, h11.Data | h11.EndOfMessage):
                _upload(upstream, client.send(event) or b"", traffic, budget)
            if not isinstance(event, h11.Data):
                break
    except (h11.ProtocolError, OSError) as exc:
        traffic.note = f"the request could not be forwarded: {exc}"[:200]
        side.end()
        return traffic
    _download(side, upstream, traffic, budget)
    return traffic


def _both_ways(side: SandboxEnd, upstream: socket.socket, traffic: _Traffic,
               budget: Budget) -> _Traffic:
    down = threading.Thread(target=_download, args=(side, upstream, traffic, budget),
                            name="egress-down", daemon=True)
    down.start()
    try:
        while not budget.exceeded.is_set():
            data = side.recv(1.0)
            if data is None:
                if not down.is_alive():
                    break
                continue
            if not data:
                with contextlib.suppress(OSError):
                    upstream.shutdown(socket.SHUT_WR)
                break
            _upload(upstream, data, traffic, budget)
    except OSError:
        pass
    down.join()
    if budget.exceeded.is_set():
        traffic.note = "ended at the run's byte cap"
    return traffic


def _upload(upstream: socket.socket, data: bytes, traffic: _Traffic, budget: Budget) -> None:
    if not budget.take(len(data)):
        raise OSError("the run's byte cap is reached")
    upstream.sendall(data)
    traffic.sent += len(data)


def _download(side: SandboxEnd, upstream: socket.socket, traffic: _Traffic,
              budget: Budget) -> None:
    """Upstream's bytes to the script until upstream ends (or the cap does)."""
    upstream.settimeout(1.0)
    try:
        while not budget.exceeded.is_set():
            try:
                data = upstream.recv(CHUNK)
            except TimeoutError:
                continue
            if not data or not budget.take(len(data)):
                break
            side.send(data)
            traffic.received += len(data)
    except OSError:
        pass
    finally:
        side.end()
        with contextlib.suppress(OSError):
            upstream.shutdown(socket.SHUT_RDWR)
