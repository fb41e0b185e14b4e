"""The docker SDK behind the Engine interface: the only module that imports `docker` (and
the `requests` it raises through), so every engine failure becomes one of our errors here,
by one set of rules:

- the engine not answering: SandboxUnavailable, with how to start it;
- the sandbox image missing, or an unknown runtime: SandboxUnavailable, with the fix;
- anything else: SandboxError (a broken engine or a bug), with what we were doing.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import socket
import time
import warnings
from collections.abc import Iterator, Mapping
from typing import IO, Any

import docker
import requests
from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from selfcorrect_action.errors import ImagePullFailed, SandboxError, SandboxUnavailable
from selfcorrect_action.sandbox.engine_api import ContainerInfo, ImageInfo, StartedContainer

START_DOCKER_HINT = (
    "start a Docker engine: `sudo systemctl start docker`, or on a machine without systemd "
    "`bash .ci/docker-up` from the selfcorrect checkout (installs docker.io and runsc if needed); "
    "set DOCKER_HOST if the engine listens elsewhere"
)
RUNSC_HINT = ("install gVisor (`apt-get install runsc`) and register it in /etc/docker/daemon.json "
              "with runtimeArgs [\"--network=none\"], then reload dockerd (`bash .ci/docker-up` "
              "does both); or use --runtime runc")
_log = logging.getLogger(__name__)
_ATTACH = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
# The SDK raises requests' own exceptions (not DockerException) when the engine is slow to
# answer, e.g. while gVisor tears down a sandbox holding a million files.
_ENGINE_ERRORS = (DockerException, requests.RequestException)


def first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__


@contextlib.contextmanager
def translated(doing: str) -> Iterator[None]:
    """Our error for whatever the SDK raises while `doing` ("creating a sandbox container")."""
    try:
        yield
    except requests.exceptions.ConnectionError as exc:
        raise SandboxUnavailable(f"the Docker engine does not answer ({doing}): "
                                 f"{first_line(exc)}", hint=START_DOCKER_HINT) from exc
    except ImageNotFound as exc:
        raise SandboxUnavailable(f"{doing}: the image is missing ({first_line(exc)})",
                                 hint="run `selfcorrect sandbox build`") from exc
    except APIError as exc:
        if "runtime" in str(exc).lower() and ("unknown" in str(exc).lower()
                                              or "invalid" in str(exc).lower()):
            raise SandboxUnavailable(f"{doing}: {first_line(exc)}", hint=RUNSC_HINT) from exc
        raise SandboxError(f"Docker failed while {doing}: {first_line(exc)}") from exc
    except _ENGINE_ERRORS as exc:
        raise SandboxError(f"Docker failed while {doing}: {first_line(exc)}") from exc


def _explanation(exc: APIError) -> str:
    """The engine's own words (the registry's reason, relayed) rather than the SDK's
    "500 Server Error for http+docker://localhost/..." prefix."""
    return str(getattr(exc, "explanation", "") or first_line(exc)).strip()[:300]


def connect(environ: Mapping[str, str] | None = None) -> DockerEngine:
    """The engine named by DOCKER_HOST (or the default socket), once it answers."""
    client: docker.DockerClient | None = None
    try:
        client = docker.from_env(environment=dict(environ) if environ is not None else None)
        client.ping()
    except _ENGINE_ERRORS as exc:
        # Only its words leave this block: the exception's frames hold the SDK's half-made
        # client and its socket, which nothing could collect while they were chained on.
        reason = first_line(exc)
    else:
        return DockerEngine(client)
    if client is not None:
        client.close()
    _collect_orphaned_connection()
    raise SandboxUnavailable(f"no Docker engine answers: {reason}", hint=START_DOCKER_HINT)


def _collect_orphaned_connection() -> None:
    """The SDK asks the engine for its API version while it builds the client: when that
    fails, the client is never handed to us and its half-made connection is left to the
    garbage collector (a ResourceWarning wherever it happens to run, and on CPython 3.11 a
    collection inside ast.parse can fail that parse). Collect it now, here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def _own_socket(raw: Any) -> socket.socket:
    """The attach connection as a socket we alone hold. Over a Unix socket or plain TCP the SDK
    returns the HTTP response's socket file, still referenced by the response: closing the
    socket under it left the descriptor open until the garbage collector found the response
    (a ResourceWarning per execution). A TLS socket is used as given."""
    held: socket.socket = getattr(raw, "_sock", raw)
    if type(held) is not socket.socket:  # an ssl.SSLSocket: its TLS state is in the object
        return held
    return socket.socket(fileno=held.detach())


