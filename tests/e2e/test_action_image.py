"""The action's image (the repository-root Dockerfile), built from this working tree with the
host's CA bundle as the builder's extra CA, the way it would be built behind an intercepting
proxy. The image is built once per session and reused across sessions while the context is
unchanged (tests/e2e/action_image.py).

The context tests at the top need no engine; everything marked `docker` does.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

import docker
import pytest

from selfcorrect_action import __version__
from tests.e2e.action_image import (
    DEFAULT_EXTRA_CA,
    EXTRA_CA_NAME,
    REPO_ROOT,
    BuildResult,
    build_action_image,
    context_members,
    context_tar,
)

VENV = "/opt/selfcorrect/venv"
SITE_PACKAGES = f"{VENV}/lib/python3.11/site-packages"
ENTRYPOINT = [f"{VENV}/bin/selfcorrect", "action"]
# Measured: 455 MB (Debian's slim base 75 MB, python3 + ca-certificates 46 MB, the venv
# 334 MB, of which litellm alone is ~180 MB and its bytecode is kept on purpose). The ceiling
# is that plus ~15%: room for dependency updates within the pinned ranges, and a clear
# failure when a compiler, a pip cache or a second copy of the venv slips in.
SIZE_CEILING_BYTES = 525 * 1000 * 1000
PEM_BLOCK = re.compile(r"-----BEGIN CERTIFICATE-----\n(.*?)-----END CERTIFICATE-----", re.S)


# ---- the build context (no engine) --------------------------------------------------------


def test_the_context_holds_what_pip_needs_and_nothing_else() -> None:
    names = {member.name for member in context_members(extra_ca=None)}
    for needed in ("Dockerfile", "pyproject.toml", "README.md", "selfcorrect_action/cli.py",
                   "selfcorrect_action/resources.py", "sandbox/Dockerfile", "sandbox/runner.py",
                   ".ci/ca-certificates/README.md"):
        assert needed in names, needed
    assert any(name.startswith("templates/prompts/") for name in names)
    assert any(name.startswith("templates/reports/") for name in names)
    for left_out in ("tests/", ".git/", ".venv/", "out/", "benchmarks/", "examples/", "docs/",
                     "scripts/", ".mypy_cache/", ".pytest_cache/", ".ruff_cache/"):
        assert not [n for n in names if n.startswith(left_out)], left_out
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_the_extra_ca_goes_into_the_tar_only(tmp_path: Path) -> None:
    ca = tmp_path / "proxy.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIBxyz\n-----END CERTIFICATE-----\n")
    members = {member.name: member for member in context_members(extra_ca=ca)}
    assert members[EXTRA_CA_NAME].data == ca.read_bytes()
    assert not (REPO_ROOT / EXTRA_CA_NAME).exists()
    assert EXTRA_CA_NAME not in {member.name for member in context_members(extra_ca=None)}


def test_overrides_replace_files_of_the_context_and_only_those() -> None:
    members = {m.name: m for m in context_members(extra_ca=None,
                                                  overrides={"Dockerfile": b"FROM x\n"})}
    assert members["Dockerfile"].data == b"FROM x\n"
    assert members["pyproject.toml"].data == (REPO_ROOT / "pyproject.toml").read_bytes()
    with pytest.raises(ValueError, match="no such file"):
        context_members(extra_ca=None, overrides={"tests/nope": b""})


def test_the_context_tar_ignores_times_and_modes_but_not_content(tmp_path: Path) -> None:
    """The reuse label is the tar's sha256, so a touch, a checkout or a umask must not
    change the tar; an edit must."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "Dockerfile").write_text("FROM debian:bookworm-slim\n")
    (tmp_path / ".dockerignore").write_text("*\n!pkg\n**/__pycache__\n")
    source = tmp_path / "pkg" / "code.py"
    source.write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("left out\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    first = context_tar(tmp_path, extra_ca=None)

    os.utime(source, (1, 1))
    source.chmod(0o600)
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "code.cpython-311.pyc").write_bytes(b"\0")
    assert context_tar(tmp_path, extra_ca=None) == first

    source.chmod(source.stat().st_mode | stat.S_IXUSR)
    assert context_tar(tmp_path, extra_ca=None) != first
    source.chmod(0o644)
    source.write_text("x = 2\n")
    assert context_tar(tmp_path, extra_ca=None) != first


