"""The byte protocol between the client and sandbox/runner.py over the attach stream.

Docker multiplexes a non-TTY attach stream in frames: an 8-byte header (stream id, three
zero bytes, big-endian length) then the payload. `AttachStream` undoes that and exposes the
runner's stdout as a bounded, deadline-aware byte reader.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from selfcorrect_action.sandbox.models import ExecutionRequest

# The client's copy of the protocol's version: sandbox/runner.py carries the runner's, and
# the sandbox image carries that one as a label (image.PROTOCOL_LABEL), checked before a
# prebuilt image's first container (prebuilt.py). tests/unit/sandbox/test_wire.py holds the
# two copies equal; bump both with any change either side would misread. 4: the egress
# tunnel's NET frames between STARTED and RESULT (issue 19).
PROTOCOL_VERSION = 5
_STDOUT, _STDERR = 1, 2
MAX_RESULT_HEADER = 2 * 1024 * 1024
STDERR_KEEP = 8192


class StreamClosed(Exception):
    """The container closed its stdout before the runner finished its report."""


class DeadlineExceeded(Exception):
    """Nothing arrived in time."""


class ProtocolViolation(Exception):
    """The runner's output did not follow the wire format (or was too large)."""


class Tampered(ProtocolViolation):
    """Something other than the runner wrote a result into its channel."""


def encode_request(request: ExecutionRequest, *, deadline_s: float, nonce: str) -> bytes:
    header = {
        "nonce": nonce,
        "files": [{"path": f.path, "mode": f.mode, "size": len(f.data)} for f in request.files],
        "argv": request.argv,
        "env": request.env,
        "deadline_s": deadline_s,
        "caps": request.caps.model_dump(),
        "wanted": request.artifact_paths,
        "warm": request.warm,
        "warm_wait_s": request.warm_wait_s,
    }
    if request.boundary is not None:
        header["boundary"] = request.boundary.model_dump()
    if request.network != "none":
        header["egress"] = True  # the runner opens its tunnel (sandbox/egress_tunnel.py)
    header_bytes = json.dumps(header).encode()
    # The files' bytes back to back, as the header lists them: the runner needs no tarfile.
    payload = b"".join(f.data for f in request.files)
    preamble = b"SELFCORRECT-REQ %d %d %d\n" % (PROTOCOL_VERSION, len(header_bytes),
                                                 len(payload))
    return preamble + header_bytes + payload


class AttachStream:
    """Reads the runner's stdout out of a docker attach socket, keeping a little of its
    stderr (the runner's own crash message, if any) aside."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = bytearray()
        self._eof = False
        self.stderr = bytearray()
        self.deadline: float | None = None
        # The egress relay's threads write the tunnel's frames while this thread reads.
        self._send_lock = threading.Lock()

    def send(self, data: bytes) -> None:
        with self._send_lock:
            self._sock.settimeout(self._remaining())
            self._sock.sendall(data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()

    def read_line(self, limit: int) -> bytes:
        while b"\n" not in self._buffer:
            if len(self._buffer) > limit:
                raise ProtocolViolation(f"expected a line, got {len(self._buffer)} bytes")
            self._fill()
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer[:] = rest
        return line

    def read_exact(self, size: int) -> bytes:
        while len(self._buffer) < size:
            self._fill()
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def read(self, size: int = -1) -> bytes:
        """File-like read for tarfile's stream mode: returns b'' at EOF."""
        if size < 0:
            size = 1 << 20
        while not self._buffer and not self._eof:
            try:
                self._fill()
            except StreamClosed:
                break
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _fill(self) -> None:
        if self._eof:
            raise StreamClosed
        kind, size = self._frame_header()
        payload = self._recv_exact(size)
        if kind == _STDERR:
            room = STDERR_KEEP - len(self.stderr)
            self.stderr += payload[: max(0, room)]
        else:
            self._buffer += payload

    def _frame_header(self) -> tuple[int, int]:
        header = self._recv_exact(8, allow_eof=True)
        if not header:
            self._eof = True
            raise StreamClosed
        kind, size = struct.unpack(">BxxxL", header)
        return kind, size

    def _recv_exact(self, size: int, *, allow_eof: bool = False) -> bytes:
        chunks, remaining = [], size
        while remaining:
            self._sock.settimeout(self._remaining())
            try:
                chunk = self._sock.recv(min(remaining, 1 << 20))
            except TimeoutError as exc:
                raise DeadlineExceeded from exc
            if not chunk:
                if allow_eof and remaining == size:
                    return b""
                self._eof = True
                raise StreamClosed
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def _remaining(self) -> float | None:
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded
        return left


