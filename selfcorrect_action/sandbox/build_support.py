"""Shared by image.py and base_image.py: the progress callback and the one place where
docker (and requests) exceptions become ours."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import requests
from docker.errors import DockerException

from selfcorrect_action.errors import SandboxError, SandboxUnavailable
from selfcorrect_action.sandbox.engine import START_DOCKER_HINT

# Receives every line of progress: build and debootstrap output as it comes, and our own
# notes, which start with NOTE so a front end can tell them apart.
Progress = Callable[[str], None]
NOTE = "==> "


def ignore_progress(line: str) -> None:
    return None


@contextmanager
def engine_errors(doing: str) -> Iterator[None]:
    """The engine not answering becomes SandboxUnavailable with how to start it; any other
    docker or HTTP failure a SandboxError. Our own exceptions pass through."""
    try:
        yield
    except requests.exceptions.ConnectionError as exc:
        raise SandboxUnavailable(
            f"the Docker engine does not answer ({doing}): {first_line(exc)}",
            hint=START_DOCKER_HINT,
        ) from exc
    except (DockerException, requests.exceptions.RequestException) as exc:
        raise SandboxError(f"Docker failed while {doing}: {first_line(exc)}") from exc


def first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__