# ---- the image (real Docker) ---------------------------------------------------------------


@pytest.fixture(scope="session")
def action_image(docker_client: docker.DockerClient) -> BuildResult:
    """Built once per session, and not at all while an image of this context exists."""
    return build_action_image(docker_client)


def _run(client: docker.DockerClient, image: str, command: list[str], *,
         entrypoint: list[str] | None = None, timeout: int = 180,
         **options: Any) -> tuple[int, str, str]:
    """exit code, stdout, stderr of one container; the container is always removed."""
    options.setdefault("network_mode", "none")
    container = client.containers.create(
        image, command, entrypoint=entrypoint if entrypoint is not None else ["/bin/sh", "-c"],
        **options,
    )
    try:
        container.start()
        code = int(container.wait(timeout=timeout)["StatusCode"])
        out = container.logs(stdout=True, stderr=False).decode(errors="replace")
        err = container.logs(stdout=False, stderr=True).decode(errors="replace")
        return code, out, err
    finally:
        container.remove(force=True)


def _first_lines(pem_text: str) -> list[str]:
    """The first base64 line of every certificate in a PEM text."""
    return [body.split()[0] for body in PEM_BLOCK.findall(pem_text) if body.split()]


def _sh(client: docker.DockerClient, image: str, script: str) -> tuple[int, str, str]:
    return _run(client, image, [script])


@pytest.mark.docker
def test_the_image_runs_as_root(docker_client: docker.DockerClient,
                                action_image: BuildResult) -> None:
    config = docker_client.images.get(action_image.image_id).attrs["Config"]
    assert config.get("User", "") in ("", "root", "0")
    assert _sh(docker_client, action_image.tag, "id -u") == (0, "0\n", "")


@pytest.mark.docker
def test_the_console_script_answers(docker_client: docker.DockerClient,
                                    action_image: BuildResult) -> None:
    code, out, err = _run(docker_client, action_image.tag, ["--version"],
                          entrypoint=[f"{VENV}/bin/selfcorrect"])
    assert (code, out.strip()) == (0, f"selfcorrect {__version__}"), err


@pytest.mark.docker
def test_the_entrypoint_is_the_action_command(docker_client: docker.DockerClient,
                                              action_image: BuildResult) -> None:
    attrs = docker_client.images.get(action_image.image_id).attrs
    config = attrs["Config"]
    assert config["Entrypoint"] == ENTRYPOINT
    assert not config.get("Cmd")
    env = dict(item.split("=", 1) for item in config["Env"])
    assert env["PATH"].split(":")[0] == f"{VENV}/bin"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["PYTHONUNBUFFERED"] == "1"
    labels = config["Labels"]
    for key in ("title", "description", "source"):
        assert labels.get(f"org.opencontainers.image.{key}"), key


@pytest.mark.docker
def test_the_action_command_starts_as_the_runner_starts_it(
    docker_client: docker.DockerClient, action_image: BuildResult, tmp_path: Path
) -> None:
    """The runner's shape of `docker run`: the image's entrypoint, --workdir
    /github/workspace, the /github mounts, HOME=/github/home. `--help` keeps it from doing
    anything: this proves the entrypoint reaches the CLI's `action` subcommand."""
    mounts = {}
    for name in ("workspace", "home", "workflow", "file_commands"):
        (tmp_path / name).mkdir()
        mounts[str(tmp_path / name)] = {"bind": f"/github/{name}", "mode": "rw"}
    code, out, err = _run(
        docker_client, action_image.tag, ["--help"], entrypoint=ENTRYPOINT,
        working_dir="/github/workspace", volumes=mounts,
        environment={"HOME": "/github/home", "GITHUB_ACTIONS": "true", "CI": "true",
                     "GITHUB_WORKSPACE": "/github/workspace"},
    )
    if code == 2 and "invalid choice: 'action'" in err:
        pytest.xfail("the CLI has no `action` subcommand yet")
    assert code == 0, err
    assert "usage: selfcorrect action" in out


