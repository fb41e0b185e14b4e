"""The sandbox's end of the egress tunnel (issue 19): a listener on the container's own
loopback that the script reaches through HTTP_PROXY/HTTPS_PROXY, each connection's bytes
carried over the runner's attach stream to the host, where the egress proxy decides.

The container keeps `network_mode=none`: it has a loopback interface and nothing else, so
this listener is the only way out, under runc and runsc alike, without runtime flags, host
sockets or bind mounts. Nothing here reads what the script sends: the host side parses the
proxy requests and applies the contract's rules, so a script that talks to this listener
directly gains nothing a proxy client would not have.

Imported by runner.py only when a request asks for the network. `_socket`, not `socket`:
socket.py imports enum, selectors and io, which cost a cold start under gVisor.

Frames (the runner's stdout, after STARTED and before RESULT, each carrying the request's
nonce like RESULT does):
  b"NET <nonce> <id> OPEN 0\n"              the script opened connection <id>
  b"NET <nonce> <id> DATA <n>\n" + n bytes  it sent these
  b"NET <nonce> <id> END 0\n"               it finished sending, or the connection broke
and on the runner's stdin, from the host:
  b"<id> DATA <n>\n" + n bytes              bytes for the script
  b"<id> END 0\n"                           no more: close once they are delivered
"""

from __future__ import annotations

import _socket
import errno
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, BinaryIO

LOOPBACK = "127.0.0.1"
# At most this many connections open at once (the runner's descriptors are few: nofile is
# the container's limit), and this much waiting for a script that does not read, before
# the tunnel stops reading the host's bytes (TCP's back-pressure does the rest).
MAX_OPEN = 64
MAX_PENDING = 4 * 1024 * 1024
CHUNK = 65536
MAX_FRAME = 1024 * 1024
STDIN = 0
# Every name a client library reads the proxy from: requests, urllib, httpx and curl read
# the upper- or lower-case forms; ALL_PROXY covers the rest of curl's and httpx's schemes.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                   "all_proxy")


class _Conn:
    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.pending = bytearray()
        self.reading = True  # the script may still send
        self.closing = False  # the host has said END


class Tunnel:
    """The listener, its connections, and the frames both ways. `watch` is the runner's
    map of descriptors to handlers (runner._pump's `extra`): the tunnel adds and removes
    its own there."""

    def __init__(self, out: BinaryIO, nonce: str, watch: dict) -> None:
        self.out = out
        self.nonce = nonce.encode()
        self.watch = watch
        self.conns: dict[int, _Conn] = {}
        self.by_fd: dict[int, int] = {}
        self.next_id = 1
        self.inbox = bytearray()
        self.stdin_open = True
        self.listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        self.listener.bind((LOOPBACK, 0))
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        watch[self.listener.fileno()] = self._accept
        watch[STDIN] = self._from_host

    def environment(self) -> dict[str, str]:
        url = f"http://{LOOPBACK}:{self.port}"
        return {name: url for name in PROXY_VARIABLES}

    def writers(self) -> dict[int, Callable[[int], Any]]:
        """The connections with bytes waiting for the script to read them."""
        return {c.sock.fileno(): self._flush_fd for c in self.conns.values() if c.pending}

    def close(self) -> None:
        for conn_id in list(self.conns):
            self._drop(conn_id, tell_host=False)
        self.watch.pop(self.listener.fileno(), None)
        self.watch.pop(STDIN, None)
        self.listener.close()

    def _frame(self, conn_id: int, kind: bytes, data: bytes = b"") -> None:
        self.out.write(b"NET %s %d %s %d\n" % (self.nonce, conn_id, kind, len(data)) + data)
        self.out.flush()

    def _accept(self, fd: int) -> bool:
        try:
            new_fd, _ = self.listener._accept()  # type: ignore[attr-defined]
        except OSError:
            return True
        sock = _socket.socket(fileno=new_fd)
        if len(self.conns) >= MAX_OPEN:
            sock.close()
            return True
        sock.setblocking(False)
        # The tunnel hands bytes on as they come: Nagle's algorithm holding a small write
        # back for an ACK costs a TLS handshake tens of milliseconds per round trip.
        sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        conn_id, self.next_id = self.next_id, self.next_id + 1
        self.conns[conn_id] = _Conn(sock)
        self.by_fd[sock.fileno()] = conn_id
        self.watch[sock.fileno()] = self._from_script
        self._frame(conn_id, b"OPEN")
        return True

    def _from_script(self, fd: int) -> bool:
        conn_id = self.by_fd.get(fd)
        conn = self.conns.get(conn_id) if conn_id is not None else None
        if conn is None:
            return False
        try:
            data = conn.sock.recv(CHUNK)
        except BlockingIOError:
            return True
        except OSError:
            self._drop(conn_id, tell_host=True)  # type: ignore[arg-type]
            return False
        if data:
            self._frame(conn_id, b"DATA", data)  # type: ignore[arg-type]
            return True
        conn.reading = False
        self._frame(conn_id, b"END")  # type: ignore[arg-type]
        return False

    def _from_host(self, fd: int) -> bool:
        try:
            data = os.read(STDIN, CHUNK)
        except OSError:
            data = b""
        if not data:
            self.stdin_open = False
            for conn_id in list(self.conns):
                self._drop(conn_id, tell_host=False)
            return False
        self.inbox += data
        while self._one_frame():
            pass
        # Past MAX_PENDING, stop reading the host until the script catches up (_flush_fd).
        return sum(len(c.pending) for c in self.conns.values()) <= MAX_PENDING

    def _one_frame(self) -> bool:
        end = self.inbox.find(b"\n")
        if end < 0:
            if len(self.inbox) > 64:
                raise SystemExit("runner: the host's tunnel frame is malformed")
            return False
        parts = bytes(self.inbox[:end]).split()
        if len(parts) != 3 or not parts[0].isdigit() or not parts[2].isdigit() or (
                int(parts[2]) > MAX_FRAME):
            raise SystemExit("runner: the host's tunnel frame is malformed")
        size = int(parts[2])
        if len(self.inbox) < end + 1 + size:
            return False
        payload = bytes(self.inbox[end + 1 : end + 1 + size])
        del self.inbox[: end + 1 + size]
        conn = self.conns.get(int(parts[0]))
        if conn is not None:
            if parts[1] == b"DATA":
                conn.pending += payload
            else:
                conn.closing = True
            self._flush(int(parts[0]))
        return True

    def _flush_fd(self, fd: int) -> bool:
        conn_id = self.by_fd.get(fd)
        if conn_id is not None:
            self._flush(conn_id)
        if self.stdin_open and STDIN not in self.watch and sum(
                len(c.pending) for c in self.conns.values()) <= MAX_PENDING // 4:
            self.watch[STDIN] = self._from_host
        return True

    def _flush(self, conn_id: int) -> None:
        conn = self.conns[conn_id]
        while conn.pending:
            try:
                sent = conn.sock.send(conn.pending[:CHUNK])
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno != errno.EINTR:
                    self._drop(conn_id, tell_host=True)
                    return
                continue
            del conn.pending[:sent]
        if conn.closing:
            self._drop(conn_id, tell_host=False)

    def _drop(self, conn_id: int, *, tell_host: bool) -> None:
        conn = self.conns.pop(conn_id, None)
        if conn is None:
            return
        fd = conn.sock.fileno()
        self.by_fd.pop(fd, None)
        self.watch.pop(fd, None)
        conn.sock.close()
        if tell_host:
            self._frame(conn_id, b"END")
