"""The host's end of the egress tunnel: the runner's NET frames in, one proxy session per
connection (proxy.serve, on a thread of its own), the sessions' bytes back as frames on the
runner's stdin. `close()` ends every session and returns the run's NetworkLog."""

from __future__ import annotations

import contextlib
import queue
import socket
import threading
from collections.abc import Callable

from selfcorrect_action.network_rules import NetworkMode, NetworkRules, describe
from selfcorrect_action.sandbox.egress.policy import EgressSettings
from selfcorrect_action.sandbox.egress.proxy import Budget, serve
from selfcorrect_action.sandbox.egress.records import MAX_RECORDS, ConnectionRecord, NetworkLog

# Connections a run may open in all (each is a thread while it lasts).
MAX_CONNECTIONS = 500
FRAME_CHUNK = 65536
JOIN_TIMEOUT_S = 5.0


class _Connection:
    """One connection's script side, as proxy.serve reads and writes it."""

    def __init__(self, conn_id: int, relay: EgressRelay) -> None:
        self.conn_id = conn_id
        self.relay = relay
        self.inbox: queue.Queue[bytes] = queue.Queue()
        self.ended = False

    def recv(self, timeout: float) -> bytes | None:
        try:
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None

    def send(self, data: bytes) -> None:
        for start in range(0, len(data), FRAME_CHUNK):
            chunk = data[start : start + FRAME_CHUNK]
            self.relay.to_sandbox(b"%d DATA %d\n" % (self.conn_id, len(chunk)) + chunk)

    def end(self) -> None:
        if not self.ended:
            self.ended = True
            self.relay.to_sandbox(b"%d END 0\n" % self.conn_id)


class EgressRelay:
    def __init__(self, network: NetworkMode | NetworkRules, settings: EgressSettings,
                 send: Callable[[bytes], None]) -> None:
        self._network = network
        self._settings = settings
        self._send = send
        self._budget = Budget(settings.max_bytes)
        self._lock = threading.Lock()
        self._connections: dict[int, _Connection] = {}
        self._threads: list[threading.Thread] = []
        self._upstreams: list[socket.socket] = []
        self._records: list[ConnectionRecord] = []
        self._dropped = 0
        self._opened = 0
        self._closed = False

    def on_frame(self, conn_id: int, kind: bytes, payload: bytes) -> None:
        """A frame from the runner: OPEN, DATA or END for connection `conn_id`."""
        if kind == b"OPEN":
            self._open(conn_id)
            return
        connection = self._connections.get(conn_id)
        if connection is not None:
            connection.inbox.put(payload if kind == b"DATA" else b"")

    def to_sandbox(self, frame: bytes) -> None:
        with self._lock:
            if self._closed:
                return
        with contextlib.suppress(OSError):
            self._send(frame)

    def close(self) -> NetworkLog:
        with self._lock:
            self._closed = True
            upstreams = list(self._upstreams)
        for connection in self._connections.values():
            connection.inbox.put(b"")
        for upstream in upstreams:
            with contextlib.suppress(OSError):
                upstream.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(JOIN_TIMEOUT_S)
        return self.log()

    def log(self) -> NetworkLog:
        rules = self._network if isinstance(self._network, NetworkRules) else None
        with self._lock:
            records, dropped = list(self._records), self._dropped
        return NetworkLog(policy=describe(self._network),
                          allowed_hosts=list(rules.allow or []) if rules else [],
                          observe=bool(rules and rules.observe), connections=records,
                          dropped=dropped, capped=self._budget.exceeded.is_set())

    def _open(self, conn_id: int) -> None:
        connection = _Connection(conn_id, self)
        with self._lock:
            if self._closed or conn_id in self._connections:
                return
            self._opened += 1
            if self._opened > MAX_CONNECTIONS:
                self._note(ConnectionRecord(host="", kind="malformed", allowed=False,
                                            reason=f"more than {MAX_CONNECTIONS} connections "
                                            "in one run"))
                refused = True
            else:
                self._connections[conn_id] = connection
                refused = False
        if refused:
            connection.end()
            return
        thread = threading.Thread(target=self._session, args=(connection,),
                                  name=f"egress-{conn_id}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _session(self, connection: _Connection) -> None:
        try:
            record = serve(connection, self._network, self._settings, self._budget,
                           connect=self._connect)
        finally:
            connection.end()
        with self._lock:
            self._note(record)
            self._connections.pop(connection.conn_id, None)

    def _connect(self, address: tuple[str, int], timeout: float) -> socket.socket:
        upstream = socket.create_connection(address, timeout=timeout)
        # Bytes are relayed as they come: no waiting to coalesce small writes.
        upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._lock:
            self._upstreams.append(upstream)
            closed = self._closed
        if closed:
            upstream.close()
            raise OSError("the run has ended")
        return upstream

    def _note(self, record: ConnectionRecord) -> None:
        """Under the lock: keep the record, or count it past the cap."""
        if len(self._records) < MAX_RECORDS:
            self._records.append(record)
        else:
            self._dropped += 1
