"""Shared fixtures. Docker-backed fixtures skip locally without an engine but fail under
CI=true: a CI run that silently skipped the sandbox suites would prove nothing."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

from selfcorrect_action.choices import Runtime
from selfcorrect_action.errors import SandboxUnavailable

if TYPE_CHECKING:
    import docker

    from selfcorrect_action.sandbox.docker_engine import DockerEngine


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that reaches a Docker fixture, however indirectly (`sandbox`, `runtime`,
    `sandbox_image`, a module's own fixture over `docker_client`), is marked `docker`, so
    `-m "not docker"` is the tier that needs no engine and `-m docker` the one that does
    (scripts/test runs them apart, the coverage gate on the first). Most suites use these
    fixtures without the marker; tryfirst so the marks exist before `-m` deselects."""
    for item in items:
        if "docker_engine" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.docker)


def _docker_or_fail(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_engine() -> DockerEngine:
    """The engine as selfcorrect sees it (the Engine interface over the docker SDK)."""
    from selfcorrect_action.sandbox import engine

    try:
        return engine.connect()
    except SandboxUnavailable as exc:
        _docker_or_fail(f"no Docker engine answers ({exc.message})")
        raise


@pytest.fixture(scope="session")
def docker_client(docker_engine: DockerEngine) -> docker.DockerClient:
    """The raw SDK client, for tests that inspect the engine's own state."""
    return docker_engine.client


@pytest.fixture(scope="session")
def sandbox_image(docker_engine: DockerEngine) -> str:
    from selfcorrect_action.sandbox.image import ensure_image

    return ensure_image(docker_engine)


@pytest.fixture(params=["runc", "runsc"])
def runtime(request: pytest.FixtureRequest, docker_client) -> Runtime:
    name: Runtime = request.param
    if name not in docker_client.info().get("Runtimes", {}):
        _docker_or_fail(f"the Docker engine has no {name} runtime")
    return name


@pytest.fixture
def sandbox(docker_engine: DockerEngine, docker_client: docker.DockerClient,
            sandbox_image: str) -> Iterator[object]:
    """A Sandbox without a pool. On the way out it checks that none of its containers is
    left behind, running or not."""
    from selfcorrect_action.sandbox.client import Sandbox
    from selfcorrect_action.sandbox.config import LABEL_SESSION

    box = Sandbox(docker_engine, sandbox_image)
    with box:
        yield box
    leftovers = docker_client.containers.list(
        all=True, filters={"label": f"{LABEL_SESSION}={box.session}"}, ignore_removed=True)
    assert leftovers == [], f"containers left behind: {[c.short_id for c in leftovers]}"


@pytest.fixture(autouse=True)
def _no_real_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Tests never read or write the real home directory (nor the data folder the run
    history defaults to, which XDG_DATA_HOME or SELFCORRECT_HISTORY could move out of it),
    nor a tracking store MLflow's variables name."""
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    for name in ("XDG_DATA_HOME", "SELFCORRECT_HISTORY", "MLFLOW_TRACKING_URI",
                 "MLFLOW_EXPERIMENT_NAME", "MLFLOW_EXPERIMENT_ID"):
        monkeypatch.delenv(name, raising=False)


SECCOMP_PACKAGES = "/usr/lib/python3/dist-packages"  # Debian's python3-seccomp


@pytest.fixture(scope="session")
def seccomp() -> ModuleType:
    """libseccomp's bindings, from Debian's python3-seccomp (.ci/docker-up installs it):
    the runner builds its filters with them. Missing, these tests skip, but fail in CI."""
    added = SECCOMP_PACKAGES not in sys.path
    if added:
        sys.path.append(SECCOMP_PACKAGES)
    try:
        import seccomp as module
    except ImportError:
        reason = "python3-seccomp is not installed (`apt-get install python3-seccomp`)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {reason}", pytrace=False)
        pytest.skip(reason)
    finally:
        if added:
            sys.path.remove(SECCOMP_PACKAGES)
    return module


def exported(rules: object) -> bytes:
    """The classic-BPF program a seccomp.SyscallFilter would load, as bytes."""
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)  # type: ignore[attr-defined]
        out.seek(0)
        return out.read()
