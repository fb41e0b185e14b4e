"""The layering of docs/architecture.md as import-linter contracts ([tool.importlinter] in
pyproject.toml, house style 17): the tree keeps them, and a forbidden import added to a copy
of the package breaks the contract that names it, so the contracts are not vacuous."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports over the package under `root`, with the contracts of its pyproject.toml.
    PYTHONPATH first: the editable install would otherwise find the checkout's package."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo",
                           str(root / "pyproject.toml")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=60)


def test_the_tree_keeps_every_contract() -> None:
    found = lint_imports(ROOT)
    assert found.returncode == 0, found.stdout + found.stderr
    assert "kept, 0 broken." in found.stdout


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("github/events.py", "import selfcorrect_action.action",
     "The GitHub seam never imports the action"),
    ("loop/orchestrator.py", "from selfcorrect_action.runs import pipeline",
     "The floors: front ends over the run path over the loop over the seams"),
    ("sandbox/config.py", "from selfcorrect_action.repair import globs",
     "The host sandbox knows no task kind"),
    ("loop/execute.py", "import docker",
     "Only the Docker seam imports docker"),
    ("spec_files.py", "from selfcorrect_action import spec_checks",
     "The task spec over its checks over its file rules"),
])
def test_a_forbidden_import_breaks_its_contract(tmp_path: Path, module: str, line: str,
                                                 contract: str) -> None:
    shutil.copytree(ROOT / "selfcorrect_action", tmp_path / "selfcorrect_action",
                    ignore=shutil.ignore_patterns("__pycache__", "_data"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with (tmp_path / "selfcorrect_action" / module).open("a", encoding="utf-8") as source:
        source.write(f"\n{line}  # added by the test\n")

    found = lint_imports(tmp_path)

    importer = "selfcorrect_action." + module.removesuffix(".py").replace("/", ".")
    assert found.returncode != 0
    assert f"{contract} BROKEN" in found.stdout
    assert f"{importer} -> " in found.stdout  # the copy was linted, not the checkout
