"""A repair's derived sandbox image against a real engine: the requirements installed at
build time, reused while they and the base are unchanged, rebuilt when they change, and
runs in it still without network."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import pytest

from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.derived_image import BASE_LABEL, ensure_derived
from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.image import HASH_LABEL
from selfcorrect_action.sandbox.models import ExecutionRequest

PROBE = """\
import socket, toolz
print("toolz", toolz.__version__)
try:
    socket.create_connection(("pypi.org", 443), timeout=3)
    print("network: open")
except OSError as exc:
    print("network: refused", type(exc).__name__)
"""


class CountingEngine:
    """The real engine, counting builds: whether a call built or reused is observed at the
    seam rather than guessed from progress text."""

    def __init__(self, engine: DockerEngine) -> None:
        self._engine = engine
        self.builds: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def build_image(self, context: IO[bytes], *, tag: str, labels: Mapping[str, str],
                    nocache: bool) -> Iterator[dict[str, Any]]:
        self.builds.append(tag)
        return self._engine.build_image(context, tag=tag, labels=labels, nocache=nocache)


@pytest.fixture
def counting(docker_engine: DockerEngine) -> Iterator[CountingEngine]:
    engine = CountingEngine(docker_engine)
    yield engine
    for tag in set(engine.builds):  # each test builds images of its own (a nonce): gone after
        found = docker_engine.image(tag)
        if found is not None:
            docker_engine.remove_image(found.id)


def test_requirements_are_built_in_once_reused_and_rebuilt_when_changed(
        counting: CountingEngine, docker_engine: DockerEngine, sandbox_image: str,
        tmp_path: Path) -> None:
    # A nonce in a comment makes this test's requirements its own: a first call must build.
    nonce = f"# {uuid.uuid4().hex}\n"
    first = ensure_derived(counting, sandbox_image, nonce + "toolz==0.12.1\n")
    again = ensure_derived(counting, sandbox_image, nonce + "toolz==0.12.1\n")
    changed = ensure_derived(counting, sandbox_image, nonce + "toolz==0.12.0\n")

    assert first == again != changed
    assert counting.builds == [first, changed]
    labels = docker_engine.image(first).labels  # type: ignore[union-attr]
    assert labels[BASE_LABEL] == sandbox_image and labels[HASH_LABEL]

    with Sandbox(docker_engine, changed) as box:
        result = box.run(ExecutionRequest(argv=["python3", "-c", PROBE]), tmp_path / "run")
    assert result.exit_code == 0, result.stderr.text
    assert "toolz 0.12.0" in result.stdout.text
    assert "network: refused" in result.stdout.text
