"""zizmor (the security auditor for GitHub Actions, offline) and actionlint (with shellcheck
and pyflakes for `run:` scripts) report nothing over the shipped workflows and action.yml.
A finding is fixed, or suppressed where it stands with its reason above it (see
tests/shipped_workflows.py); .github/zizmor.yml only exempts the placeholder
`OWNER/selfcorrect@v0.1.0` from hash-pinning. The tools come from the `test` extra; a
missing one fails these tests, it never skips them. Each tool is also run over a broken
workflow, so a silent tool (wrong flags, no inputs read) cannot pass for a clean audit."""

from __future__ import annotations

import json
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from tests.shipped_workflows import (
    ROOT,
    ZIZMOR_CONFIG,
    audited_files,
    label,
    uses_lines,
    workflow_files,
)

BROKEN = """\
on: issue_comment
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          persist-credential: false
      - run: echo "${{ github.event.comment.body }}" $UNQUOTED
      - shell: python
        run: print(undefined_name)
"""


def _tool(name: str) -> str:
    """The tool beside this interpreter (the venv the `test` extra installed it into), else
    on PATH."""
    beside = Path(sysconfig.get_path("scripts")) / name
    found = str(beside) if beside.is_file() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: it comes with the test extra "
                    f"(pip install -e '.[test]', which scripts/bootstrap runs)", pytrace=False)
    return found


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=120,
                          check=False)


def _zizmor(*argv: str) -> subprocess.CompletedProcess[str]:
    # --offline: no GitHub API (none is reachable here, and the audit must not depend on one).
    return _run(_tool("zizmor"), "--offline", "--no-progress", "--color=never", *argv)


def _zizmor_findings(*argv: str) -> list[dict[str, Any]]:
    result = _zizmor("--format=json", *argv)
    assert result.returncode in (0, *range(10, 15)), result.stderr
    findings: list[dict[str, Any]] = json.loads(result.stdout)
    return [finding for finding in findings if not finding["ignored"]]


def _actionlint(*argv: str) -> subprocess.CompletedProcess[str]:
    return _run(_tool("actionlint"), "-no-color", "-oneline", "-shellcheck", _tool("shellcheck"),
                "-pyflakes", _tool("pyflakes"), *argv)


def test_zizmor_finds_nothing_in_the_shipped_workflows() -> None:
    files = [label(path) for path in audited_files()]
    result = _zizmor(f"--config={ZIZMOR_CONFIG}", *files)
    assert result.returncode == 0, result.stdout
    assert result.stdout.startswith("No findings to report."), result.stdout
    # Every file was read and audited, not passed over.
    for name in files:
        assert f"completed {name}" in result.stderr


def test_zizmor_flags_a_broken_workflow_with_this_repositorys_config(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(BROKEN)
    found = {finding["ident"] for finding in _zizmor_findings(f"--config={ZIZMOR_CONFIG}",
                                                              str(broken))}
    assert {"template-injection", "unpinned-uses", "dangerous-triggers",
            "excessive-permissions", "artipacked"} <= found


def test_only_the_placeholder_relies_on_the_config() -> None:
    """Without .github/zizmor.yml (as in a user's repository that copied an example)
    zizmor flags exactly the `OWNER/selfcorrect` lines: the user is to pin their copy."""
    files = [label(path) for path in workflow_files()]
    findings = _zizmor_findings("--no-config", *files)
    flagged = sorted(
        (location["symbolic"]["key"]["Local"]["verbatim_path"],
         location["concrete"]["location"]["start_point"]["row"] + 1)
        for finding in findings
        for location in finding["locations"]
        if finding["ident"] == "unpinned-uses" and location["symbolic"]["kind"] == "Primary")
    placeholders = sorted(
        (name, int(use.where.rsplit(":", 1)[1]))
        for name in files for use in uses_lines((ROOT / name).read_text(encoding="utf-8"), name)
        if use.action == "OWNER/selfcorrect")
    assert placeholders and flagged == placeholders
    assert {finding["ident"] for finding in findings} == {"unpinned-uses"}


def test_actionlint_finds_nothing_in_the_shipped_workflows() -> None:
    files = [label(path) for path in workflow_files()]
    result = _actionlint(*files)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_actionlint_flags_a_broken_workflow_with_its_script_checkers(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(BROKEN)
    result = _actionlint(str(broken))
    assert result.returncode == 1, result.stderr
    kinds = {line.rsplit("[", 1)[-1].rstrip("]") for line in result.stdout.splitlines()}
    assert {"action", "expression", "shellcheck", "pyflakes"} <= kinds, result.stdout
