"""The sandbox image against a real engine: built, labelled, reused, rebuilt when stale, and
usable under the restrictions the sandbox runs it with."""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest
from docker.errors import ImageNotFound

from selfcorrect_action import __version__
from selfcorrect_action.choices import Runtime
from selfcorrect_action.resources import sandbox_context
from selfcorrect_action.sandbox.base_image import import_rootfs
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.image import (
    HASH_LABEL,
    VERSION_LABEL,
    context_hash,
    ensure_image,
    image_status,
    image_tag,
)
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile
from selfcorrect_action.sandbox.progress import NOTE

pytestmark = pytest.mark.docker
# As the sandbox mounts them (config._tmpfs): owned by the sandbox user, nothing executable.
TMPFS = "rw,nosuid,nodev,noexec,size=64m,uid=10001,gid=10001,mode=0700"
LIBRARIES = [
    "numpy", "pandas", "matplotlib", "PIL", "scipy", "requests", "bs4", "lxml", "pytest",
    "yaml", "openpyxl", "tabulate", "dateutil", "sklearn",
]  # fmt: skip


def _python(
    client: docker.DockerClient, image: str, code: str, *, runtime: Runtime = "runc", **extra: Any
) -> str:
    """Runs python3 -c CODE as locked down as the sandbox runs scripts; stdout and stderr."""
    output = client.containers.run(
        image, ["python3", "-c", code], remove=True, read_only=True,
        tmpfs={"/work": TMPFS, "/tmp": TMPFS}, network_mode="none", cap_drop=["ALL"],
        security_opt=["no-new-privileges:true"], runtime=runtime, init=True, stdout=True,
        stderr=True, **extra,
    )  # fmt: skip
    return bytes(output).decode()


@pytest.fixture
def scratch_tag(docker_client: docker.DockerClient) -> Iterator[str]:
    tag = f"selfcorrect-sandbox:test-{uuid.uuid4().hex[:8]}"
    yield tag
    with contextlib.suppress(ImageNotFound):
        docker_client.images.remove(tag, force=True)


def test_image_is_tagged_and_labelled(
    docker_client: docker.DockerClient, sandbox_image: str
) -> None:
    assert sandbox_image == image_tag(wanted_hash=context_hash(sandbox_context()))
    image = docker_client.images.get(sandbox_image)
    assert image.labels[HASH_LABEL] == context_hash(sandbox_context())
    assert image.labels[VERSION_LABEL] == __version__
    assert image.labels["org.selfcorrect.role"] == "sandbox"
    config = image.attrs["Config"]
    assert config["User"] == "10001:10001" and config["WorkingDir"] == "/work"
    env = dict(item.split("=", 1) for item in config["Env"])
    assert env["HOME"] == "/work" and env["LANG"] == "C.UTF-8" and env["MPLBACKEND"] == "Agg"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and env["PYTHONUNBUFFERED"] == "1"
    # Caches on the /tmp tmpfs, not in the work dir where artifacts are collected.
    assert env["MPLCONFIGDIR"].startswith("/tmp/") and env["XDG_CACHE_HOME"].startswith("/tmp/")


def test_a_current_image_is_reused_at_once(
    docker_engine: DockerEngine, docker_client: docker.DockerClient, sandbox_image: str
) -> None:
    notes: list[str] = []
    started = time.monotonic()
    assert ensure_image(docker_engine, progress=notes.append) == sandbox_image
    assert time.monotonic() - started < 0.5
    assert len(notes) == 1 and notes[0].startswith(NOTE + "reusing")


def test_a_changed_context_is_stale_and_rebuilt(
    docker_engine: DockerEngine, docker_client: docker.DockerClient, sandbox_image: str,
    scratch_tag: str, tmp_path: Path,
) -> None:
    context = Path(shutil.copytree(sandbox_context(), tmp_path / "sandbox"))
    assert not image_status(docker_engine, context=context, tag=sandbox_image).build
    (context / "runner.py").touch()
    assert not image_status(docker_engine, context=context, tag=sandbox_image).build

    with (context / "runner.py").open("a") as runner:
        runner.write("# changed\n")
    assert image_status(docker_engine, context=context, tag=sandbox_image).build
    # Only the last layers differ, so the rebuild comes from the layer cache in seconds.
    ensure_image(docker_engine, context=context, tag=scratch_tag)
    first = docker_client.images.get(scratch_tag)
    assert first.labels[HASH_LABEL] == context_hash(context)

    with (context / "runner.py").open("a") as runner:
        runner.write("# changed again\n")
    ensure_image(docker_engine, context=context, tag=scratch_tag)
    assert docker_client.images.get(scratch_tag).id != first.id
    with pytest.raises(ImageNotFound):  # the replaced build does not linger on disk
        docker_client.images.get(first.id)