@pytest.mark.docker
def test_the_package_data_is_inside_the_venv(docker_client: docker.DockerClient,
                                             action_image: BuildResult) -> None:
    script = (
        "from selfcorrect_action.resources import sandbox_context, templates_dir\n"
        "print(sandbox_context())\n"
        "print(templates_dir())\n"
        "print((sandbox_context() / 'Dockerfile').is_file())\n"
        "print(' '.join(sorted(p.relative_to(templates_dir()).as_posix()\n"
        "                      for p in templates_dir().rglob('*.j2'))))\n"
    )
    code, out, err = _run(docker_client, action_image.tag, ["-c", script],
                          entrypoint=[f"{VENV}/bin/python"], working_dir="/")
    assert code == 0, err
    sandbox, templates, has_dockerfile, prompts = out.splitlines()
    assert sandbox == f"{SITE_PACKAGES}/selfcorrect_action/_data/sandbox"
    assert templates == f"{SITE_PACKAGES}/selfcorrect_action/_data/templates"
    assert has_dockerfile == "True"
    shipped = sorted(p.relative_to(REPO_ROOT / "templates").as_posix()
                     for p in (REPO_ROOT / "templates").rglob("*.j2"))
    assert prompts.split() == shipped  # every template, in folders too


# The import names of the optional extras (pyproject.toml), which the action's image leaves
# out: `selfcorrect mcp` and the other front ends that need them say how to install them.
# The extras' own packages, as our modules import them (langgraph.py takes RunnableConfig
# from langchain_core, which LangGraph is built on).
OPTIONAL_PACKAGES = frozenset({"mcp", "langgraph", "langchain_core", "mlflow"})


@pytest.mark.docker
def test_every_module_of_the_package_imports(docker_client: docker.DockerClient,
                                             action_image: BuildResult) -> None:
    """Nothing the code imports is missing from the image (pip and setuptools were
    removed from the venv; the final stage has no build tools). The modules of the optional
    extras (the MCP server's SDK, LangGraph, MLflow) are not in the action's image: theirs
    may fail, and only for the want of their own package."""
    script = (
        "import importlib, pkgutil, selfcorrect_action\n"
        f"optional = {sorted(OPTIONAL_PACKAGES)!r}\n"
        "for m in pkgutil.walk_packages(selfcorrect_action.__path__, 'selfcorrect_action.',\n"
        "                               onerror=lambda name: None):\n"
        "    if m.name.endswith('.__main__'):\n"
        "        continue\n"
        "    try:\n"
        "        importlib.import_module(m.name)\n"
        "    except ModuleNotFoundError as exc:\n"
        "        if (exc.name or '').split('.')[0] not in optional:\n"
        "            raise\n"
        "import litellm\n"
        "print('ok')\n"
    )
    code, out, err = _run(docker_client, action_image.tag, ["-c", script],
                          entrypoint=[f"{VENV}/bin/python"], working_dir="/")
    assert (code, out.strip()) == (0, "ok"), err[-3000:]


@pytest.mark.docker
def test_no_build_tools_in_the_final_image(docker_client: docker.DockerClient,
                                           action_image: BuildResult) -> None:
    tools = "gcc cc c++ g++ make ld pip pip3"
    _, out, _ = _sh(docker_client, action_image.tag,
                    f"for t in {tools}; do command -v $t; done; "
                    f"ls {SITE_PACKAGES} | grep -iE '^(pip|setuptools)'; true")
    assert out == "", f"found in the image:\n{out}"


@pytest.mark.docker
def test_no_pip_or_apt_caches(docker_client: docker.DockerClient,
                              action_image: BuildResult) -> None:
    _, out, _ = _sh(
        docker_client, action_image.tag,
        "find /root/.cache /var/lib/apt/lists /var/cache/apt -mindepth 1 2>/dev/null; "
        "find / -xdev \\( -name '*.whl' -o -path '*/pip/http*' \\) 2>/dev/null; true",
    )
    assert out == "", f"caches left in the image:\n{out}"


