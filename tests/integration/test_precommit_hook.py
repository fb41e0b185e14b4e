"""The pre-commit hook end to end: `pre-commit try-repo` installs this checkout into a fresh
virtualenv (through pip and the hatchling build, as a user's pre-commit would) and runs
`selfcorrect validate` on the specs of a throwaway repository.

About 60 s with a cold pip cache, 35 s once pytest's cache dir holds pip's downloads.
try-repo takes committed and staged changes of this checkout, plus modified tracked files,
but not untracked ones.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 300

pytest.importorskip("pre_commit", reason="pre-commit is not installed (pip install pre-commit)")
if shutil.which("git") is None or not (PROJECT / ".git").exists():
    pytest.skip("needs git and a git checkout of selfcorrect", allow_module_level=True)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "user-repo"
    tasks = repo / ".selfcorrect" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "good.yml").write_text("prompt: Write hello.txt containing hi\n")
    (tasks / "bad.yml").write_text("prompt: Chart the sales\nkind: scrpt\n")
    (repo / "other").mkdir()
    (repo / "other" / "unrelated.yml").write_text("not: [a, spec\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "specs")
    return repo


def test_the_hook_fails_a_bad_spec_with_its_location(
    user_repo: Path, pytestconfig: pytest.Config
) -> None:
    # pytest's cache dir (.pytest_cache/, git-ignored) keeps pip's downloads between runs
    # without touching the real home.
    cache = getattr(pytestconfig, "cache", None)  # absent under -p no:cacheprovider
    pip_cache = cache.mkdir("pip") if cache else user_repo.parent
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(user_repo.parent / "pre-commit-home"),
        "PIP_CACHE_DIR": str(pip_cache),
    }
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(PROJECT),
         "selfcorrect-validate", "--all-files", "--color", "never"],
        cwd=user_repo, capture_output=True, text=True, timeout=TIMEOUT_S, env=env,
    )
    output = result.stdout + result.stderr

    assert result.returncode == 1, output
    assert (
        ".selfcorrect/tasks/bad.yml:2:1: kind: Input should be 'script', 'function' or 'repair'; "
        "got 'scrpt'\n  hint: use one of the listed values"
    ) in output
    # Only the task specs were passed in: other/unrelated.yml is not a spec.
    assert "2 files checked, 1 with problems" in output
    assert "unrelated.yml" not in output


def test_the_check_hook_compares_digests_where_there_is_no_docker(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    """selfcorrect-check as pre-commit.ci runs it, without a Docker engine (DOCKER_HOST
    names a socket nothing listens on): the spec whose input a commit changed is named as
    changed, not re-verified, and the hook passes."""
    from tests.check_repo import SPEC, make_repo, record_as_is, write

    repo = make_repo(tmp_path / "user-repo")
    record_as_is(repo)
    write(repo, "data/sales.csv", "amount\n1\n")
    git(repo, "add", "-A")
    cache = getattr(pytestconfig, "cache", None)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "PIP_CACHE_DIR": str(cache.mkdir("pip") if cache else tmp_path),
           "DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(PROJECT), "selfcorrect-check",
         "--color", "never", "--verbose"],
        cwd=repo, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    output = result.stdout + result.stderr

    assert result.returncode == 0, output
    assert (f"{SPEC}  changed         input data/sales.csv (changed); not re-verified: "
            "no Docker engine") in output
    assert "needs Docker" in output