def test_runs_as_the_sandbox_user(
    docker_client: docker.DockerClient, sandbox_image: str, runtime: Runtime
) -> None:
    code = "import os; print(os.getuid(), os.getgid(), os.getcwd(), os.environ['HOME'])"
    out = _python(docker_client, sandbox_image, code, runtime=runtime)
    assert out.split() == ["10001", "10001", "/work", "/work"]


def test_libraries_work_on_a_read_only_root(
    docker_client: docker.DockerClient, sandbox_image: str, runtime: Runtime
) -> None:
    code = f"""
import importlib, os, subprocess, sys
for name in {LIBRARIES!r}:
    importlib.import_module(name)
import matplotlib.pyplot as plt
plt.plot([1, 2, 3]); plt.title("naïve ünïcode"); plt.savefig("plot.png")
open("test_ok.py", "w").write("def test_ok():\\n    assert True\\n")
subprocess.run([sys.executable, "-m", "pytest", "-q", "test_ok.py"], check=True,
               stdout=subprocess.DEVNULL)
print(sorted(os.listdir(".")))
"""
    out = _python(docker_client, sandbox_image, code, runtime=runtime)
    # Importing and testing leave nothing behind in the work dir: no bytecode, no caches.
    assert out.strip().splitlines()[-1] == "['plot.png', 'test_ok.py']"


def test_matplotlib_uses_the_baked_font_cache(
    sandbox: Sandbox, runtime: Runtime, tmp_path: Path
) -> None:
    """The runner seeds the empty tmpfs cache dir before the script starts."""
    code = (
        b"import logging, time; logging.basicConfig(level=logging.DEBUG); t = time.monotonic()\n"
        b"import matplotlib.pyplot\n"
        b"print(f'import took {time.monotonic() - t:.2f} s')\n"
    )
    result = sandbox.run(
        ExecutionRequest(argv=["python3", "s.py"], files=[InputFile(path="s.py", data=code)],
                         runtime=runtime),
        tmp_path / "artifacts",
    )
    out = result.stderr.text
    assert result.exit_code == 0, out
    assert "Using fontManager instance from /tmp/matplotlib/fontlist-v" in out, out
    assert "generated new fontManager" not in out


def test_no_setuid_or_setgid_files(docker_client: docker.DockerClient, sandbox_image: str) -> None:
    # As root, so that no directory is skipped for lack of permission.
    out = docker_client.containers.run(
        sandbox_image, ["find", "/", "-xdev", "-perm", "/6000", "-type", "f"], user="0",
        remove=True, network_mode="none",
    )  # fmt: skip
    assert bytes(out).decode().split() == []


def test_a_root_filesystem_streams_into_the_engine(
    docker_engine: DockerEngine, docker_client: docker.DockerClient, scratch_tag: str,
    tmp_path: Path,
) -> None:
    """The import half of making the base (the debootstrap half needs a minute and root)."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "os-release").write_text("ID=test\n")
    import_rootfs(docker_engine, tmp_path, scratch_tag)
    image = docker_client.images.get(scratch_tag)
    assert image.attrs["Config"]["Cmd"] == ["bash"]
    assert image.attrs["Size"] > 0


def test_parallel_runs_build_a_stale_image_once(
    docker_engine: DockerEngine, docker_client: docker.DockerClient, sandbox_image: str,
    scratch_tag: str, tmp_path: Path,
) -> None:
    context = Path(shutil.copytree(sandbox_context(), tmp_path / "sandbox"))
    with (context / "runner.py").open("a") as runner:
        runner.write("# built by one of two parallel runs\n")
    logs: list[list[str]] = [[], []]
    threads = [
        threading.Thread(target=ensure_image, args=(docker_engine,),
                         kwargs={"context": context, "tag": scratch_tag,
                                 "progress": logs[i].append})
        for i in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    built = [log for log in logs if any(line == NOTE + f"built {scratch_tag}" for line in log)]
    assert len(built) == 1, logs
    assert docker_client.images.get(scratch_tag).labels[HASH_LABEL] == context_hash(context)