@pytest.mark.docker
def test_the_image_stays_under_its_size_ceiling(action_image: BuildResult) -> None:
    size_mb = action_image.size_bytes / 1e6
    assert action_image.size_bytes < SIZE_CEILING_BYTES, (
        f"{size_mb:.0f} MB, ceiling {SIZE_CEILING_BYTES / 1e6:.0f} MB"
    )


@pytest.mark.docker
def test_a_second_build_without_changes_is_cached(docker_client: docker.DockerClient,
                                                  action_image: BuildResult) -> None:
    lines: list[str] = []
    again = build_action_image(docker_client, progress=lines.append)
    if again.context_hash != action_image.context_hash:
        pytest.skip("the working tree changed during this session; no reuse to expect")
    assert again.cached, lines
    assert again.image_id == action_image.image_id
    assert again.seconds < 30
    assert not any(line.startswith("Step ") for line in lines), lines


@pytest.mark.docker
def test_the_extra_ca_stays_out_of_the_final_image(docker_client: docker.DockerClient,
                                                   action_image: BuildResult) -> None:
    """The host bundle went into the builder as .ci/ca-certificates/host-proxy.crt. Its
    certificates that are no public root (the proxy's own CAs, added to the host's trust
    store locally) must not be anywhere in the final image's files: not in its bundle, not
    in /usr/local/share/ca-certificates, nowhere. Each is looked for by the first base64
    line of its body, which holds its serial number.

    Public roots are those of Debian's ca-certificates package, in the image and on the host
    (their versions differ, and a root one of them dropped is still in botocore's and
    certifi's bundles inside the venv, rightly)."""
    if DEFAULT_EXTRA_CA is None:
        pytest.skip("the host has no CA bundle; the image was built without an extra CA")
    image = action_image.tag
    code, stock_text, err = _sh(docker_client, image,
                                "cat /usr/share/ca-certificates/mozilla/*.crt")
    assert code == 0, err
    stock = _first_lines(stock_text)
    public = set(stock)
    for path in Path("/usr/share/ca-certificates").rglob("*.crt"):
        public |= set(_first_lines(path.read_text(errors="replace")))
    foreign = [line for line in _first_lines(DEFAULT_EXTRA_CA.read_text()) if line not in public]
    if not foreign:
        pytest.skip("the host bundle holds public roots only: no proxy CA to look for")

    patterns = " ".join(f"-e {line}" for line in foreign)
    code, out, err = _sh(
        docker_client, image,
        f"grep -rlsF {patterns} --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev /",
    )
    assert (code, out) == (1, ""), f"the host's CA is in the image: {out or err}"

    code, out, _ = _sh(docker_client, image, "find /usr/local/share/ca-certificates -type f")
    assert out == ""

    # The search itself works: a stock root is found in the image's bundle.
    control = sorted(stock)[0]
    code, out, _ = _sh(docker_client, image, f"grep -lF -e {control} /etc/ssl/certs/*.crt")
    assert (code, out.strip()) == (0, "/etc/ssl/certs/ca-certificates.crt")


@pytest.mark.docker
def test_the_engine_socket_answers_from_inside_as_root(docker_client: docker.DockerClient,
                                                       action_image: BuildResult) -> None:
    """GitHub's runner mounts /var/run/docker.sock; the action, as root, talks to the host's
    engine through it (no DOCKER_HOST needed)."""
    socket_path = Path("/var/run/docker.sock")
    if not socket_path.is_socket():
        pytest.skip("the engine does not listen on /var/run/docker.sock here")
    code, out, err = _run(
        docker_client, action_image.tag,
        ["-c", "import docker; print(docker.from_env().version()['ApiVersion'])"],
        entrypoint=[f"{VENV}/bin/python"],
        volumes={str(socket_path): {"bind": "/var/run/docker.sock", "mode": "rw"}},
    )
    assert code == 0, err
    assert out.strip() == docker_client.version()["ApiVersion"]
