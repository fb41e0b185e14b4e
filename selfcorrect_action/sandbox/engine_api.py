"""What selfcorrect asks of a container engine, as a small interface: the sandbox client,
the warm pool, the lifecycle and the image build depend on this, never on the docker SDK.
`docker_engine.DockerEngine` is the real one; the unit tests use a fake.

Every method raises only our own errors (SandboxUnavailable, SandboxError): the adapter
translates the SDK's exceptions, in one place."""

from __future__ import annotations

import socket
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Protocol


@dataclass(frozen=True)
class StartedContainer:
    """A created, attached and started container: its id and the attach socket (the
    runner's stdin, stdout and stderr)."""

    id: str
    socket: socket.socket


@dataclass(frozen=True)
class ContainerInfo:
    id: str
    status: str  # "created", "running", "exited"...
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ImageInfo:
    id: str
    labels: Mapping[str, str] = field(default_factory=dict)
    tags: tuple[str, ...] = ()  # repository:tag names; filled by images_labelled


class Engine(Protocol):
    def runtimes(self) -> dict[str, list[str]]:
        """Each registered runtime with its runtimeArgs."""
        ...

    def start_container(self, config: Mapping[str, Any]) -> StartedContainer:
        """Create (docker `containers.create` keywords), attach, start. A failed start
        removes what was created."""
        ...

    def kill(self, container_id: str) -> None:
        """SIGKILL it; quietly does nothing if it is gone."""
        ...

    def remove(self, container_id: str) -> None:
        """Force-remove it; quietly does nothing if it is gone."""
        ...

    def stopped_state(self, container_id: str, *, wait_s: float) -> dict[str, Any]:
        """Docker's State (OOMKilled, ExitCode...) once it has stopped; {} if unknown."""
        ...

    def labelled(self, label: str) -> list[ContainerInfo]:
        """Every container carrying `label`, running or not; [] if the engine cannot say."""
        ...

    def image(self, tag: str) -> ImageInfo | None:
        ...

    def remove_image(self, image_id: str) -> None:
        """Quietly keeps an image that is still in use. Given a repository:tag of an image
        with other names, it removes that name only."""
        ...

    def images_labelled(self, label: str) -> list[ImageInfo]:
        """Every image carrying `label`, with its tags."""
        ...

    def build_image(self, context: IO[bytes], *, tag: str, labels: Mapping[str, str],
                    nocache: bool) -> Iterator[dict[str, Any]]:
        """The build's decoded JSON messages as they come."""
        ...

    def import_image(self, rootfs_tar: IO[bytes], *, repository: str, tag: str) -> str:
        """Import a root filesystem tar as repository:tag; the engine's reply, as text."""
        ...

    def pull(self, repository: str, tag: str) -> bool:
        """True if the pull worked; any failure just means it did not."""
        ...

    def pull_image(self, repository: str, tag: str) -> None:
        """Pull repository:tag, or repository@tag when tag is a digest (sha256:...); raises
        ImagePullFailed with the registry's reason when the engine cannot."""
        ...
