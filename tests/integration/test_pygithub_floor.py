"""The oldest PyGithub that pyproject.toml admits, under the GitHub-side tests.

pyproject.toml said `PyGithub>=2.4` while the code used `Github(lazy=...)`, which 2.6
brought (issue 16, item 6): a user whose resolver picked 2.4 got a TypeError at the first
GitHub call. Here the floor release (pip-installed once into the venv, under `floors/`)
shadows the installed one (and its dependencies) on sys.path, and tests/unit/github (the
forge against the GitHub stand-in, every method through the real client) runs against it
in a child pytest. It found that 2.6's get_repo asked GitHub at construction (outside the
retrying, translating wrapper) and that get_git_ref asked at once.

About 15 s, plus one download of PyGithub the first time (PyPI must answer then).
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 600


def pygithub_floor() -> str:
    """The lowest version the dependency admits, as an exact release ("2.6" → "2.6.0")."""
    dependencies = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"][
        "dependencies"]
    (spec,) = [d for d in dependencies if re.match(r"PyGithub\b", d, re.IGNORECASE)]
    found = re.search(r">=\s*([0-9][0-9.]*)", spec)
    assert found, f"the PyGithub dependency has no floor: {spec!r}"
    parts = found.group(1).split(".")
    return ".".join([*parts, "0", "0"][:3])


def floor_install(version: str) -> Path:
    """PyGithub `version` with what it asks for (2.6 still needs Deprecated), installed
    once per venv; a lock keeps parallel sessions from installing into one folder at once."""
    target = Path(sys.prefix) / "floors" / f"PyGithub-{version}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / "github" / "__init__.py").is_file():
            done = subprocess.run(
                [sys.executable, "-m", "pip", "install", "-q", "--target",
                 str(target), f"PyGithub=={version}"],
                capture_output=True, text=True, timeout=TIMEOUT_S)
            assert done.returncode == 0, (
                f"could not install PyGithub=={version} (PyPI must answer once):\n"
                f"{done.stdout}{done.stderr}")
    return target


def test_the_github_side_passes_on_the_oldest_pygithub_allowed() -> None:
    version = pygithub_floor()
    target = floor_install(version)
    environ = {name: value for name, value in os.environ.items()
               if not name.startswith(("COV_CORE_", "COVERAGE_", "PYTEST_"))}
    environ["PYTHONPATH"] = os.pathsep.join([str(target), str(PROJECT)])
    shown = subprocess.run(
        [sys.executable, "-c", "import github, importlib.metadata as m; "
         "print(github.__file__, m.version('PyGithub'))"],
        env=environ, capture_output=True, text=True, check=True, cwd=PROJECT)
    assert shown.stdout.startswith(str(target)), shown.stdout  # the floor, not the newest
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:cov",
         "tests/unit/github"], env=environ, capture_output=True, text=True, cwd=PROJECT,
        timeout=TIMEOUT_S)
    assert done.returncode == 0, (
        f"tests/unit/github fails on PyGithub {version}, the floor in pyproject.toml:\n"
        f"{done.stdout[-6000:]}{done.stderr[-2000:]}")
