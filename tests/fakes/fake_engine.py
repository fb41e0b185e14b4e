"""A container engine at the Engine seam, for unit tests of the sandbox client, the warm
pool, the lifecycle and the image build without a Docker daemon (the real-Docker suites in
tests/integration and tests/security stay).

Each started container gets a socket pair: our end goes to the code under test as the attach
socket, and a thread on the other end plays the runner's side of the wire protocol (reads the
request, answers STARTED, a RESULT with the request's nonce, and a ustar stream of files), as
`behaviour` decides from the request header.
"""

from __future__ import annotations

import io
import json
import socket
import struct
import tarfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from selfcorrect_action.errors import ImagePullFailed, SandboxError
from selfcorrect_action.sandbox.engine_api import ContainerInfo, ImageInfo, StartedContainer
from selfcorrect_action.sandbox.image import PROTOCOL_LABEL
from selfcorrect_action.sandbox.wire import PROTOCOL_VERSION

# The labels of a sandbox image this selfcorrect can speak to: what a test passes for an
# image it names as a prebuilt one (`sandbox_image=`), which is checked before it is used.
SPEAKS_OUR_PROTOCOL = {PROTOCOL_LABEL: str(PROTOCOL_VERSION)}


@dataclass(frozen=True)
class Reply:
    """What the fake runner answers: the report's fields and the files it streams back."""

    report: Mapping[str, Any] = field(default_factory=lambda: {"exit_code": 0})
    files: Mapping[str, bytes] = field(default_factory=dict)
    die: bool = False  # close the stream after STARTED, as a killed runner would
    # Seconds the script "runs" before the report comes; a kill ends it at once, and the
    # runner dies with it (the stream closes without a report).
    runs_s: float = 0.0


Behaviour = Callable[[dict[str, Any]], Reply]


def _frame(payload: bytes) -> bytes:
    return struct.pack(">BxxxL", 1, len(payload)) + payload