def read_started(stream: AttachStream) -> None:
    line = stream.read_line(64)
    if line != b"STARTED":
        raise ProtocolViolation(f"expected STARTED, got {line[:64]!r}")


# What the runner's tunnel sends in one frame at most (egress_tunnel.CHUNK is 64 KiB).
MAX_NET_FRAME = 1024 * 1024
OnNet = Callable[[int, bytes, bytes], None]


def read_result(stream: AttachStream, nonce: str, on_net: OnNet | None = None
                ) -> dict[str, Any]:
    """`RESULT <nonce> <length>` then the report: one script's run. Before it, with the
    network on, the tunnel's `NET <nonce> <id> <kind> <length>` frames, each handed to
    `on_net(id, kind, payload)` as it comes."""
    while True:
        line = stream.read_line(128)
        if line.startswith(b"NET ") and on_net is not None:
            conn_id, kind, size = _net_header(line, nonce)
            on_net(conn_id, kind, stream.read_exact(size))
            continue
        (size,) = parse_header(line, b"RESULT", nonce, fields=1)
        return read_report(stream, size, MAX_RESULT_HEADER, "result header")


def _net_header(line: bytes, nonce: str) -> tuple[int, bytes, int]:
    parts = line.split()
    if (len(parts) != 5 or not parts[2].isdigit() or parts[3] not in (b"OPEN", b"DATA", b"END")
            or not parts[4].isdigit() or int(parts[4]) > MAX_NET_FRAME):
        raise ProtocolViolation(f"a malformed tunnel frame: {line[:64]!r}")
    if parts[1] != nonce.encode():
        raise Tampered("a tunnel frame with the wrong nonce: the script wrote into the "
                       "runner's channel")
    return int(parts[2]), parts[3], int(parts[4])


def read_header(stream: AttachStream, verb: bytes, nonce: str, *, fields: int,
                max_line: int) -> list[int]:
    """A `<verb> <nonce> <n>...` line with `fields` whole numbers after the nonce (the one
    parser of every result line the runner writes: RESULT, ITEM-RESULT)."""
    return parse_header(stream.read_line(max_line), verb, nonce, fields=fields)


def parse_header(line: bytes, verb: bytes, nonce: str, *, fields: int) -> list[int]:
    parts = line.split()
    if (len(parts) != 2 + fields or parts[0] != verb
            or not all(part.isdigit() for part in parts[2:])):
        raise ProtocolViolation(f"expected {verb.decode()} <nonce> and {fields} number(s), "
                                f"got {line[:64]!r}")
    if parts[1] != nonce.encode():
        raise Tampered("a result line with the wrong nonce: the script wrote into the "
                       "runner's channel")
    return [int(part) for part in parts[2:]]


def read_report(stream: AttachStream, size: int, cap: int, what: str) -> dict[str, Any]:
    """`size` bytes of JSON that must be an object, refused above `cap`."""
    if size > cap:
        raise ProtocolViolation(f"{what} of {size} bytes exceeds the cap")
    try:
        report = json.loads(stream.read_exact(size))
    except ValueError as exc:
        raise ProtocolViolation(f"{what} is not JSON: {exc}") from exc
    if not isinstance(report, dict):
        raise ProtocolViolation(f"{what} is not a JSON object")
    return report