class DockerEngine:
    def __init__(self, client: docker.DockerClient) -> None:
        # Public for tests that inspect the real engine's state directly.
        self.client = client
        if client.api.base_url.startswith("http+docker://"):
            # A local socket: no proxy or .netrc can apply, yet requests looks both up in
            # the environment at every call (a fifth of the host's CPU per execution in a
            # benchmark of many short runs). Over TCP the environment still counts.
            client.api.trust_env = False

    def close(self) -> None:
        """The SDK's pooled connections: left to the garbage collector, each is a
        ResourceWarning and an open descriptor until then."""
        self.client.close()

    def runtimes(self) -> dict[str, list[str]]:
        with translated("querying the Docker engine"):
            found = self.client.info().get("Runtimes", {}) or {}
        return {name: list((spec or {}).get("runtimeArgs") or []) for name, spec in found.items()}

    def start_container(self, config: Mapping[str, Any]) -> StartedContainer:
        with translated("creating a sandbox container"):
            container = self.client.containers.create(**config)
        try:
            with translated("starting a sandbox container"):
                sock = _own_socket(container.attach_socket(params=_ATTACH))
                container.start()
        except BaseException:
            self.remove(container.id)
            raise
        return StartedContainer(id=container.id, socket=sock)

    def kill(self, container_id: str) -> None:
        with contextlib.suppress(*_ENGINE_ERRORS):
            self.client.api.kill(container_id)

    def remove(self, container_id: str, *, attempts: int = 4) -> None:
        """Gone when this returns, as far as the engine lets us: dockerd refuses a forced
        removal now and then (a kill that timed out, "removal already in progress", gVisor
        still tearing a sandbox down), and one refusal used to leave the container behind
        silently until the reaper's next pass. NotFound means done."""
        refusal = ""
        for attempt in range(attempts):
            try:
                self.client.api.remove_container(container_id, force=True)
                return
            except NotFound:
                return
            except _ENGINE_ERRORS as exc:
                refusal = first_line(exc)
            if attempt + 1 < attempts:
                time.sleep(0.2 * (attempt + 1))
        _log.warning("the Docker engine refused to remove container %s %d times: %s",
                     container_id[:12], attempts, refusal)

    def stopped_state(self, container_id: str, *, wait_s: float) -> dict[str, Any]:
        try:
            self.client.api.wait(container_id, timeout=wait_s)
            attrs = self.client.api.inspect_container(container_id)
        except Exception:  # the wait times out through requests; any failure means "unknown"
            return {}
        return dict(attrs.get("State", {}))

    def labelled(self, label: str) -> list[ContainerInfo]:
        try:
            # ignore_removed: the SDK inspects each listed container; one that another run
            # removes in between (any busy shared engine) used to fail the whole list,
            # and every caller then saw no container at all: the reaper reaped nothing.
            found = self.client.containers.list(all=True, filters={"label": label},
                                                ignore_removed=True)
        except _ENGINE_ERRORS:
            return []
        return [ContainerInfo(c.id, c.status, dict(c.labels or {})) for c in found]

    def image(self, tag: str) -> ImageInfo | None:
        with translated(f"looking up {tag}"):
            try:
                image = self.client.images.get(tag)
            except ImageNotFound:
                return None
        return ImageInfo(image.id, dict(image.labels or {}))

    def remove_image(self, image_id: str) -> None:
        with contextlib.suppress(*_ENGINE_ERRORS):
            self.client.images.remove(image_id)

    def images_labelled(self, label: str) -> list[ImageInfo]:
        with translated(f"listing the images labelled {label}"):
            found = self.client.images.list(filters={"label": label})
        return [ImageInfo(image.id, dict(image.labels or {}), tuple(image.tags or ()))
                for image in found]

    def build_image(self, context: IO[bytes], *, tag: str, labels: Mapping[str, str],
                    nocache: bool) -> Iterator[dict[str, Any]]:
        with translated(f"building {tag}"):
            # pull=False: the base is local by now (ensure_base), and no registry may answer.
            stream = self.client.api.build(
                fileobj=context, custom_context=True, tag=tag, labels=dict(labels), rm=True,
                forcerm=True, nocache=nocache, pull=False, decode=True,
            )
            yield from stream

    def import_image(self, rootfs_tar: IO[bytes], *, repository: str, tag: str) -> str:
        with translated(f"importing {repository}:{tag}"):
            reply = self.client.api.import_image_from_stream(
                rootfs_tar, repository=repository, tag=tag, changes=['CMD ["bash"]'])
        return str(reply)

    def pull(self, repository: str, tag: str) -> bool:
        try:
            self.client.api.pull(repository, tag=tag)
        except (*_ENGINE_ERRORS, OSError):
            return False
        return True

    def pull_image(self, repository: str, tag: str) -> None:
        reference = f"{repository}{'@' if tag.startswith('sha256:') else ':'}{tag}"
        error = None
        with translated(f"pulling {reference}"):
            try:
                # Streamed: a registry's refusal midway arrives as an "error" message in an
                # HTTP 200 stream, which the unstreamed call would hand back as plain text.
                # Read to its end (the engine ends it after an error), so the connection is
                # given back rather than left to the garbage collector.
                for message in self.client.api.pull(repository, tag=tag, stream=True,
                                                    decode=True):
                    error = error or message.get("error")
            except APIError as exc:  # the registry's answer, relayed: 404, 401, 500...
                raise ImagePullFailed(f"pulling {reference} failed: "
                                      f"{_explanation(exc)}") from exc
        if error:
            raise ImagePullFailed(f"pulling {reference} failed: {str(error).strip()[:300]}")