def _ustar(files: Mapping[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@dataclass
class FakeContainer:
    id: str
    config: Mapping[str, Any]
    status: str = "running"
    killed: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)
    stopped: threading.Event = field(default_factory=threading.Event)  # set by kill


class FakeEngine:
    def __init__(self, *, behaviour: Behaviour | None = None,
                 runtimes: dict[str, list[str]] | None = None,
                 images: dict[str, Mapping[str, str]] | None = None,
                 pull: str = "fail",
                 registry: dict[str, Mapping[str, str]] | None = None) -> None:
        self.behaviour = behaviour or (lambda header: Reply())
        self._runtimes = runtimes if runtimes is not None else {"runc": [], "runsc": [
            "--network=none"]}
        self.images = dict(images or {})
        self.pull_mode = pull  # "ok", "fail" or "hang" (until release is set)
        # What pull_image finds, by the reference it is asked for: its labels.
        self.registry = dict(registry or {})
        self.pulled: list[str] = []
        self.release = threading.Event()
        self.containers: dict[str, FakeContainer] = {}
        self.history: list[FakeContainer] = []  # every container ever started, in order
        self.removed: list[str] = []
        self.fail_next_start: Exception | None = None
        self.state: dict[str, Any] = {"ExitCode": 0, "OOMKilled": False}
        self._lock = threading.Lock()
        self._count = 0

    # ---- Engine ----
    def runtimes(self) -> dict[str, list[str]]:
        return dict(self._runtimes)

    def start_container(self, config: Mapping[str, Any]) -> StartedContainer:
        with self._lock:
            if self.fail_next_start is not None:
                failure, self.fail_next_start = self.fail_next_start, None
                raise failure
            self._count += 1
            container = FakeContainer(id=f"c{self._count}", config=config)
            self.containers[container.id] = container
            self.history.append(container)
        ours, theirs = socket.socketpair()
        threading.Thread(target=self._runner, args=(container, theirs), daemon=True).start()
        return StartedContainer(id=container.id, socket=ours)

    def kill(self, container_id: str) -> None:
        with self._lock:
            if container_id in self.containers:
                self.containers[container_id].killed = True
                self.containers[container_id].stopped.set()

    def remove(self, container_id: str) -> None:
        with self._lock:
            if self.containers.pop(container_id, None) is not None:
                self.removed.append(container_id)

    def stopped_state(self, container_id: str, *, wait_s: float) -> dict[str, Any]:
        return dict(self.state)

    def labelled(self, label: str) -> list[ContainerInfo]:
        with self._lock:
            return [ContainerInfo(c.id, c.status, dict(c.config.get("labels", {})))
                    for c in self.containers.values() if label in c.config.get("labels", {})]

    def image(self, tag: str) -> ImageInfo | None:
        labels = self.images.get(tag)
        return None if labels is None else ImageInfo(f"sha256:{tag}", dict(labels))

    def remove_image(self, image_id: str) -> None:
        self.images = {tag: labels for tag, labels in self.images.items()
                       if f"sha256:{tag}" != image_id and tag != image_id}

    def images_labelled(self, label: str) -> list[ImageInfo]:
        return [ImageInfo(f"sha256:{tag}", dict(labels), (tag,))
                for tag, labels in self.images.items() if label in labels]

    def build_image(self, context: IO[bytes], *, tag: str, labels: Mapping[str, str],
                    nocache: bool) -> Iterator[dict[str, Any]]:
        yield {"stream": f"Step 1/1 : building {tag}\n"}
        self.images[tag] = dict(labels)
        yield {"aux": {"ID": f"sha256:{tag}"}}

    def import_image(self, rootfs_tar: IO[bytes], *, repository: str, tag: str) -> str:
        rootfs_tar.read()
        self.images[f"{repository}:{tag}"] = {}
        return '{"status":"sha256:imported"}'

    def pull(self, repository: str, tag: str) -> bool:
        if self.pull_mode == "hang":
            self.release.wait(10)
        if self.pull_mode == "ok":
            self.images[f"{repository}:{tag}"] = {}
            return True
        return False

    def pull_image(self, repository: str, tag: str) -> None:
        reference = f"{repository}{'@' if tag.startswith('sha256:') else ':'}{tag}"
        self.pulled.append(reference)
        if reference not in self.registry:
            raise ImagePullFailed(f"pulling {reference} failed: manifest unknown")
        self.images[reference] = dict(self.registry[reference])

    # ---- the runner's side of the wire ----
    def _runner(self, container: FakeContainer, sock: socket.socket) -> None:
        with sock:
            header = _read_request(sock)
            if header is None:
                return
            container.requests.append(header)
            reply = self.behaviour(header)
            sock.sendall(_frame(b"STARTED\n"))
            if reply.die or container.stopped.wait(reply.runs_s):
                return
            report = json.dumps({"stdout": {"text": "", "total_bytes": 0},
                                 "stderr": {"text": "", "total_bytes": 0},
                                 "duration_ms": 5, **reply.report}).encode()
            sock.sendall(_frame(b"RESULT %s %d\n" % (header["nonce"].encode(), len(report))
                                + report))
            sock.sendall(_frame(_ustar(reply.files)))


def _read_request(sock: socket.socket) -> dict[str, Any] | None:
    preamble = b""
    while not preamble.endswith(b"\n"):
        chunk = sock.recv(1)
        if not chunk:
            return None
        preamble += chunk
    _, _, header_len, data_len = preamble.split()
    header: dict[str, Any] = json.loads(_recv(sock, int(header_len)))
    _recv(sock, int(data_len))
    return header


def _recv(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise SandboxError("the fake runner's request was cut off")
        data += chunk
    return data


def printing(*outputs: str, image: str) -> FakeEngine:
    """An engine whose scripts print `outputs` in turn (the last one from then on): a run's
    attempts, each judged by what it printed, without Docker. `image` is the prebuilt
    image the run names (`sandbox_image=`), which speaks our protocol."""
    said = list(outputs)

    def reply(header: dict[str, Any]) -> Reply:
        text = said.pop(0) if len(said) > 1 else said[0]
        return Reply(report={"exit_code": 0, "stdout": {"text": text,
                                                         "total_bytes": len(text)}})
    return FakeEngine(images={image: SPEAKS_OUR_PROTOCOL}, behaviour=reply)
