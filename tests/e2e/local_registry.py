"""A real image registry on 127.0.0.1, standing in for GHCR in the tests and benchmarks of
prebuilt images: Debian's `docker-registry` (distribution 2.8, the registry GHCR speaks the
API of), started with a config and storage of its own in a scratch folder and stopped by its
process id. Docker treats registries on 127.0.0.0/8 as insecure-allowed, so plain HTTP
needs no daemon setting. `.ci/docker-up` installs the package.

Also what the release workflow does with a registry, through the docker SDK: push an image
(its digest, as build-push-action reports it), and the registry's own view of what it holds.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors

BINARY = "docker-registry"
START_TIMEOUT_S = 20.0
MANIFEST_TYPES = ", ".join([
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.oci.image.index.v1+json",
])


class RegistryUnavailable(RuntimeError):
    """The registry binary is missing or did not start; the message says which."""


@dataclass(frozen=True)
class LocalRegistry:
    host: str  # "127.0.0.1:<port>", the registry part of every reference
    storage: Path

    def blob_path(self, digest: str) -> Path:
        """Where the registry keeps a blob (distribution's filesystem layout): a test can
        lose one, as a broken registry would."""
        hexdigits = digest.removeprefix("sha256:")
        return self.storage / "docker/registry/v2/blobs/sha256" / hexdigits[:2] / hexdigits

    def url(self, path: str) -> str:
        return f"http://{self.host}{path}"

    def manifest(self, repository: str, digest: str) -> dict[str, Any]:
        request = urllib.request.Request(self.url(f"/v2/{repository}/manifests/{digest}"),
                                         headers={"Accept": MANIFEST_TYPES})
        with urllib.request.urlopen(request, timeout=10) as answer:
            loaded: dict[str, Any] = json.load(answer)
        return loaded

    def blob_digest(self, repository: str, digest: str) -> str | None:
        """The digest the registry serves a blob under (HEAD, nothing downloaded), or None
        when it has no such blob."""
        request = urllib.request.Request(self.url(f"/v2/{repository}/blobs/{digest}"),
                                         method="HEAD")
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return str(answer.headers.get("Docker-Content-Digest"))
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise


def config_text(*, port: int, storage: Path) -> str:
    """The registry's configuration: filesystem storage in `storage`, HTTP on loopback
    only, no auth, no access log (one line per request would drown a failing test's log)."""
    return (
        "version: 0.1\n"
        "log:\n  level: warn\n  accesslog:\n    disabled: true\n"
        f"storage:\n  filesystem:\n    rootdirectory: {storage}\n  delete:\n    enabled: true\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def local_registry(scratch: Path) -> Iterator[LocalRegistry]:
    binary = shutil.which(BINARY)
    if binary is None:
        raise RegistryUnavailable(f"{BINARY} is not installed: `apt-get install {BINARY}` "
                                  "(`bash .ci/docker-up` installs it)")
    scratch.mkdir(parents=True, exist_ok=True)
    port = free_port()
    (scratch / "config.yml").write_text(config_text(port=port, storage=scratch / "storage"))
    log = (scratch / "registry.log").open("wb")
    process = subprocess.Popen([binary, "serve", str(scratch / "config.yml")],
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        registry = LocalRegistry(f"127.0.0.1:{port}", scratch / "storage")
        _wait_until_up(registry, process, scratch / "registry.log")
        yield registry
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_until_up(registry: LocalRegistry, process: subprocess.Popen[bytes],
                   log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        with contextlib.suppress(OSError), urllib.request.urlopen(registry.url("/v2/"),
                                                                   timeout=2) as answer:
            if answer.status == 200:
                return
        time.sleep(0.1)
    raise RegistryUnavailable(f"{BINARY} did not answer on {registry.host} within "
                              f"{START_TIMEOUT_S:g} s; its log:\n{log.read_text()[-2000:]}")


def push(client: docker.DockerClient, image: str, repository: str, tag: str) -> str:
    """Tag `image` as repository:tag, push it, and return the digest the registry stored
    the manifest under (what build-push-action's `digest` output is in the workflow)."""
    client.images.get(image).tag(repository, tag)
    digest = None
    for message in client.api.push(repository, tag=tag, stream=True, decode=True):
        if message.get("error"):
            raise RuntimeError(f"pushing {repository}:{tag} failed: {message['error']}")
        digest = (message.get("aux") or {}).get("Digest", digest)
    if digest is None:
        raise RuntimeError(f"pushing {repository}:{tag} reported no digest")
    return str(digest)


def forget(client: docker.DockerClient, *references: str) -> None:
    """Drop these names from the engine, keeping the image under its other names: the
    engine then has to ask the registry for it again (the content-hash-tagged images the
    other tests use stay)."""
    for reference in references:
        with contextlib.suppress(docker.errors.ImageNotFound):
            client.images.remove(reference, noprune=True)
