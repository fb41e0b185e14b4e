"""Every shipped workflow that runs the action uploads the crash log a bug leaves
(crash.py: .selfcorrect/runs/crash-*.log in the workspace), in a step that runs when the
action's step has failed: the job's log asks the user to attach that file to an issue, and
on a hosted runner an artifact is the only way to get it. The check also runs over a
workflow that uploads nothing, so it cannot pass by finding nothing."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from selfcorrect_action.crash import crash_log_path
from tests.shipped_workflows import PLACEHOLDER_ACTION, ROOT, label, workflow_files

UPLOAD = "actions/upload-artifact@"


def crash_file(workspace: Path = ROOT) -> str:
    return crash_log_path({"GITHUB_WORKSPACE": str(workspace)}).relative_to(workspace).as_posix()


def covers(entry: str, file: str) -> bool:
    """Whether one line of upload-artifact's `path` takes `file` (a workspace path)."""
    entry = entry.strip().removeprefix("./")
    if not entry or entry.startswith("!"):
        return False
    return fnmatchcase(file, entry) or file.startswith(entry.rstrip("/") + "/")


def _runs_after_a_failure(step: dict[str, Any]) -> bool:
    condition = str(step.get("if", ""))
    return "always()" in condition or "failure()" in condition


def crash_upload_problems(text: str, where: str) -> list[str]:
    workflow = YAML(typ="safe").load(text)
    problems, file = [], crash_file()
    for name, job in (workflow.get("jobs") or {}).items():
        steps = job.get("steps") or []
        for index, step in enumerate(steps):
            if not str(step.get("uses", "")).startswith(PLACEHOLDER_ACTION):
                continue
            uploads = [later for later in steps[index + 1:]
                       if str(later.get("uses", "")).startswith(UPLOAD)
                       and _runs_after_a_failure(later)
                       and any(covers(entry, file)
                               for entry in str((later.get("with") or {}).get("path", ""))
                               .splitlines())]
            if not uploads:
                problems.append(f"{where}: job {name} runs the action but no step after it "
                                f"uploads {file} when it fails")
    return problems


def _shipped_with_the_action() -> list[Path]:
    return [path for path in workflow_files()
            if PLACEHOLDER_ACTION in path.read_text(encoding="utf-8")]


def test_workflows_running_the_action_are_found() -> None:
    names = {path.name for path in _shipped_with_the_action()}
    assert {"selfcorrect-issues.yml", "selfcorrect-split.yml", "selfcorrect-dispatch.yml",
            "selfcorrect-matrix.yml", "selfcorrect-fix.yml"} <= names


@pytest.mark.parametrize("path", _shipped_with_the_action(), ids=lambda path: label(path))
def test_a_workflow_running_the_action_uploads_its_crash_log(path: Path) -> None:
    assert crash_upload_problems(path.read_text(encoding="utf-8"), label(path)) == []


STEPS = """on: push
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - uses: OWNER/selfcorrect@v0.1.0
      - uses: actions/upload-artifact@v7
{upload}"""


@pytest.mark.parametrize(("upload", "found"), [
    ("        if: always()\n        with: {path: .selfcorrect/runs/}\n", True),
    ("        if: failure()\n        with:\n          path: |\n            out/\n"
     "            .selfcorrect/runs/crash-*.log\n", True),
    ("        with: {path: .selfcorrect/runs/}\n", False),  # skipped once the action failed
    ("        if: always()\n        with: {path: .selfcorrect/crash/}\n", False),
    ("        if: always()\n        with: {path: selfcorrect-plan/}\n", False),
])
def test_the_check_tells_an_upload_that_keeps_the_crash_log(upload: str, found: bool) -> None:
    assert (crash_upload_problems(STEPS.format(upload=upload), "w.yml") == []) is found
