"""Reading the repository a repair runs against: git's list of files when there is one (so
ignored files stay home), a walk otherwise, links never followed, and a size limit stated."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.repair import repository
from selfcorrect_action.repair.repository import read_snapshot


def _files(root: Path, names: dict[str, str]) -> None:
    for name, text in names.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_in_a_git_repository_ignored_files_and_our_own_folder_stay_out(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    _files(tmp_path, {
        "pkg/core.py": "x = 1\n", "tests/test_core.py": "def test(): pass\n",
        ".gitignore": "venv/\n*.log\n", "venv/lib/site.py": "junk\n", "run.log": "junk\n",
        ".selfcorrect/tasks/fix.yml": "prompt: x\n", "pkg/__pycache__/core.cpython-311.pyc": "",
        "notes.txt": "untracked but not ignored\n",
    })
    _git(tmp_path, "add", "pkg/core.py", "tests/test_core.py", ".gitignore")

    snapshot = read_snapshot(tmp_path)

    assert snapshot.listed_by == "git"
    assert sorted(snapshot.files) == [".gitignore", "notes.txt", "pkg/core.py",
                                      "tests/test_core.py"]
    assert snapshot.text("pkg/core.py") == "x = 1\n"


def test_without_git_the_tree_is_walked_without_the_usual_junk(tmp_path: Path) -> None:
    _files(tmp_path, {"pkg/core.py": "x\n", ".venv/x.py": "", "build/lib/y.py": "",
                      "pkg.egg-info/PKG-INFO": "", "node_modules/z.js": "", "a/b/c.txt": "c"})

    snapshot = read_snapshot(tmp_path)

    assert snapshot.listed_by == "walk"
    assert sorted(snapshot.files) == ["a/b/c.txt", "pkg/core.py"]


def test_symbolic_links_are_left_out_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.write_text("host secret")
    root = tmp_path / "repo"
    _files(root, {"pkg/core.py": "x\n"})
    os.symlink(outside, root / "pkg" / "leak.txt")

    snapshot = read_snapshot(root)

    assert "pkg/leak.txt" not in snapshot.files
    assert snapshot.left_out == ["pkg/leak.txt"]


def test_a_repository_over_the_limits_is_refused_with_its_size_and_the_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _files(tmp_path, {f"f{i}.py": "x = 1\n" for i in range(5)})
    monkeypatch.setattr(repository, "MAX_REPO_FILES", 4)
    with pytest.raises(UsageError) as caught:
        read_snapshot(tmp_path)
    assert "holds 5 files" in caught.value.message and "at most 4 files" in caught.value.message

    monkeypatch.setattr(repository, "MAX_REPO_FILES", 100)
    monkeypatch.setattr(repository, "MAX_REPO_BYTES", 20)
    with pytest.raises(UsageError) as caught:
        read_snapshot(tmp_path)
    assert "more than 20 bytes" in caught.value.message
    assert caught.value.hint is not None and ".gitignore" in caught.value.hint
