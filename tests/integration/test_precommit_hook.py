"""The pre-commit hooks end to end: pre-commit installs this checkout into a fresh
virtualenv (through pip and the hatchling build, as a user's pre-commit would) and runs
`selfcorrect validate` and `selfcorrect check` on throwaway repositories.

The checkout goes in as `pre-commit try-repo` takes it: committed and staged changes, plus
modified tracked files, but not untracked ones. try-repo itself installs into a store of its
own each time (35 to 48 s a hook); here both tests run `pre-commit run` with a config naming
that snapshot, over one store, so the module pays one installation.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 300
RunHook = Callable[..., "subprocess.CompletedProcess[str]"]

pytest.importorskip("pre_commit", reason="pre-commit is not installed (pip install pre-commit)")
if shutil.which("git") is None or not (PROJECT / ".git").exists():
    pytest.skip("needs git and a git checkout of selfcorrect", allow_module_level=True)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _out(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def snapshot(project: Path, scratch: Path) -> tuple[str, str]:
    """The repository and rev `pre-commit try-repo` would install (its _repo_ref): HEAD of
    a clean checkout, else a shadow clone whose one more commit holds the staged files and
    the modified tracked ones."""
    head = _out(project, "rev-parse", "HEAD")
    if not _out(project, "status", "--porcelain", "--untracked-files=no"):
        return str(project), head
    shadow = scratch / "shadow-repo"
    git(scratch, "clone", "-q", str(project), str(shadow))
    git(shadow, "checkout", "-q", head, "-b", "_pc_tmp")
    # Added from this checkout into the shadow's index and object store.
    env = {**os.environ, "GIT_INDEX_FILE": str(shadow / ".git" / "index"),
           "GIT_OBJECT_DIRECTORY": str(shadow / ".git" / "objects")}
    staged = _out(project, "diff", "--cached", "--name-only", "--diff-filter=d").splitlines()
    if staged:
        _out(project, "add", "--", *staged, env=env)
    _out(project, "add", "-u", env=env)
    git(shadow, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm",
        "uncommitted changes")
    return str(shadow), _out(shadow, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def run_hook(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
             ) -> RunHook:
    """`pre-commit run` of one of this checkout's hooks in a repository, as try-repo runs
    it (a config outside the repository naming the snapshot), over one store for the
    module: the first call installs the hook's environment, the next reuses it."""
    scratch = tmp_path_factory.mktemp("pre-commit")
    repo, rev = snapshot(PROJECT, scratch)
    # pytest's cache dir (.pytest_cache/, git-ignored) keeps pip's downloads between runs
    # without touching the real home.
    cache = getattr(pytestconfig, "cache", None)  # absent under -p no:cacheprovider
    base = {"PRE_COMMIT_HOME": str(scratch / "pre-commit-home"),
            "PIP_CACHE_DIR": str(cache.mkdir("pip") if cache else scratch / "pip")}

    def run(hook: str, cwd: Path, *args: str, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
        config = scratch / f"{hook}.yaml"
        config.write_text(f"repos:\n- repo: {repo}\n  rev: {rev}\n  hooks:\n"
                          f"  - id: {hook}\n")
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", hook, "--config", str(config),
             "--color", "never", *args],
            cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S,
            env={**os.environ, **base, **(env or {})})

    return run


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


def test_the_hook_fails_a_bad_spec_with_its_location(user_repo: Path, run_hook: RunHook
                                                      ) -> None:
    result = run_hook("selfcorrect-validate", user_repo, "--all-files")
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
    tmp_path: Path, run_hook: RunHook
) -> None:
    """selfcorrect-check as pre-commit.ci runs it, without a Docker engine (DOCKER_HOST
    names a socket nothing listens on): the spec whose input a commit changed is named as
    changed, not re-verified, and the hook passes."""
    from tests.check_repo import SPEC, make_repo, record_as_is, write

    repo = make_repo(tmp_path / "user-repo")
    record_as_is(repo)
    write(repo, "data/sales.csv", "amount\n1\n")
    git(repo, "add", "-A")
    result = run_hook("selfcorrect-check", repo, "--verbose",
                      env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    output = result.stdout + result.stderr

    assert result.returncode == 0, output
    assert (f"{SPEC}  changed         input data/sales.csv (changed); not re-verified: "
            "no Docker engine") in output
    assert "needs Docker" in output
